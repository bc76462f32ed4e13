package bip37

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/btcsuite/btcd/wire"
)

// Bit addressing within the filter's byte array.
const (
	byteIndexShift = 3               // bit index -> byte index
	bitInByteMask  = bitsPerByte - 1 // bit index -> bit within the byte
	wordBytes      = 8               // bytes per popcount word
)

// seedStep separates the seeds of successive hash functions (Core's
// 0xFBA4C795, "chosen as it guarantees a reasonable bit difference").
const seedStep = 0xFBA4C795

// Filter is a BIP37 bloom filter with Bitcoin Core's semantics.
//
// Mutating methods (Add, AddOutPoint, MatchTxAndUpdate) are not safe for
// concurrent use. The read-only methods (Matches, MatchesOutPoint, MatchTx
// and the accessors) never write to the filter and are safe for any number
// of concurrent readers while no goroutine mutates it.
type Filter struct {
	bits      []byte
	hashFuncs uint32
	tweak     uint32
	flags     UpdateFlag
	nBits     uint32
	set       uint32 // bits set, kept by setBit (BitsSet is O(1))
	mod       fastMod
	seeds     [MaxHashFuncs]uint32
	rules     Rules
}

// NewFilter returns an empty filter sized by Params for the given number of
// elements and false-positive rate. It returns ErrZeroElements when elements
// is 0 and ErrFPRateRange when fpRate is not in (0, 1).
func NewFilter(elements uint32, fpRate float64, tweak uint32, flags UpdateFlag) (*Filter, error) {
	if err := validateParams(elements, fpRate); err != nil {
		return nil, fmt.Errorf("new filter: %w", err)
	}
	size, k := Params(elements, fpRate)
	return newFilter(make([]byte, size), k, tweak, flags), nil
}

// NewFilterFromBits returns a filter over a copy of bits with the given
// parameters. It returns ErrFilterTooLarge when bits is longer than
// MaxFilterSize and ErrTooManyHashFuncs when hashFuncs exceeds MaxHashFuncs.
func NewFilterFromBits(bits []byte, hashFuncs, tweak uint32, flags UpdateFlag) (*Filter, error) {
	if err := checkCaps(len(bits), hashFuncs); err != nil {
		return nil, err
	}
	return newFilter(append([]byte(nil), bits...), hashFuncs, tweak, flags), nil
}

// checkCaps applies the limits a node enforces on a received filter.
func checkCaps(size int, hashFuncs uint32) error {
	if size > MaxFilterSize {
		return fmt.Errorf("%w: %d bytes", ErrFilterTooLarge, size)
	}
	if hashFuncs > MaxHashFuncs {
		return fmt.Errorf("%w: %d", ErrTooManyHashFuncs, hashFuncs)
	}
	return nil
}

// newFilter builds a filter that takes ownership of data. The caller has
// checked the caps.
func newFilter(data []byte, hashFuncs, tweak uint32, flags UpdateFlag) *Filter {
	f := &Filter{
		bits:      data,
		hashFuncs: hashFuncs,
		tweak:     tweak,
		flags:     flags,
		nBits:     uint32(len(data)) * bitsPerByte,
	}
	if f.nBits > 0 {
		f.mod = newFastMod(f.nBits)
	}
	for i := range hashFuncs {
		f.seeds[i] = i*seedStep + tweak
	}
	f.set = uint32(popcount(data))
	return f
}

// Clone returns a deep copy of the filter.
func (f *Filter) Clone() *Filter {
	c := *f
	c.bits = append([]byte(nil), f.bits...)
	return &c
}

// Add inserts data into the filter. On a zero-length filter it does
// nothing, as Core (CVE-2013-5700).
func (f *Filter) Add(data []byte) {
	k := int(f.hashFuncs)
	if f.nBits == 0 {
		return
	}
	i := 0
	for ; i+1 < k; i += 2 {
		h0, h1 := murmurHash3Pair(f.seeds[i], f.seeds[i+1], data)
		f.setBit(h0)
		f.setBit(h1)
	}
	if i < k {
		f.setBit(MurmurHash3(f.seeds[i], data))
	}
}

// AddOutPoint inserts an outpoint serialized as Core does: the 32-byte txid
// in internal byte order followed by the 4-byte little-endian index.
func (f *Filter) AddOutPoint(op *wire.OutPoint) {
	buf := serializeOutPoint(op)
	f.Add(buf[:])
}

// Matches reports whether data may be in the filter: false means it is
// certainly not. A zero-length filter matches everything, as Core
// (CVE-2013-5700); btcutil/bloom divides by zero on it.
//
// The hash functions are evaluated two at a time: MurmurHash3's rounds form
// one dependency chain per seed, so two interleaved chains cost about as
// much as one, and a non-member of a filter at its design fill fails within
// the first two probes three times in four. The result is the same as
// probing one hash function at a time.
func (f *Filter) Matches(data []byte) bool {
	k := int(f.hashFuncs)
	if f.nBits == 0 || k == 0 {
		return true
	}
	switch len(data) {
	case hash160Len:
		return f.matches20((*[hash160Len]byte)(data))
	case compressedPubKeyLen:
		return f.matches33((*[compressedPubKeyLen]byte)(data))
	}
	i := 0
	for ; i+1 < k; i += 2 {
		h0, h1 := murmurHash3Pair(f.seeds[i], f.seeds[i+1], data)
		if f.bit(h0)&f.bit(h1) == 0 {
			return false
		}
	}
	if i < k {
		return f.bit(MurmurHash3(f.seeds[i], data)) != 0
	}
	return true
}

