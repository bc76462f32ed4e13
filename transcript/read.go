package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrBad is wrapped by every error Read returns for malformed input.
var ErrBad = errors.New("bad transcript")

// maxLine bounds one JSON line: a 36,000-byte filter is 72,000 hex digits.
const maxLine = 1 << 20

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
// left by a crash before it reads).
func Read(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, &Error{Line: line, Seq: -1, Err: err}
		}
		if err := rec.check(); err != nil {
			return nil, &Error{Line: line, Seq: int64(rec.Seq), Err: err}
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{Line: line + 1, Seq: -1, Err: err}
	}
	return out, nil
}
