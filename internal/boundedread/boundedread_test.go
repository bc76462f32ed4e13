package boundedread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadFileBound(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	require.NoError(t, os.WriteFile(small, []byte("12345"), 0o600))
	raw, err := ReadFile(small, 5, "testBound")
	require.NoError(t, err)
	require.Equal(t, "12345", string(raw))

	_, err = ReadFile(small, 4, "testBound")
	require.ErrorIs(t, err, ErrTooLarge)
	require.Equal(t, "file above its size bound: "+small+" is 5 bytes, above testBound (4 bytes)", err.Error())

	// A sparse file: refused by its size before anything is read.
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<40))
	require.NoError(t, f.Close())
	_, err = ReadFile(big, 1<<20, "testBound")
	require.ErrorIs(t, err, ErrTooLarge)
	require.NotContains(t, err.Error(), "\n")

	// A device reports no size: read up to the bound, then refused.
	_, err = ReadFile("/dev/zero", 1<<10, "testBound")
	require.ErrorIs(t, err, ErrTooLarge)
	require.True(t, strings.Contains(err.Error(), "holds more than testBound"), err.Error())

	_, err = ReadFile(filepath.Join(dir, "missing"), 1, "testBound")
	require.ErrorIs(t, err, os.ErrNotExist)
}
