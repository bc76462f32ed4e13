package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrBad is wrapped by every error Read returns for malformed input.
var ErrBad = errors.New("bad transcript")

// maxLine bounds one JSON line: a 36,000-byte filter is 72,000 hex digits.
const maxLine = 1 << 20

// MaxFileBytes bounds a transcript that is read (the node's at every
// start, one handed to privacy analyze): the records are held in memory,
// and a file above it is refused with ErrTooLarge rather than read. About
// 7,000 filterloads of BIP37's largest filter, far more of a wallet's
// usual ones.
const MaxFileBytes = 512 << 20

// ErrTooLarge is returned for a transcript above MaxFileBytes; nothing is
// read from it or written to it.
var ErrTooLarge = errors.New("transcript above its size bound")

// Error is a malformed record: its line, and its sequence number when the
// line parsed far enough to have one. It wraps ErrBad and the cause.
type Error struct {
	Line int
	// Seq is the record's sequence number, or -1 when unknown.
	Seq int64
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Seq >= 0 {
		return fmt.Sprintf("%v: line %d (seq %d): %v", ErrBad, e.Line, e.Seq, e.Err)
	}
	return fmt.Sprintf("%v: line %d: %v", ErrBad, e.Line, e.Err)
}

// Unwrap returns ErrBad and the cause.
func (e *Error) Unwrap() []error { return []error{ErrBad, e.Err} }

// Write appends one record to w as a JSON line. A record without a
// version gets VersionOf it.
func Write(w io.Writer, r Record) error {
	if r.V == 0 {
		r.V = VersionOf(r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("transcript record: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("transcript write: %w", err)
	}
	return nil
}

// Read reads JSON-lines records from r and validates each (Record.Validate).
// Blank lines are skipped. A malformed line, including a last line cut in
// the middle of a record, is an *Error naming it: the transcript a user
// hands to the analyzer must be whole (the node's own File cuts a torn tail
// left by a crash before it reads). It streams r, one line of at most
// maxLine bytes at a time, and stops with an error wrapping ErrTooLarge
// past MaxFileBytes.
func Read(r io.Reader) ([]Record, error) {
	if f, ok := r.(*os.File); ok {
		if err := checkSize(f, f.Name()); err != nil {
			return nil, err
		}
	}
	recs, _, err := scan(r, false)
	return recs, err
}

// ReadFile reads the transcript at path as the node does when it opens
// it: a torn last line (a crash mid-append) is left out. keep is the
// length of the whole lines. A file above MaxFileBytes is refused before
// anything is read (ErrTooLarge); a missing one is fs.ErrNotExist.
func ReadFile(path string) (recs []Record, keep int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if err := checkSize(f, path); err != nil {
		return nil, 0, err
	}
	recs, keep, err = scan(f, true)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return recs, keep, nil
}

// checkSize refuses a transcript file above MaxFileBytes.
func checkSize(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat transcript: %w", err)
	}
	if fi.Size() > MaxFileBytes {
		return fmt.Errorf("%w: %s is %d bytes, above transcript.MaxFileBytes (%d bytes)",
			ErrTooLarge, path, fi.Size(), int64(MaxFileBytes))
	}
	return nil
}

// scan reads records from r, one line at a time, at most MaxFileBytes in
// all. With cutTorn a last line without its newline is not decoded:
// keep is the length of the lines that end with one.
func scan(r io.Reader, cutTorn bool) (out []Record, keep int64, err error) {
	lr := &io.LimitedReader{R: r, N: MaxFileBytes + 1}
	br := bufio.NewReaderSize(lr, maxLine+1)
	line := 0
	for {
		b, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			return nil, 0, &Error{Line: line + 1, Seq: -1, Err: bufio.ErrTooLong}
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, 0, &Error{Line: line + 1, Seq: -1, Err: rerr}
		}
		if lr.N <= 0 {
			return nil, 0, fmt.Errorf("%w: more than transcript.MaxFileBytes (%d bytes)", ErrTooLarge, int64(MaxFileBytes))
		}
		whole := len(b) > 0 && b[len(b)-1] == '\n'
		if len(b) > 0 && (whole || !cutTorn) {
			line++
			if whole {
				keep += int64(len(b))
			}
			if rec, ok, err := decodeLine(b, line); err != nil {
				return nil, 0, err
			} else if ok {
				out = append(out, rec)
			}
		}
		if rerr != nil { // io.EOF
			return out, keep, nil
		}
	}
}

// decodeLine decodes and checks the record on line number line (ok false
// for a blank line).
func decodeLine(b []byte, line int) (rec Record, ok bool, err error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return rec, false, nil
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, false, &Error{Line: line, Seq: -1, Err: err}
	}
	if err := rec.check(); err != nil {
		return rec, false, &Error{Line: line, Seq: int64(rec.Seq), Err: err}
	}
	return rec, true, nil
}
