// Package boundedread reads local input files with a size bound: a file
// the user or the data dir hands the program (a PSBT, a state file) is
// read whole only when it holds at most the bound its caller names, so a
// wrong path (a disk image, /dev/zero) or a damaged file fails at once
// with one line instead of filling memory.
package boundedread

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is wrapped by the error ReadFile returns for a file above
// its bound. Nothing was read from it.
var ErrTooLarge = errors.New("file above its size bound")

// ReadFile reads path whole when it holds at most max bytes. A larger
// file is refused with one line wrapping ErrTooLarge that names the
// file, its size and bound (the name of the caller's constant). A file
// whose size the system does not report (a device, a pipe) is read up to
// max+1 bytes and refused the same way past max. Open errors are returned
// as os.Open gives them (fs.ErrNotExist and the rest).
func ReadFile(path string, max int64, bound string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, tooLarge(path, fi.Size(), max, bound)
	}
	raw, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > max {
		return nil, tooLarge(path, -1, max, bound)
	}
	return raw, nil
}

// TooLargeError is the one-line error of a file above its bound; it
// wraps ErrTooLarge.
type TooLargeError struct {
	Path  string
	Size  int64 // -1: not known, more than Max
	Max   int64
	Bound string // the name of the caller's constant
}

// Error names the file, its size and the bound.
func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%v: %s holds more than %s (%d bytes)", ErrTooLarge, e.Path, e.Bound, e.Max)
	}
	return fmt.Sprintf("%v: %s is %d bytes, above %s (%d bytes)", ErrTooLarge, e.Path, e.Size, e.Bound, e.Max)
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// tooLarge is the error of a file above its bound (size -1: not known,
// more than max).
func tooLarge(path string, size, max int64, bound string) error {
	return &TooLargeError{Path: path, Size: size, Max: max, Bound: bound}
}

// Limit bounds a streamed read of f, the file at path, to max bytes: a
// regular file above it is refused at once with ReadFile's error, and a
// read past max bytes of any other (a device, a pipe) fails with it, a
// *TooLargeError whatever wraps it.
func Limit(f *os.File, path string, max int64, bound string) (io.Reader, error) {
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, tooLarge(path, fi.Size(), max, bound)
	}
	return &limitedReader{r: f, left: max, path: path, max: max, bound: bound}, nil
}

// limitedReader reads at most max bytes and fails past them.
type limitedReader struct {
	r     io.Reader
	left  int64
	path  string
	max   int64
	bound string
}

// Read reads from r, failing once more than max bytes would be read.
func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, tooLarge(l.path, -1, l.max, l.bound)
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), tooLarge(l.path, -1, l.max, l.bound)
	}
	return n, err
}
