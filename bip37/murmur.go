package bip37

import (
	"encoding/binary"
	"math/bits"
)

// MurmurHash3 (x86, 32-bit) constants as used by Bitcoin Core's hash.cpp.
const (
	murmurC1    = 0xcc9e2d51
	murmurC2    = 0x1b873593
	murmurR1    = 15
	murmurR2    = 13
	murmurM     = 5
	murmurN     = 0xe6546b64
	murmurF1    = 0x85ebca6b
	murmurF2    = 0xc2b2ae35
	murmurS1    = 16
	murmurS2    = 13
	murmurBlock = 4
)

// MurmurHash3 returns the 32-bit x86 MurmurHash3 of data with the given
// seed, as Bitcoin Core computes it for bloom filters.
func MurmurHash3(seed uint32, data []byte) uint32 {
	length := uint32(len(data))
	h := seed
	for len(data) >= murmurBlock {
		h = murmurRound(h, murmurMixK(binary.LittleEndian.Uint32(data)))
		data = data[murmurBlock:]
	}
	return murmurFinish(h ^ murmurMixK(murmurTail(data)) ^ length)
}

// murmurHash3Pair returns MurmurHash3(seed0, data) and
// MurmurHash3(seed1, data) in one pass. The two hash chains are independent,
// so the CPU overlaps them and the pair costs little more than one hash.
func murmurHash3Pair(seed0, seed1 uint32, data []byte) (uint32, uint32) {
	length := uint32(len(data))
	h0, h1 := seed0, seed1
	// Two blocks per iteration halve the loop bookkeeping, which competes
	// with the two hash chains for issue slots.
	for len(data) >= 2*murmurBlock {
		k0 := murmurMixK(binary.LittleEndian.Uint32(data))
		k1 := murmurMixK(binary.LittleEndian.Uint32(data[murmurBlock:]))
		h0 = murmurRound(murmurRound(h0, k0), k1)
		h1 = murmurRound(murmurRound(h1, k0), k1)
		data = data[2*murmurBlock:]
	}
	if len(data) >= murmurBlock {
		k := murmurMixK(binary.LittleEndian.Uint32(data))
		h0 = murmurRound(h0, k)
		h1 = murmurRound(h1, k)
		data = data[murmurBlock:]
	}
	final := murmurMixK(murmurTail(data)) ^ length
	return murmurFinish(h0 ^ final), murmurFinish(h1 ^ final)
}

// murmurMixK scrambles one 4-byte block. It depends only on the data, not
// on the seed, so murmurHash3Pair mixes each block once for both seeds.
// murmurMixK(0) == 0, which lets the tail of a block-aligned input be mixed
// unconditionally.
func murmurMixK(k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, murmurR1)
	return k * murmurC2
}

// murmurRound folds one mixed block into the running hash.
func murmurRound(h, k uint32) uint32 {
	h ^= k
	h = bits.RotateLeft32(h, murmurR2)
	return h*murmurM + murmurN
}

// murmurTail packs the final 0-3 bytes little-endian.
func murmurTail(tail []byte) uint32 {
	var k uint32
	switch len(tail) {
	case 3:
		k = uint32(tail[2])<<16 | uint32(tail[1])<<8 | uint32(tail[0])
	case 2:
		k = uint32(tail[1])<<8 | uint32(tail[0])
	case 1:
		k = uint32(tail[0])
	}
	return k
}

// murmurFinish is MurmurHash3's final avalanche (fmix32). The caller has
// already xored in the mixed tail and the length.
func murmurFinish(h uint32) uint32 {
	h ^= h >> murmurS1
	h *= murmurF1
	h ^= h >> murmurS2
	h *= murmurF2
	h ^= h >> murmurS1
	return h
}
