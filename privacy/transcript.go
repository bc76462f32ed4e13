package privacy

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Kind names a BIP37 message a client sent to a peer.
type Kind string

// The BIP37 messages a transcript records.
const (
	KindFilterLoad  Kind = "filterload"
	KindFilterAdd   Kind = "filteradd"
	KindFilterClear Kind = "filterclear"
)

// Record is one BIP37 message as the receiving full node saw it: the
// adversary's view. Filter holds the filterload payload serialized exactly as
// on the wire (Bitcoin Core's CBloomFilter serialization: compact-size
// length, bit array, nHashFuncs, nTweak, nFlags); Data holds a filteradd
// element.
type Record struct {
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Peer   string    `json:"peer"`
	Height int32     `json:"height"`
	Kind   Kind      `json:"kind"`
	Filter HexBytes  `json:"filter,omitempty"`
	Data   HexBytes  `json:"data,omitempty"`
	// Reason says why the client sent it (initial, elements, fp-drift,
	// reconnect, manual): ground truth the adversary does not have, kept
	// for the analyzer's labels.
	Reason string `json:"reason,omitempty"`
}

// HexBytes is a byte slice that marshals to and from a hex JSON string.
type HexBytes []byte

// MarshalJSON implements json.Marshaler.
func (h HexBytes) MarshalJSON() ([]byte, error) {
	return json.Marshal(hex.EncodeToString(h))
}

// UnmarshalJSON implements json.Unmarshaler.
func (h *HexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	d, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	*h = d
	return nil
}

// ErrBadTranscript is wrapped by every error ReadTranscript returns for
// malformed input.
var ErrBadTranscript = errors.New("bad transcript")

// WriteRecord appends one record to w as a JSON line.
func WriteRecord(w io.Writer, r Record) error {
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

// ReadTranscript reads JSON-lines records from r. A torn last line (a crash
// in the middle of an append) is ignored; any other malformed line is an
// error naming its line number.
func ReadTranscript(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	line := 0
	var pendingErr error
	for sc.Scan() {
		line++
		if pendingErr != nil {
			return nil, pendingErr
		}
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			pendingErr = fmt.Errorf("%w: line %d: %v", ErrBadTranscript, line, err)
			continue
		}
		if err := rec.validate(); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadTranscript, line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadTranscript, err)
	}
	return out, nil
}

func (r Record) validate() error {
	switch r.Kind {
	case KindFilterLoad:
		if len(r.Filter) == 0 {
			return errors.New("filterload without filter")
		}
	case KindFilterAdd:
		if len(r.Data) == 0 {
			return errors.New("filteradd without data")
		}
	case KindFilterClear:
	default:
		return fmt.Errorf("unknown kind %q", r.Kind)
	}
	return nil
}
