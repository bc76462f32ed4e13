package element

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// Limits of the element file format.
const (
	// MaxFormsPerLine bounds the forms one candidate line may carry.
	MaxFormsPerLine = 8
	// MaxFormSize is the largest form accepted: a filteradd element, the
	// largest script push a filter can usefully hold.
	MaxFormSize = bip37.MaxFilterAddSize
	// maxElementLine bounds one line of an element file: every form at its
	// largest, hex-encoded, with separators.
	maxElementLine = MaxFormsPerLine * (2*MaxFormSize + 1)
	// elementFileBuffer is the scanner's initial buffer.
	elementFileBuffer = 64 << 10
	// decimalBase and heightBits parse a first-seen height.
	decimalBase = 10
	heightBits  = 32
)

// commentMark starts a comment that runs to the end of the line;
// heightMark starts the optional last field, the first-seen height.
const (
	commentMark = "#"
	heightMark  = "@"
)

// ReadCandidates reads an element file: one candidate per line, its forms
// as hex strings separated by spaces or tabs (primary form first, e.g.
// "HASH160 PUBKEY"), optionally followed by "@HEIGHT", the height of the
// block that first paid it (Candidate.FirstSeen), with "#" starting a
// comment and blank lines ignored.
// Any malformed line fails the whole read with an error wrapping
// ErrBadElementFile that names the line; nothing is returned half-read.
func ReadCandidates(r io.Reader) ([]Candidate, error) {
	var out []Candidate
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, elementFileBuffer), maxElementLine+1)
	line := 0
	for sc.Scan() {
		line++
		c, ok, err := parseCandidateLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrBadElementFile, line, err)
		}
		if ok {
			out = append(out, c)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: after line %d: %w", ErrBadElementFile, line, err)
	}
	return out, nil
}

// parseCandidateLine parses one line; ok is false for a blank or comment
// line.
func parseCandidateLine(s string) (Candidate, bool, error) {
	if i := strings.Index(s, commentMark); i >= 0 {
		s = s[:i]
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return Candidate{}, false, nil
	}
	var firstSeen int32
	if last := fields[len(fields)-1]; strings.HasPrefix(last, heightMark) {
		h, err := strconv.ParseInt(last[len(heightMark):], decimalBase, heightBits)
		if err != nil || h < 0 {
			return Candidate{}, false, fmt.Errorf("first-seen height %q: want @ and a height", last)
		}
		firstSeen, fields = int32(h), fields[:len(fields)-1]
		if len(fields) == 0 {
			return Candidate{}, false, fmt.Errorf("first-seen height without a form")
		}
	}
	if len(fields) > MaxFormsPerLine {
		return Candidate{}, false, fmt.Errorf("%d forms, at most %d", len(fields), MaxFormsPerLine)
	}
	c := Candidate{Forms: make([][]byte, len(fields)), FirstSeen: firstSeen}
	for i, f := range fields {
		b, err := hex.DecodeString(f)
		if err != nil {
			return Candidate{}, false, fmt.Errorf("form %d: %w", i+1, err)
		}
		if len(b) == 0 || len(b) > MaxFormSize {
			return Candidate{}, false, fmt.Errorf("form %d: %d bytes, want 1 to %d", i+1, len(b), MaxFormSize)
		}
		c.Forms[i] = b
	}
	return c, true, nil
}

// WriteCandidates writes cands in the element file format ReadCandidates
// reads.
func WriteCandidates(w io.Writer, cands []Candidate) error {
	bw := bufio.NewWriter(w)
	for _, c := range cands {
		if err := writeCandidateLine(bw, c, ""); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write candidates: %w", err)
	}
	return nil
}

// writeCandidateLine writes one candidate's line, with note as a
// trailing comment when it is not empty.
func writeCandidateLine(bw *bufio.Writer, c Candidate, note string) error {
	var line strings.Builder
	for i, f := range c.Forms {
		if i > 0 {
			line.WriteByte(' ')
		}
		line.WriteString(hex.EncodeToString(f))
	}
	if c.FirstSeen > 0 {
		line.WriteString(" " + heightMark + strconv.Itoa(int(c.FirstSeen)))
	}
	if note = strings.TrimSpace(strings.ReplaceAll(note, "\n", " ")); note != "" {
		line.WriteString("  " + commentMark + " " + note)
	}
	line.WriteByte('\n')
	if _, err := bw.WriteString(line.String()); err != nil {
		return fmt.Errorf("write candidates: %w", err)
	}
	return nil
}

// TruthFormat is the first line of a truth file (WriteTruthFile): the
// file is an element file (ReadCandidates), which is all `privacy
// analyze --truth` needs; the line names the format so that a reader
// can tell a truth file and its version from any other element file.
const TruthFormat = "# bloomwatch truth file, format 1: an element file of the wallet's candidates on chain"

// WriteTruthFile writes a truth file for `privacy analyze --truth`: the
// TruthFormat line, the header lines as comments, then one line per
// candidate as WriteCandidates writes it (its forms in hex, "@HEIGHT"
// when its first-seen height is known), followed by notes[i] as a
// comment when notes has one (the address, for a reader). Comments are
// ignored by ReadCandidates: a truth file reads as the candidates alone.
func WriteTruthFile(w io.Writer, header []string, cands []Candidate, notes []string) error {
	bw := bufio.NewWriter(w)
	lines := append([]string{TruthFormat}, header...)
	for i, h := range lines {
		if i > 0 {
			h = commentMark + " " + h
		}
		if _, err := bw.WriteString(strings.ReplaceAll(h, "\n", " ") + "\n"); err != nil {
			return fmt.Errorf("write truth file: %w", err)
		}
	}
	for i, c := range cands {
		note := ""
		if i < len(notes) {
			note = notes[i]
		}
		if err := writeCandidateLine(bw, c, note); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write truth file: %w", err)
	}
	return nil
}
