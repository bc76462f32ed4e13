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

// tooLarge is the one-line error of a file above its bound (size -1: not
// known, more than max).
func tooLarge(path string, size, max int64, bound string) error {
	if size < 0 {
		return fmt.Errorf("%w: %s holds more than %s (%d bytes)", ErrTooLarge, path, bound, max)
	}
	return fmt.Errorf("%w: %s is %d bytes, above %s (%d bytes)", ErrTooLarge, path, size, bound, max)
}
