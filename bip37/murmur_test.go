package bip37

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMurmurHash3 checks the vectors of Core's hash_tests.cpp (also in
// btcutil/bloom's murmurhash3_test.go).
func TestMurmurHash3(t *testing.T) {
	tests := []struct {
		seed uint32
		data []byte
		want uint32
	}{
		{0x00000000, []byte{}, 0x00000000},
		{0xfba4c795, []byte{}, 0x6a396f08},
		{0xffffffff, []byte{}, 0x81f16f39},
		{0x00000000, []byte{0x00}, 0x514e28b7},
		{0xfba4c795, []byte{0x00}, 0xea3f0b17},
		{0x00000000, []byte{0xff}, 0xfd6cf10d},
		{0x00000000, []byte{0x00, 0x11}, 0x16c6b7ab},
		{0x00000000, []byte{0x00, 0x11, 0x22}, 0x8eb51c3d},
		{0x00000000, []byte{0x00, 0x11, 0x22, 0x33}, 0xb4471bf8},
		{0x00000000, []byte{0x00, 0x11, 0x22, 0x33, 0x44}, 0xe2301fa8},
		{0x00000000, []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}, 0xfc2e4a15},
		{0x00000000, []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66}, 0xb074502c},
		{0x00000000, []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}, 0x8034d2a0},
		{0x00000000, []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}, 0xb4698def},
	}
	for i, tc := range tests {
		got := MurmurHash3(tc.seed, tc.data)
		require.Equal(t, tc.want, got, "#%d MurmurHash3(%#x, %x) = %#08x, want %#08x", i, tc.seed, tc.data, got, tc.want)
		got = referenceMurmur3(tc.seed, tc.data)
		require.Equal(t, tc.want, got, "#%d referenceMurmur3(%#x, %x) = %#08x, want %#08x", i, tc.seed, tc.data, got, tc.want)
	}
}

// TestFastModExact compares fastMod with the % operator on edge values.
func TestFastModExact(t *testing.T) {
	divisors := []uint32{1, 2, 3, 7, 8, 24, 1000, 19168, 10152, maxFilterBits - 8, maxFilterBits, 1<<31 - 1, 1 << 31, ^uint32(0)}
	values := []uint32{0, 1, 2, 7, 8, 9, 1<<16 - 1, 1 << 16, 1<<31 - 1, 1 << 31, ^uint32(0) - 1, ^uint32(0)}
	for _, d := range divisors {
		fm := newFastMod(d)
		for _, a := range values {
			for _, v := range []uint32{a, a - d, a + d, d - 1, d, d + 1} {
				got, want := fm.mod(v), v%d
				require.Equal(t, want, got, "fastMod(%d).mod(%d) = %d, want %d", d, v, got, want)
			}
		}
	}
}

// TestUnrolledPairsMatchMurmur checks the unrolled 20- and 33-byte pair
// hashes against MurmurHash3 on random inputs and seeds.
func TestUnrolledPairsMatchMurmur(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 20000; i++ {
		s0, s1 := r.Uint32(), r.Uint32()
		var a [hash160Len]byte
		var b [compressedPubKeyLen]byte
		r.Read(a[:])
		r.Read(b[:])
		h0, h1 := murmurHash3Pair20(s0, s1, &a)
		require.Equal(t, MurmurHash3(s0, a[:]), h0, "20 bytes %x seeds %d %d: pair %d %d", a, s0, s1, h0, h1)
		require.Equal(t, MurmurHash3(s1, a[:]), h1, "20 bytes %x seeds %d %d: pair %d %d", a, s0, s1, h0, h1)
		h0, h1 = murmurHash3Pair33(s0, s1, &b)
		require.Equal(t, MurmurHash3(s0, b[:]), h0, "33 bytes %x seeds %d %d: pair %d %d", b, s0, s1, h0, h1)
		require.Equal(t, MurmurHash3(s1, b[:]), h1, "33 bytes %x seeds %d %d: pair %d %d", b, s0, s1, h0, h1)
	}
}
