package testnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBtcdBinary(t *testing.T) {
	path, err := BtcdBinary(t.Context())
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&0o111, "executable")
	if v := buildInfoVersion(); v != "" { // test binaries carry no module dependencies
		require.Equal(t, "v0.25.0", v)
	}
	require.True(t, strings.HasSuffix(path, filepath.Join("bloomwatch", "btcd-v0.25.0", "btcd")), path)

	root, err := moduleRoot()
	require.NoError(t, err)
	v, err := btcdVersion(t.Context(), root)
	require.NoError(t, err)
	require.Equal(t, "v0.25.0", v)

	t.Setenv(BtcdEnv, path)
	got, err := BtcdBinary(t.Context())
	require.NoError(t, err)
	require.Equal(t, path, got)
	t.Setenv(BtcdEnv, filepath.Join(t.TempDir(), "missing"))
	_, err = BtcdBinary(t.Context())
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestBtcdBinaryBuilds builds btcd into a fresh cache directory (slow
// the first time on a machine, then served by the Go build cache).
func TestBtcdBinaryBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds btcd")
	}
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	require.NoError(t, err)
	// Keep Go's build cache where it is: it defaults to XDG_CACHE_HOME.
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	binaryMu.Lock()
	saved := binaryPath
	binaryPath = ""
	binaryMu.Unlock()
	t.Cleanup(func() {
		binaryMu.Lock()
		binaryPath = saved
		binaryMu.Unlock()
	})
	path, err := BtcdBinary(t.Context())
	require.NoError(t, err)
	require.Equal(t, filepath.Join(cache, "bloomwatch", "btcd-v0.25.0", "btcd"), path)
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary build file left")
}
