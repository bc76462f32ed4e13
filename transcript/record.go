package transcript

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// Version is the record format this package writes. Version 1 records
// (written before the field existed) carry no "v" and have the same
// fields; they read unchanged.
const Version = 2

// Kind names a BIP37 message a client sent to a peer.
type Kind string

// The BIP37 messages a transcript records.
const (
	KindFilterLoad  Kind = "filterload"
	KindFilterAdd   Kind = "filteradd"
	KindFilterClear Kind = "filterclear"
)

// Record is one BIP37 message as the receiving full node saw it: the
// adversary's view. Filter holds the filterload payload serialized exactly
// as on the wire (Bitcoin Core's CBloomFilter serialization: compact-size
// length, bit array, nHashFuncs, nTweak, nFlags); Data holds a filteradd
// element.
type Record struct {
	// V is the record's format version (0 when read from a version 1
	// record, which had no field).
	V      int       `json:"v,omitempty"`
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Peer   string    `json:"peer"`
	Height int32     `json:"height"`
	Kind   Kind      `json:"kind"`
	Filter HexBytes  `json:"filter,omitempty"`
	Data   HexBytes  `json:"data,omitempty"`
	// Reason says why the client sent it (initial, restart, new-peer,
	// new-key, fp-drift, manual, outpoints): ground truth the adversary
	// does not have, kept for the analyzer's labels.
	Reason string `json:"reason,omitempty"`
}

// Validate checks what a full node would check before acting on the
// message: a known kind, a filterload whose filter deserializes within
// BIP37's caps (36,000 bytes, 50 hash functions), a filteradd element of
// at most 520 bytes, and a version this package can read.
func (r Record) Validate() error {
	if r.V < 0 || r.V > Version {
		return fmt.Errorf("record version %d, this bloomwatch reads up to %d", r.V, Version)
	}
	switch r.Kind {
	case KindFilterLoad:
		if len(r.Filter) == 0 {
			return fmt.Errorf("filterload without filter")
		}
		if _, err := bip37.Deserialize(r.Filter); err != nil {
			return fmt.Errorf("filterload: %w", err)
		}
	case KindFilterAdd:
		if len(r.Data) == 0 {
			return fmt.Errorf("filteradd without data")
		}
		if err := bip37.CheckFilterAdd(r.Data); err != nil {
			return fmt.Errorf("filteradd: %w", err)
		}
	case KindFilterClear:
	default:
		return fmt.Errorf("unknown kind %q", r.Kind)
	}
	return nil
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
