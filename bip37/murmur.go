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

// compressedPubKeyLen is the length of a compressed public key, the most
// common element after 20-byte hashes; murmurHash3Pair33 is unrolled for it.
const compressedPubKeyLen = 33

// murmurHash3Pair33 is murmurHash3Pair for a 33-byte input, unrolled with
// constant offsets into an array so that no bounds check or loop counter
// competes with the two hash chains.
func murmurHash3Pair33(seed0, seed1 uint32, d *[compressedPubKeyLen]byte) (uint32, uint32) {
	k0 := murmurMixK(binary.LittleEndian.Uint32(d[0:4]))
	k1 := murmurMixK(binary.LittleEndian.Uint32(d[4:8]))
	k2 := murmurMixK(binary.LittleEndian.Uint32(d[8:12]))
	k3 := murmurMixK(binary.LittleEndian.Uint32(d[12:16]))
	k4 := murmurMixK(binary.LittleEndian.Uint32(d[16:20]))
	k5 := murmurMixK(binary.LittleEndian.Uint32(d[20:24]))
	k6 := murmurMixK(binary.LittleEndian.Uint32(d[24:28]))
	k7 := murmurMixK(binary.LittleEndian.Uint32(d[28:32]))
	h0 := murmurRound(murmurRound(murmurRound(murmurRound(seed0, k0), k1), k2), k3)
	h1 := murmurRound(murmurRound(murmurRound(murmurRound(seed1, k0), k1), k2), k3)
	h0 = murmurRound(murmurRound(murmurRound(murmurRound(h0, k4), k5), k6), k7)
	h1 = murmurRound(murmurRound(murmurRound(murmurRound(h1, k4), k5), k6), k7)
	final := murmurMixK(uint32(d[32])) ^ compressedPubKeyLen
	return murmurFinish(h0 ^ final), murmurFinish(h1 ^ final)
}

// hash160Len is the length of a HASH160 (P2PKH, P2WPKH, P2SH), the most
// common element; murmurHash3Pair20 is unrolled for it.
const hash160Len = 20

// murmurHash3Pair20 is murmurHash3Pair for a 20-byte input (five blocks,
// no tail), unrolled like murmurHash3Pair33.
func murmurHash3Pair20(seed0, seed1 uint32, d *[hash160Len]byte) (uint32, uint32) {
	k0 := murmurMixK(binary.LittleEndian.Uint32(d[0:4]))
	k1 := murmurMixK(binary.LittleEndian.Uint32(d[4:8]))
	k2 := murmurMixK(binary.LittleEndian.Uint32(d[8:12]))
	k3 := murmurMixK(binary.LittleEndian.Uint32(d[12:16]))
	k4 := murmurMixK(binary.LittleEndian.Uint32(d[16:20]))
	h0 := murmurRound(murmurRound(murmurRound(murmurRound(murmurRound(seed0, k0), k1), k2), k3), k4)
	h1 := murmurRound(murmurRound(murmurRound(murmurRound(murmurRound(seed1, k0), k1), k2), k3), k4)
	return murmurFinish(h0 ^ hash160Len), murmurFinish(h1 ^ hash160Len)
}
