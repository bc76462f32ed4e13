package bip37

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// MaxMatchBatch is the largest number of elements Matcher.Match20 and
// Matcher.Match33 test in one call: one bit of their result per element.
const MaxMatchBatch = 64

// Blocks of the batch element sizes.
const (
	hash160Blocks = hash160Len / murmurBlock          // 5, no tail
	pubKeyBlocks  = compressedPubKeyLen / murmurBlock // 8, and a 1-byte tail
	// matcherPad is the zero padding after a Matcher's copy of the bits:
	// the vector kernel reads the bits four bytes at a time.
	matcherPad = 8
)

// Matcher tests many elements against a snapshot of a filter, faster than
// Filter.Matches one element at a time: an analyzer streaming billions of
// candidates through a filter spends nearly all its time here. Its answer
// for an element is exactly Filter.Matches's at the time of NewMatcher;
// later changes to the filter are not seen. A Matcher is read-only and
// safe for concurrent use.
type Matcher struct {
	bits     []byte // the filter's bits followed by matcherPad zero bytes
	k        int
	matchAll bool // a zero-length filter or one without hash functions
	mod      fastMod
	seeds    [MaxHashFuncs]uint32
}

// NewMatcher returns a Matcher over a copy of f's current bits.
func NewMatcher(f *Filter) *Matcher {
	m := &Matcher{
		bits:     make([]byte, len(f.bits)+matcherPad),
		k:        int(f.hashFuncs),
		matchAll: f.nBits == 0 || f.hashFuncs == 0,
		mod:      f.mod,
		seeds:    f.seeds,
	}
	copy(m.bits, f.bits)
	return m
}