// matches20 is Matches for a 20-byte element (a HASH160), with the
// unrolled pair hash.
func (f *Filter) matches20(d *[hash160Len]byte) bool {
	k := int(f.hashFuncs)
	i := 0
	for ; i+1 < k; i += 2 {
		h0, h1 := murmurHash3Pair20(f.seeds[i], f.seeds[i+1], d)
		if f.bit(h0)&f.bit(h1) == 0 {
			return false
		}
	}
	if i < k {
		return f.bit(MurmurHash3(f.seeds[i], d[:])) != 0
	}
	return true
}

// matches33 is Matches for a 33-byte element (a compressed public key),
// with the unrolled pair hash.
func (f *Filter) matches33(d *[compressedPubKeyLen]byte) bool {
	k := int(f.hashFuncs)
	i := 0
	for ; i+1 < k; i += 2 {
		h0, h1 := murmurHash3Pair33(f.seeds[i], f.seeds[i+1], d)
		if f.bit(h0)&f.bit(h1) == 0 {
			return false
		}
	}
	if i < k {
		return f.bit(MurmurHash3(f.seeds[i], d[:])) != 0
	}
	return true
}

// MatchesOutPoint reports whether the serialized outpoint may be in the
// filter.
func (f *Filter) MatchesOutPoint(op *wire.OutPoint) bool {
	buf := serializeOutPoint(op)
	return f.Matches(buf[:])
}

// bit returns 1 when the bit that hash h selects is set, else 0. It is
// arithmetic rather than boolean so two probes combine without a branch.
func (f *Filter) bit(h uint32) byte {
	idx := f.mod.mod(h)
	return f.bits[idx>>byteIndexShift] >> (idx & bitInByteMask) & 1
}

// setBit sets the bit that hash h selects and counts it when it was not
// set.
func (f *Filter) setBit(h uint32) {
	idx := f.mod.mod(h)
	b := &f.bits[idx>>byteIndexShift]
	mask := byte(1) << (idx & bitInByteMask)
	if *b&mask == 0 {
		*b |= mask
		f.set++
	}
}

// serializeOutPoint returns txid || LE32(index).
func serializeOutPoint(op *wire.OutPoint) [outPointSize]byte {
	var buf [outPointSize]byte
	copy(buf[:], op.Hash[:])
	binary.LittleEndian.PutUint32(buf[len(op.Hash):], op.Index)
	return buf
}

// Size returns the filter's length in bytes.
func (f *Filter) Size() int { return len(f.bits) }

// NumBits returns the filter's length in bits.
func (f *Filter) NumBits() uint64 { return uint64(f.nBits) }

// HashFuncs returns the number of hash functions.
func (f *Filter) HashFuncs() uint32 { return f.hashFuncs }

// Tweak returns the random value added to every hash seed.
func (f *Filter) Tweak() uint32 { return f.tweak }

// Flags returns the filter's update flags byte.
func (f *Filter) Flags() UpdateFlag { return f.flags }

// Bits returns the filter's bit array without copying. Callers must not
// modify it; use Clone or MsgFilterLoad for a copy.
func (f *Filter) Bits() []byte { return f.bits[:len(f.bits):len(f.bits)] }

// BitsSet returns the number of bits set in the filter (kept as bits are
// set: no pass over the array).
func (f *Filter) BitsSet() uint64 { return uint64(f.set) }

// popcount counts the bits set in data.
func popcount(data []byte) int {
	var n int
	for len(data) >= wordBytes {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(data))
		data = data[wordBytes:]
	}
	for _, b := range data {
		n += bits.OnesCount8(b)
	}
	return n
}

// EstimatedElements returns the element count an observer infers from the
// bits set: m^ = -(n/k) ln(1 - X/n). See EstimateElements.
func (f *Filter) EstimatedElements() float64 {
	return EstimateElements(f.NumBits(), f.hashFuncs, f.BitsSet())
}

// FPRate returns the theoretical false-positive rate of this filter's size
// and hash count after the given number of insertions. See
// FalsePositiveRate.
func (f *Filter) FPRate(elements float64) float64 {
	return FalsePositiveRate(f.NumBits(), f.hashFuncs, elements)
}

// CurrentFPRate returns (X/n)^k, the probability that an element never
// inserted matches this exact bit array when its k probes fall uniformly.
// A zero-length filter or one with no hash functions matches everything and
// returns 1.
func (f *Filter) CurrentFPRate() float64 {
	if f.nBits == 0 || f.hashFuncs == 0 {
		return 1
	}
	return math.Pow(float64(f.BitsSet())/float64(f.nBits), float64(f.hashFuncs))
}
