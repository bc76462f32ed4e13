package filterpolicy

import (
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/btcsuite/btcd/wire"
)

// FilterPadding is how a filterload sent over BIP324's v2 transport is
// padded, with a decoy packet (the ignore bit set: the peer drops it)
// written together with it, so that an on-path observer, who sees the
// length of what is written at once and not the encrypted lengths inside,
// learns a size class instead of the filter's size. Over v1 nothing is
// padded: the observer reads the filter itself.
type FilterPadding string

// The filterload paddings.
const (
	// PadSteps (the default) pads a filterload to the smallest of
	// PadClasses that holds it and a decoy packet: an observer learns
	// whether the filter's capacity is at most 1,024 elements (512
	// elements at the default rate), at most 4,096, or more.
	PadSteps FilterPadding = "steps"
	// PadMax pads every filterload to the largest one BIP37 allows
	// (MaxFilterLoadWire): the observer learns nothing from its size.
	PadMax FilterPadding = "max"
	// PadNone sends filterloads as they are: the observer reads the
	// filter's byte size, hence its capacity step.
	PadNone FilterPadding = "none"
)

// ErrBadPadding is returned for an unknown FilterPadding name.
var ErrBadPadding = errors.New("filterpolicy: unknown filter padding (want steps, max or none)")

// V2PacketOverhead is what a BIP324 packet adds to its contents: the
// 3-byte encrypted length, the header byte and the 16-byte tag.
const V2PacketOverhead = 3 + 1 + 16

// MaxFilterLoadWire is the v2 packet of the largest filterload: the
// 1-byte message type, a 36,000-byte filter with its 3-byte length,
// nHashFuncs, nTweak and nFlags.
const MaxFilterLoadWire = V2PacketOverhead + 1 + 3 + bip37.MaxFilterSize + 4 + 4 + 1

// PadClasses are PadSteps' burst sizes, in bytes on the wire.
var PadClasses = []int{4096, 16384, MaxFilterLoadWire}

// ParseFilterPadding returns the padding named by s ("" is PadSteps), or
// an error wrapping ErrBadPadding.
func ParseFilterPadding(s string) (FilterPadding, error) {
	switch FilterPadding(s) {
	case "", PadSteps:
		return PadSteps, nil
	case PadMax, PadNone:
		return FilterPadding(s), nil
	}
	return "", fmt.Errorf("%w: %q", ErrBadPadding, s)
}

// MessageWire returns the bytes a message whose payload is payload bytes
// long takes on the wire: over v2, the packet's framing and its 1-byte
// short message type (every message the node sends has one); over v1, the
// frame's 24-byte header.
func MessageWire(v2 bool, payload int) int {
	if v2 {
		return V2PacketOverhead + 1 + payload
	}
	return wire.MessageHeaderSize + payload
}

// PadFilterLoad returns the burst a v2 filterload packet of packet bytes
// is padded to under p, and the contents of the decoy packet that pads it
// (-1: none). A decoy needs V2PacketOverhead bytes itself, so a class too
// close above the packet is passed for the next.
func PadFilterLoad(p FilterPadding, packet int) (burst, decoy int) {
	classes := PadClasses
	switch p {
	case PadNone:
		return packet, -1
	case PadMax:
		classes = PadClasses[len(PadClasses)-1:]
	}
	for _, c := range classes {
		switch {
		case c == packet:
			return packet, -1
		case c-packet >= V2PacketOverhead:
			return c, c - packet - V2PacketOverhead
		}
	}
	return packet, -1
}

// PaddingOf returns the padding that turns a v2 filterload packet of
// packet bytes into a burst of wire bytes (the least padding when several
// do), and false when none does.
func PaddingOf(packet, wireLen int) (FilterPadding, bool) {
	for _, p := range []FilterPadding{PadNone, PadSteps, PadMax} {
		if b, _ := PadFilterLoad(p, packet); b == wireLen {
			return p, true
		}
	}
	return "", false
}

// FilterLoadPacket returns the v2 packet of a filterload whose
// serialized filter (the payload) is payload bytes long.
func FilterLoadPacket(payload int) int { return MessageWire(true, payload) }

// filterLoadPayload returns the filterload payload of a filter of size
// bytes: its compact-size length, the bits, nHashFuncs, nTweak, nFlags.
func filterLoadPayload(size int) int {
	return wire.VarIntSerializeSize(uint64(size)) + size + 4 + 4 + 1
}

// WireClass is a range of element counts whose filterloads look alike on
// the wire: the same burst Wire over v2 under some padding.
type WireClass struct {
	Wire        int
	MinElements int
	MaxElements int
}

// ElementsForWire returns what an on-path observer who knows this sizing
// policy, fpRate and the padding p learns from a v2 filterload burst of
// wire bytes: the range of element counts whose filter, padded by p,
// leaves in such a burst. ok is false when no filter of the policy does
// (another client, another rate).
func ElementsForWire(wireLen int, fpRate float64, p FilterPadding) (c WireClass, ok bool) {
	c = WireClass{Wire: wireLen, MinElements: -1}
	prev := -1
	for capacity := uint64(MinFilterCapacity); capacity <= 1<<31; capacity *= 2 {
		lo, hi := int(capacity/4)+1, int(capacity/2)
		if capacity == MinFilterCapacity {
			lo = 0
		}
		size, _ := FilterSize(hi, fpRate)
		if size == 0 {
			return c, false
		}
		packet := MessageWire(true, filterLoadPayload(size))
		b, _ := PadFilterLoad(p, packet)
		match := b == wireLen
		if match {
			if c.MinElements < 0 {
				c.MinElements = lo
			}
			c.MaxElements = hi
			ok = true
		}
		if size == prev && size >= bip37.MaxFilterSize {
			if match {
				c.MaxElements = 1<<31 - 1 // every larger capacity is capped too
			}
			break
		}
		prev = size
	}
	return c, ok
}
