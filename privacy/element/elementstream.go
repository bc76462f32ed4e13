package element

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
)

// formBufferSize is the least capacity of a form buffer: a compressed
// public key, so a buffer grown for a hash160 holds the next line's key.
const formBufferSize = 33

// FileUniverse streams the candidates of an element file (the format
// ReadCandidates reads and WriteCandidates writes) one line at a time, so
// a universe far larger than memory (a mainnet universe of about a billion
// scripts) can be scanned: it holds one line and one candidate's buffers,
// and scan.Run reads it in bounded batches. Unlike ReadCandidates it cannot
// merge repeated candidates: a file must list each once (the exporter,
// btcdrpc.ExportUniverse, writes each once).
type FileUniverse struct {
	sc    *bufio.Scanner
	line  int
	count uint64
	err   error
}

var _ Universe = (*FileUniverse)(nil)

// NewFileUniverse returns a universe reading r.
func NewFileUniverse(r io.Reader) *FileUniverse {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, elementFileBuffer), maxElementLine+1)
	return &FileUniverse{sc: sc}
}

// Next implements Universe. A malformed line ends the stream with an
// error wrapping ErrBadElementFile that names the line (Err).
func (u *FileUniverse) Next(c *Candidate) bool {
	if u.err != nil {
		return false
	}
	for u.sc.Scan() {
		u.line++
		ok, err := parseCandidateInto(u.sc.Bytes(), c)
		if err != nil {
			u.err = fmt.Errorf("%w: line %d: %w", ErrBadElementFile, u.line, err)
			return false
		}
		if ok {
			u.count++
			return true
		}
	}
	if err := u.sc.Err(); err != nil {
		u.err = fmt.Errorf("%w: after line %d: %w", ErrBadElementFile, u.line, err)
	}
	return false
}

// Err implements Universe.
func (u *FileUniverse) Err() error { return u.err }

// Count returns the number of candidates read so far.
func (u *FileUniverse) Count() uint64 { return u.count }

// parseCandidateInto parses one line into c, reusing c's buffers (no
// allocation once they have grown): what parseCandidateLine accepts,
// with the same errors. ok is false for a blank or comment line.
func parseCandidateInto(line []byte, c *Candidate) (bool, error) {
	if i := bytes.IndexByte(line, commentMark[0]); i >= 0 {
		line = line[:i]
	}
	c.FirstSeen = 0
	forms := c.Forms[:0]
	n := 0
	for {
		for len(line) > 0 && (line[0] == ' ' || line[0] == '\t' || line[0] == '\r') {
			line = line[1:]
		}
		if len(line) == 0 {
			break
		}
		end := 0
		for end < len(line) && line[end] != ' ' && line[end] != '\t' && line[end] != '\r' {
			end++
		}
		field := line[:end]
		line = line[end:]
		if field[0] == heightMark[0] {
			h, err := strconv.ParseInt(string(field[1:]), decimalBase, heightBits)
			if err != nil || h < 0 {
				return false, fmt.Errorf("first-seen height %q: want @ and a height", field)
			}
			if rest := bytes.TrimSpace(line); len(rest) > 0 {
				return false, fmt.Errorf("first-seen height %q: it must be the last field", field)
			}
			if n == 0 {
				return false, fmt.Errorf("first-seen height without a form")
			}
			c.FirstSeen = int32(h)
			break
		}
		n++
		if n > MaxFormsPerLine {
			return false, fmt.Errorf("%d forms, at most %d", n, MaxFormsPerLine)
		}
		size := hex.DecodedLen(len(field))
		if len(field)%2 != 0 || size == 0 || size > MaxFormSize {
			if len(field)%2 != 0 {
				return false, fmt.Errorf("form %d: %w", n, hex.ErrLength)
			}
			return false, fmt.Errorf("form %d: %d bytes, want 1 to %d", n, size, MaxFormSize)
		}
		var buf []byte
		if len(forms) < cap(forms) {
			buf = forms[:len(forms)+1][len(forms)]
		}
		if cap(buf) < size {
			buf = make([]byte, size, max(size, formBufferSize))
		}
		buf = buf[:size]
		if _, err := hex.Decode(buf, field); err != nil {
			return false, fmt.Errorf("form %d: %w", n, err)
		}
		forms = append(forms, buf)
	}
	c.Forms = forms
	return n > 0, nil
}
