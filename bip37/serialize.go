package bip37

import (
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/wire"
)

// Compact-size ("varint") prefixes and the smallest value each may encode
// canonically.
const (
	compactSize16     = 0xfd
	compactSize32     = 0xfe
	compactSize64     = 0xff
	compactMin16      = 0xfd
	compactMin32      = 0x10000
	compactMin64      = 0x100000000
	uint16Size        = 2
	uint32Size        = 4
	uint64Size        = 8
	tweakOffset       = uint32Size      // nTweak follows nHashFuncs
	flagsOffset       = 2 * uint32Size  // nFlags follows nTweak
	filterTrailerSize = flagsOffset + 1 // nHashFuncs, nTweak, nFlags
)

// Serialize returns the filter in Bitcoin Core's CBloomFilter serialization,
// which is also the payload of a filterload message: compact-size length,
// the bit array, nHashFuncs (LE32), nTweak (LE32), nFlags (1 byte).
func (f *Filter) Serialize() []byte {
	out := make([]byte, 0, wire.VarIntSerializeSize(uint64(len(f.bits)))+len(f.bits)+filterTrailerSize)
	out = appendCompactSize(out, uint64(len(f.bits)))
	out = append(out, f.bits...)
	out = binary.LittleEndian.AppendUint32(out, f.hashFuncs)
	out = binary.LittleEndian.AppendUint32(out, f.tweak)
	return append(out, byte(f.flags))
}

// Deserialize parses Core's CBloomFilter serialization (a filterload
// payload) strictly: the length prefix must be canonical, nothing may be
// missing and nothing may follow. Like a node receiving filterload it
// rejects filters over MaxFilterSize (ErrFilterTooLarge) or MaxHashFuncs
// (ErrTooManyHashFuncs). Other defects return ErrMalformedFilter or
// ErrTrailingBytes.
func Deserialize(b []byte) (*Filter, error) {
	size, n, err := readCompactSize(b)
	if err != nil {
		return nil, err
	}
	if size > MaxFilterSize {
		return nil, fmt.Errorf("deserialize filter: %w: %d bytes", ErrFilterTooLarge, size)
	}
	rest := b[n:]
	need := int(size) + filterTrailerSize
	if len(rest) < need {
		return nil, fmt.Errorf("%w: need %d bytes after the length prefix, have %d", ErrMalformedFilter, need, len(rest))
	}
	if len(rest) > need {
		return nil, fmt.Errorf("%w: %d", ErrTrailingBytes, len(rest)-need)
	}
	data := rest[:size]
	trailer := rest[size:]
	hashFuncs := binary.LittleEndian.Uint32(trailer)
	tweak := binary.LittleEndian.Uint32(trailer[tweakOffset:])
	flags := UpdateFlag(trailer[flagsOffset])
	f, err := NewFilterFromBits(data, hashFuncs, tweak, flags)
	if err != nil {
		return nil, fmt.Errorf("deserialize filter: %w", err)
	}
	return f, nil
}

// LoadFilter returns the filter a full node builds from a received
// filterload message, enforcing the node's caps with ErrFilterTooLarge and
// ErrTooManyHashFuncs. The message's bytes are copied.
func LoadFilter(msg *wire.MsgFilterLoad) (*Filter, error) {
	if msg == nil {
		return nil, fmt.Errorf("load filter: %w", ErrNilMessage)
	}
	f, err := NewFilterFromBits(msg.Filter, msg.HashFuncs, msg.Tweak, UpdateFlag(msg.Flags))
	if err != nil {
		return nil, fmt.Errorf("load filter: %w", err)
	}
	return f, nil
}

// MsgFilterLoad returns a filterload message carrying a copy of the filter.
func (f *Filter) MsgFilterLoad() *wire.MsgFilterLoad {
	return wire.NewMsgFilterLoad(append([]byte(nil), f.bits...), f.hashFuncs, f.tweak, wire.BloomUpdateType(f.flags))
}

// CheckFilterAdd returns ErrFilterAddTooLarge when data is too large for a
// filteradd message, which a node would punish.
func CheckFilterAdd(data []byte) error {
	if len(data) > MaxFilterAddSize {
		return fmt.Errorf("%w: %d bytes", ErrFilterAddTooLarge, len(data))
	}
	return nil
}

// appendCompactSize appends v in Bitcoin's canonical compact-size encoding.
func appendCompactSize(out []byte, v uint64) []byte {
	switch {
	case v < compactMin16:
		return append(out, byte(v))
	case v < compactMin32:
		return binary.LittleEndian.AppendUint16(append(out, compactSize16), uint16(v))
	case v < compactMin64:
		return binary.LittleEndian.AppendUint32(append(out, compactSize32), uint32(v))
	default:
		return binary.LittleEndian.AppendUint64(append(out, compactSize64), v)
	}
}

// readCompactSize decodes a canonical compact-size integer from the start of
// b and returns it with the number of bytes it used.
func readCompactSize(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("%w: missing length prefix", ErrMalformedFilter)
	}
	var width int
	var minValue uint64
	switch b[0] {
	case compactSize16:
		width, minValue = uint16Size, compactMin16
	case compactSize32:
		width, minValue = uint32Size, compactMin32
	case compactSize64:
		width, minValue = uint64Size, compactMin64
	default:
		return uint64(b[0]), 1, nil
	}
	if len(b) < 1+width {
		return 0, 0, fmt.Errorf("%w: truncated length prefix", ErrMalformedFilter)
	}
	var v uint64
	switch width {
	case uint16Size:
		v = uint64(binary.LittleEndian.Uint16(b[1:]))
	case uint32Size:
		v = uint64(binary.LittleEndian.Uint32(b[1:]))
	default:
		v = binary.LittleEndian.Uint64(b[1:])
	}
	if v < minValue {
		return 0, 0, fmt.Errorf("%w: non-canonical length prefix 0x%x", ErrMalformedFilter, v)
	}
	return v, 1 + width, nil
}
