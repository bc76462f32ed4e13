package boundedread

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLimitBound(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "five")
	require.NoError(t, os.WriteFile(path, []byte("12345"), 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := Limit(f, path, 5, "testBound")
	require.NoError(t, err)
	raw, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "12345", string(raw))

	_, err = Limit(f, path, 4, "testBound")
	require.ErrorIs(t, err, ErrTooLarge)
	require.Equal(t, "file above its size bound: "+path+" is 5 bytes, above testBound (4 bytes)", err.Error())

	// A device's size is not known: the read fails past the bound,
	// having handed over exactly the bound.
	zero, err := os.Open("/dev/zero")
	require.NoError(t, err)
	defer zero.Close()
	r, err = Limit(zero, "/dev/zero", 1000, "testBound")
	require.NoError(t, err)
	raw, err = io.ReadAll(r)
	require.ErrorIs(t, err, ErrTooLarge)
	require.Len(t, raw, 1000)
	require.Equal(t, "file above its size bound: /dev/zero holds more than testBound (1000 bytes)", err.Error())
}