// batchMask returns the mask with bits 0..n-1 set: every element of a
// batch of n matches.
func batchMask(n int) uint64 {
	if n >= MaxMatchBatch {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// checkBatch panics when a batch is negative or larger than MaxMatchBatch.
func checkBatch(n int) {
	if n < 0 || n > MaxMatchBatch {
		panic(fmt.Sprintf("bip37: match batch of %d elements, more than %d", n, MaxMatchBatch))
	}
}

// set returns 1 when the bit that hash h selects is set, else 0, as
// Filter.bit, with the two-multiplication remainder (fastMod.mod31).
func (m *Matcher) set(h uint32) int {
	idx := m.mod.mod31(h)
	return int(m.bits[idx>>byteIndexShift] >> (idx & bitInByteMask) & 1)
}

// Words20 is a batch of up to MaxMatchBatch 20-byte elements stored
// word-major, the layout Matcher.Match20Words reads eight elements at a
// time: w[b][i] is bytes 4b to 4b+3 of element i, little-endian.
type Words20 [hash160Blocks][MaxMatchBatch]uint32

// Set stores the 20-byte element e as element i of w.
func (w *Words20) Set(i int, e *[hash160Len]byte) {
	i &= MaxMatchBatch - 1
	w[0][i] = binary.LittleEndian.Uint32(e[0:4])
	w[1][i] = binary.LittleEndian.Uint32(e[4:8])
	w[2][i] = binary.LittleEndian.Uint32(e[8:12])
	w[3][i] = binary.LittleEndian.Uint32(e[12:16])
	w[4][i] = binary.LittleEndian.Uint32(e[16:20])
}

// Match20 tests up to MaxMatchBatch 20-byte elements (HASH160s) and returns
// a mask whose bit i is set when d[i] may be in the filter: bit i is
// Filter.Matches(d[i][:]) exactly. It panics when len(d) > MaxMatchBatch.
// Callers that can produce their elements as words avoid a copy with
// Match20Words.
func (m *Matcher) Match20(d [][hash160Len]byte) uint64 {
	checkBatch(len(d))
	var w Words20
	for i := range d {
		w.Set(i, &d[i])
	}
	return m.Match20Words(&w, len(d))
}

// Match20Words is Match20 for the first n elements of w. It panics when n
// is negative or larger than MaxMatchBatch.
//
// It takes the elements one hash function at a time: it mixes every
// element's data blocks once for all hash functions, probes the first hash
// functions for every element (sixteen elements at a time with AVX2 on
// amd64), and probes each further hash function only for the survivors,
// which it compacts without a branch. MurmurHash3 is one long dependency
// chain per element and seed; several chains in flight with no
// data-dependent branch let the CPU overlap them.
func (m *Matcher) Match20Words(w *Words20, n int) uint64 {
	checkBatch(n)
	if m.matchAll {
		return batchMask(n)
	}
	var (
		ks   blocks20
		live [MaxMatchBatch]uint8
	)
	j, vec, done := 0, uint64(0), 0
	if useAVX2 && m.k >= 2 && n >= 16 {
		done = n &^ 15
		vec = match20AVX2(w, done, &ks, m.seeds[0], m.seeds[1], &m.bits[0], m.mod.m, m.mod.d)
	}
	for i := done; i < n; i++ {
		b := i & (MaxMatchBatch - 1)
		ks[0][b] = murmurMixK(w[0][b])
		ks[1][b] = murmurMixK(w[1][b])
		ks[2][b] = murmurMixK(w[2][b])
		ks[3][b] = murmurMixK(w[3][b])
		ks[4][b] = murmurMixK(w[4][b])
		live[(i-done)&(MaxMatchBatch-1)] = uint8(i)
	}
	// The elements the vector kernel did not take go through its hash
	// functions here, then join its survivors.
	rest := n - done
	if done > 0 {
		for ; j < 2 && rest > 0; j++ {
			rest = m.pass20(m.seeds[j], &ks, &live, rest)
		}
		rest = appendLive(&live, rest, vec)
		j = 2
	}
	for ; j < m.k && rest > 0; j++ {
		rest = m.pass20(m.seeds[j], &ks, &live, rest)
	}
	return liveMask(live[:rest])
}

// appendLive appends the indexes of mask's set bits to live[:n] and returns
// the new length.
func appendLive(live *[MaxMatchBatch]uint8, n int, mask uint64) int {
	for ; mask != 0; mask &= mask - 1 {
		live[n&(MaxMatchBatch-1)] = uint8(bits.TrailingZeros64(mask))
		n++
	}
	return n
}

// blocks20 holds a batch's mixed data blocks, block-major: ks[b][i] is
// block b of element i.
type blocks20 [hash160Blocks][MaxMatchBatch]uint32

// pass20 probes the hash of the given seed for the elements live[:n] and
// compacts the survivors to the front of live, returning their number.
// Four elements go through the hash together, interleaved by hand (the Go
// compiler neither unrolls nor interleaves); the last one to three go one
// at a time (padding them to a group of four measured slower).
func (m *Matcher) pass20(seed uint32, ks *blocks20, live *[MaxMatchBatch]uint8, n int) int {
	kept, r := 0, 0
	for ; r+4 <= n; r += 4 {
		i0, i1, i2, i3 := live[r&(MaxMatchBatch-1)], live[(r+1)&(MaxMatchBatch-1)], live[(r+2)&(MaxMatchBatch-1)], live[(r+3)&(MaxMatchBatch-1)]
		b0, b1, b2, b3 := i0&(MaxMatchBatch-1), i1&(MaxMatchBatch-1), i2&(MaxMatchBatch-1), i3&(MaxMatchBatch-1)
		h0 := murmurRound(seed, ks[0][b0])
		h1 := murmurRound(seed, ks[0][b1])
		h2 := murmurRound(seed, ks[0][b2])
		h3 := murmurRound(seed, ks[0][b3])
		h0 = murmurRound(h0, ks[1][b0])
		h1 = murmurRound(h1, ks[1][b1])
		h2 = murmurRound(h2, ks[1][b2])
		h3 = murmurRound(h3, ks[1][b3])
		h0 = murmurRound(h0, ks[2][b0])
		h1 = murmurRound(h1, ks[2][b1])
		h2 = murmurRound(h2, ks[2][b2])
		h3 = murmurRound(h3, ks[2][b3])
		h0 = murmurRound(h0, ks[3][b0])
		h1 = murmurRound(h1, ks[3][b1])
		h2 = murmurRound(h2, ks[3][b2])
		h3 = murmurRound(h3, ks[3][b3])
		h0 = murmurRound(h0, ks[4][b0])
		h1 = murmurRound(h1, ks[4][b1])
		h2 = murmurRound(h2, ks[4][b2])
		h3 = murmurRound(h3, ks[4][b3])
		s0 := m.set(murmurFinish(h0 ^ hash160Len))
		s1 := m.set(murmurFinish(h1 ^ hash160Len))
		s2 := m.set(murmurFinish(h2 ^ hash160Len))
		s3 := m.set(murmurFinish(h3 ^ hash160Len))
		kept = keep4(live, kept, i0, i1, i2, i3, s0, s1, s2, s3)
	}
	for ; r < n; r++ {
		i := live[r&(MaxMatchBatch-1)]
		b := i & (MaxMatchBatch - 1)
		h := murmurRound(murmurRound(murmurRound(murmurRound(murmurRound(seed, ks[0][b]), ks[1][b]), ks[2][b]), ks[3][b]), ks[4][b])
		live[kept&(MaxMatchBatch-1)] = i
		kept += m.set(murmurFinish(h ^ hash160Len))
	}
	return kept
}

// keep4 writes the survivors among i0..i3 (those whose s is 1) to live
// from kept on, without a branch, and returns the new count. The reads of
// the group precede these writes, and kept never passes the group's
// first slot, so the compaction is in place.
func keep4(live *[MaxMatchBatch]uint8, kept int, i0, i1, i2, i3 uint8, s0, s1, s2, s3 int) int {
	live[kept&(MaxMatchBatch-1)] = i0
	kept += s0
	live[kept&(MaxMatchBatch-1)] = i1
	kept += s1
	live[kept&(MaxMatchBatch-1)] = i2
	kept += s2
	live[kept&(MaxMatchBatch-1)] = i3
	return kept + s3
}

// Match33 is Match20 for 33-byte elements (compressed public keys): bit i
// of the result is Filter.Matches(d[i][:]).
func (m *Matcher) Match33(d [][compressedPubKeyLen]byte) uint64 {
	checkBatch(len(d))
	if m.matchAll {
		return batchMask(len(d))
	}
	var (
		ks   blocks33
		live [MaxMatchBatch]uint8
	)
	for i := range d {
		e := &d[i]
		ks[0][i&(MaxMatchBatch-1)] = murmurMixK(binary.LittleEndian.Uint32(e[0:4]))
		ks[1][i&(MaxMatchBatch-1)] = murmurMixK(binary.LittleEndian.Uint32(e[4:8]))
		ks[2][i&(MaxMatchBatch-1)] = murmurMixK(binary.LittleEndian.Uint32(e[8:12]))
		ks[3][i&(MaxMatchBatch-1)] = murmurMixK(binary.LittleEndian.Uint32(e[12:16]))
		ks[4][i&(MaxMatchBatch-1)] = murmurMixK(binary.LittleEndian.Uint32(e[16:20]))
		ks[5][i&(MaxMatchBatch-1)] = murmurMixK(binary.LittleEndian.Uint32(e[20:24]))
		ks[6][i&(MaxMatchBatch-1)] = murmurMixK(binary.LittleEndian.Uint32(e[24:28]))
		ks[7][i&(MaxMatchBatch-1)] = murmurMixK(binary.LittleEndian.Uint32(e[28:32]))
		ks[8][i&(MaxMatchBatch-1)] = murmurMixK(uint32(e[32])) ^ compressedPubKeyLen
		live[i&(MaxMatchBatch-1)] = uint8(i)
	}
	n := len(d)
	for j := 0; j < m.k && n > 0; j++ {
		n = m.pass33(m.seeds[j], &ks, &live, n)
	}
	return liveMask(live[:n])
}

// blocks33 holds a batch's mixed blocks of 33-byte elements, block-major;
// ks[8] is the mixed tail xored with the length.
type blocks33 [pubKeyBlocks + 1][MaxMatchBatch]uint32

// pass33 is pass20 for 33-byte elements.
func (m *Matcher) pass33(seed uint32, ks *blocks33, live *[MaxMatchBatch]uint8, n int) int {
	kept, r := 0, 0
	for ; r+4 <= n; r += 4 {
		i0, i1, i2, i3 := live[r&(MaxMatchBatch-1)], live[(r+1)&(MaxMatchBatch-1)], live[(r+2)&(MaxMatchBatch-1)], live[(r+3)&(MaxMatchBatch-1)]
		b0, b1, b2, b3 := i0&(MaxMatchBatch-1), i1&(MaxMatchBatch-1), i2&(MaxMatchBatch-1), i3&(MaxMatchBatch-1)
		h0 := murmurRound(seed, ks[0][b0])
		h1 := murmurRound(seed, ks[0][b1])
		h2 := murmurRound(seed, ks[0][b2])
		h3 := murmurRound(seed, ks[0][b3])
		h0 = murmurRound(h0, ks[1][b0])
		h1 = murmurRound(h1, ks[1][b1])
		h2 = murmurRound(h2, ks[1][b2])
		h3 = murmurRound(h3, ks[1][b3])
		h0 = murmurRound(h0, ks[2][b0])
		h1 = murmurRound(h1, ks[2][b1])
		h2 = murmurRound(h2, ks[2][b2])
		h3 = murmurRound(h3, ks[2][b3])
		h0 = murmurRound(h0, ks[3][b0])
		h1 = murmurRound(h1, ks[3][b1])
		h2 = murmurRound(h2, ks[3][b2])
		h3 = murmurRound(h3, ks[3][b3])
		h0 = murmurRound(h0, ks[4][b0])
		h1 = murmurRound(h1, ks[4][b1])
		h2 = murmurRound(h2, ks[4][b2])
		h3 = murmurRound(h3, ks[4][b3])
		h0 = murmurRound(h0, ks[5][b0])
		h1 = murmurRound(h1, ks[5][b1])
		h2 = murmurRound(h2, ks[5][b2])
		h3 = murmurRound(h3, ks[5][b3])
		h0 = murmurRound(h0, ks[6][b0])
		h1 = murmurRound(h1, ks[6][b1])
		h2 = murmurRound(h2, ks[6][b2])
		h3 = murmurRound(h3, ks[6][b3])
		h0 = murmurRound(h0, ks[7][b0])
		h1 = murmurRound(h1, ks[7][b1])
		h2 = murmurRound(h2, ks[7][b2])
		h3 = murmurRound(h3, ks[7][b3])
		s0 := m.set(murmurFinish(h0 ^ ks[8][b0]))
		s1 := m.set(murmurFinish(h1 ^ ks[8][b1]))
		s2 := m.set(murmurFinish(h2 ^ ks[8][b2]))
		s3 := m.set(murmurFinish(h3 ^ ks[8][b3]))
		kept = keep4(live, kept, i0, i1, i2, i3, s0, s1, s2, s3)
	}
	for ; r < n; r++ {
		i := live[r&(MaxMatchBatch-1)]
		live[kept&(MaxMatchBatch-1)] = i
		kept += m.set(hash33(seed, ks, i&(MaxMatchBatch-1)))
	}
	return kept
}

// hash33 finishes MurmurHash3 of element b of ks.
func hash33(seed uint32, ks *blocks33, b uint8) uint32 {
	h := murmurRound(murmurRound(murmurRound(murmurRound(seed, ks[0][b]), ks[1][b]), ks[2][b]), ks[3][b])
	h = murmurRound(murmurRound(murmurRound(murmurRound(h, ks[4][b]), ks[5][b]), ks[6][b]), ks[7][b])
	return murmurFinish(h ^ ks[8][b])
}

// liveMask returns the mask with the bits at the given indexes set.
func liveMask(live []uint8) uint64 {
	var mask uint64
	for _, i := range live {
		mask |= 1 << (i & (MaxMatchBatch - 1))
	}
	return mask
}
