package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entries lists dir's file names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
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
		if err := Write(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q %v, want %q", got, err, content)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("left behind: %v", names)
	}
}

func TestWriteMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope", "out.txt")
	if err := Write(path, []byte("x"), 0o600); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v, want one naming %s", err, path)
	}
}

func TestCreateCommitAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stream.txt")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	f.Abort()
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("aborted write changed the target: %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("abort left: %v", names)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("commit after abort succeeded")
	}

	f, err = Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	for _, s := range []string{"a", "b", "c"} {
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("target changed before commit: %q", got)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // after Commit: nothing
	if got, _ := os.ReadFile(path); string(got) != "abc" {
		t.Fatalf("committed %q", got)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
}

func TestWriteAllRemovesOnFailure(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	bad := filepath.Join(dir, "missing", "c")
	if err := WriteAll([]Data{{a, []byte("1")}, {b, []byte("2")}, {bad, []byte("3")}}, 0o600); err == nil {
		t.Fatal("no error for a file in a missing directory")
	}
	if names := entries(t, dir); len(names) != 0 {
		t.Fatalf("a failed WriteAll left %v", names)
	}
	if err := WriteAll([]Data{{a, []byte("1")}, {b, []byte("2")}}, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(b); string(got) != "2" {
		t.Fatalf("b = %q", got)
	}
}
