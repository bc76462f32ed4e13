// Package atomicfile replaces files so that a reader, or a crash, sees
// either the old content or the new, never a part: the data goes to a
// temporary file beside the target (".NAME.tmp*", same directory, so the
// rename stays on one file system), which is synced, given its permission
// and renamed over the target; then the directory is synced.
//
// Write replaces a file with a byte slice; Create and Commit do the same
// for output streamed in pieces; WriteAll writes several files, all or
// none of them.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data, with permission perm.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// File is a file written in place of a target path: write it like an
// *os.File; the target is replaced only when Commit succeeds. Until
// then the target keeps its old content (or stays absent).
type File struct {
	*os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts a replacement of path with permission perm: a temporary
// file beside it.
func Create(path string, perm os.FileMode) (*File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &File{File: tmp, path: path, perm: perm}, nil
}

// Commit syncs the written data, gives it its permission and renames it
// over the target, then syncs the directory. On an error the temporary
// file is removed and the target left as it was.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("write %s: %w", f.path, os.ErrClosed)
	}
	f.done = true
	name := f.Name()
	err := errors.Join(f.Chmod(f.perm), f.Sync())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, f.path)
	}
	if err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return syncDir(filepath.Dir(f.path))
}

// Abort removes the temporary file and leaves the target as it was. After
// Commit it does nothing, so `defer f.Abort()` follows Create.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	_ = f.Close()
	_ = os.Remove(f.Name())
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// Data is one file of WriteAll: its path and content.
type Data struct {
	Path string
	Data []byte
}

// WriteAll writes each file with Write, in order. When one fails, the
// files written before it are removed, so a failed call leaves none of
// its files (a file it replaced is gone, not restored).
func WriteAll(files []Data, perm os.FileMode) error {
	for i, f := range files {
		if err := Write(f.Path, f.Data, perm); err != nil {
			for _, done := range files[:i] {
				_ = os.Remove(done.Path)
			}
			return err
		}
	}
	return nil
}
