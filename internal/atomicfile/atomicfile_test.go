package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// entries lists dir's file names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	for _, content := range []string{"first", "second, longer"} {
		require.NoError(t, Write(path, []byte(content), 0o640))
		got, err := os.ReadFile(path)
		require.NoError(t, err, "read %q %v, want %q", got, err, content)
		require.Equal(t, content, string(got), "read %q %v, want %q", got, err, content)
	}
	st, err := os.Stat(path)
	require.NoError(t, err, "mode %v", st.Mode())
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "mode %v %v", st.Mode(), err)
	names := entries(t, dir)
	require.Len(t, names, 1, "left behind: %v", names)
}

func TestWriteMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope", "out.txt")
	err := Write(path, []byte("x"), 0o600)
	require.Error(t, err, "err %v, want one naming %s", err, path)
	require.Contains(t, err.Error(), path, "err %v, want one naming %s", err, path)
}

func TestCreateCommitAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stream.txt")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	f, err := Create(path, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("new")
	require.NoError(t, err)
	f.Abort()
	f.Abort()
	got, _ := os.ReadFile(path)
	require.Equal(t, "old", string(got), "aborted write changed the target: %q", got)
	names := entries(t, dir)
	require.Len(t, names, 1, "abort left: %v", names)
	require.Error(t, f.Commit(), "commit after abort succeeded")

	f, err = Create(path, 0o644)
	require.NoError(t, err)
	defer f.Abort()
	for _, s := range []string{"a", "b", "c"} {
		_, err := f.WriteString(s)
		require.NoError(t, err)
	}
	got, _ = os.ReadFile(path)
	require.Equal(t, "old", string(got), "target changed before commit: %q", got)
	require.NoError(t, f.Commit())
	f.Abort() // after Commit: nothing
	got, _ = os.ReadFile(path)
	require.Equal(t, "abc", string(got), "committed %q", got)
	st, err := os.Stat(path)
	require.NoError(t, err, "mode %v", st.Mode())
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "mode %v %v", st.Mode(), err)
}

func TestWriteAllRemovesOnFailure(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	bad := filepath.Join(dir, "missing", "c")
	err := WriteAll([]Data{{a, []byte("1")}, {b, []byte("2")}, {bad, []byte("3")}}, 0o600)
	require.Error(t, err, "no error for a file in a missing directory")
	names := entries(t, dir)
	require.Len(t, names, 0, "a failed WriteAll left %v", names)
	require.NoError(t, WriteAll([]Data{{a, []byte("1")}, {b, []byte("2")}}, 0o600))
	got, _ := os.ReadFile(b)
	require.Equal(t, "2", string(got), "b = %q", got)
}
