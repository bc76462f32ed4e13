package bip37

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// batchFilter returns a filter of the given size and hash count with a
// random tweak, filled with members (20- and 33-byte) until about fill of
// its bits are set, and the members.
func batchFilter(rng *rand.Rand, size int, k uint32, fill float64) (*Filter, [][]byte) {
	f := newFilter(make([]byte, size), k, rng.Uint32(), UpdateNone)
	var members [][]byte
	for size > 0 && k > 0 && float64(f.BitsSet()) < fill*float64(f.NumBits()) {
		m := randomElements(rng, 1, []int{hash160Len, compressedPubKeyLen}[rng.IntN(2)])[0]
		f.Add(m)
		members = append(members, m)
	}
	return f, members
}

// checkMatcherAgrees fails t unless a Matcher of f, with and without its
// vector kernel, agrees with f.Matches on the elements of elems (the first
// MaxMatchBatch of each size).
func checkMatcherAgrees(t testing.TB, f *Filter, elems [][]byte) {
	t.Helper()
	var (
		b20      [][hash160Len]byte
		b33      [][compressedPubKeyLen]byte
		w20, w33 []bool
	)
	for _, e := range elems {
		switch {
		case len(e) == hash160Len && len(b20) < MaxMatchBatch:
			b20, w20 = append(b20, [hash160Len]byte(e)), append(w20, f.Matches(e))
		case len(e) == compressedPubKeyLen && len(b33) < MaxMatchBatch:
			b33, w33 = append(b33, [compressedPubKeyLen]byte(e)), append(w33, f.Matches(e))
		}
	}
	m := NewMatcher(f)
	check := func(size int, vector bool, got uint64, want []bool) {
		t.Helper()
		for i, w := range want {
			require.Equal(t, w, got>>i&1 == 1, "%d-byte element %d of %d (k=%d, %d bits, vector %v): Matcher %v, Matches %v", size, i, len(want), f.HashFuncs(), f.NumBits(), vector, !w, w)
		}
		require.False(t, len(want) < MaxMatchBatch && got>>len(want) != 0, "%d-byte batch of %d (vector %v) sets bits beyond it: %x", size, len(want), vector, got)
	}
	for _, vector := range []bool{true, false} {
		restore := setAVX2(vector)
		check(hash160Len, vector, m.Match20(b20), w20)
		check(compressedPubKeyLen, vector, m.Match33(b33), w33)
		restore()
	}
}

// randomBatch returns n elements of 20 and 33 bytes, about a quarter of
// them drawn from members.
func randomBatch(rng *rand.Rand, n int, members [][]byte) [][]byte {
	elems := make([][]byte, n)
	for i := range elems {
		if len(members) > 0 && rng.IntN(4) == 0 {
			elems[i] = members[rng.IntN(len(members))]
		} else {
			elems[i] = randomElements(rng, 1, []int{hash160Len, compressedPubKeyLen}[rng.IntN(2)])[0]
		}
	}
	return elems
}

// TestMatcherAgreesWithMatches compares Matcher with Filter.Matches on
// every batch length, members and non-members mixed, over filters from
// empty (match-all) and hashless to saturated, with odd and even hash
// counts up to MaxHashFuncs, on the vector kernel and the portable path.
func TestMatcherAgreesWithMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	tests := []struct {
		name string
		size int
		k    uint32
		fill float64
	}{
		{"zero-length", 0, 10, 0},
		{"no hash functions", 100, 0, 0},
		{"one hash", 64, 1, 0.5},
		{"two hashes", 64, 2, 0.5},
		{"bitcoinj-sized", 1269, 10, 0.42},
		{"odd k, dense", 300, 7, 0.8},
		{"max k", 2000, MaxHashFuncs, 0.6},
		{"saturated", 10, 3, 1},
		{"one byte", 1, 2, 0.5},
		{"three bytes", 3, 4, 0.6},
		{"largest", MaxFilterSize, 5, 0.3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, members := batchFilter(rng, tc.size, tc.k, tc.fill)
			for n := 0; n <= MaxMatchBatch; n++ {
				for range 8 {
					checkMatcherAgrees(t, f, randomBatch(rng, 2*n, members))
				}
			}
		})
	}
}

// TestMatcherIsASnapshot checks that a Matcher does not see elements added
// to its filter after NewMatcher.
func TestMatcherIsASnapshot(t *testing.T) {
	f := newFilter(make([]byte, 100), 5, 7, UpdateNone)
	m := NewMatcher(f)
	e := [hash160Len]byte{1, 2, 3}
	f.Add(e[:])
	require.True(t, f.Matches(e[:]), "Matcher followed its filter")
	require.Equal(t, uint64(0), m.Match20([][hash160Len]byte{e}), "Matcher followed its filter")
	require.Equal(t, uint64(1), NewMatcher(f).Match20([][hash160Len]byte{e}), "Matcher followed its filter")
}

func TestMatcherPanicsOnOversizedBatch(t *testing.T) {
	m := NewMatcher(newFilter(make([]byte, 10), 3, 0, UpdateNone))
	for name, call := range map[string]func(){
		"Match20": func() { m.Match20(make([][hash160Len]byte, MaxMatchBatch+1)) },
		"Match33": func() { m.Match33(make([][compressedPubKeyLen]byte, MaxMatchBatch+1)) },
	} {
		func() {
			defer func() {
				require.NotNil(t, recover(), "%s of %d elements did not panic", name, MaxMatchBatch+1)
			}()
			call()
		}()
	}
}

// TestFastModMod31 compares mod31 with the % operator on edge values and
// random ones, for every divisor a filter can have at the edges of the
// range and random ones in it.
func TestFastModMod31(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	divisors := []uint32{1, 2, 3, 7, 8, 24, 1000, 10152, 19168, maxFilterBits - 8, maxFilterBits, 1<<31 - 1, 1 << 31}
	for range 2000 {
		divisors = append(divisors, 8*(1+rng.Uint32N(MaxFilterSize)), 1+rng.Uint32N(1<<31))
	}
	values := []uint32{0, 1, 2, 7, 8, 9, 1<<16 - 1, 1 << 16, 1<<31 - 1, 1 << 31, ^uint32(0) - 1, ^uint32(0)}
	for _, d := range divisors {
		fm := newFastMod(d)
		vs := values
		for range 64 {
			vs = append(vs, rng.Uint32())
		}
		for _, a := range vs {
			q := a / d
			for _, v := range []uint32{a, a - d, a + d, d - 1, d, d + 1, q * d, q*d - 1, q*d + d - 1} {
				// The guard keeps require's reflection out of this
				// loop of millions of comparisons.
				if got, want := fm.mod31(v), v%d; got != want {
					require.Equal(t, want, got, "fastMod(%d).mod31(%d)", d, v)
				}
			}
		}
	}
}

// FuzzMatcher builds a filter from the input (size, hash count, tweak,
// members) and checks that Matcher agrees with Matches on the members and
// on fresh elements.
func FuzzMatcher(f *testing.F) {
	f.Add(uint16(1269), uint8(10), uint32(0x5eed), uint64(1), uint8(40))
	f.Add(uint16(0), uint8(3), uint32(0), uint64(2), uint8(5))
	f.Add(uint16(3), uint8(50), uint32(7), uint64(3), uint8(64))
	f.Fuzz(func(t *testing.T, size uint16, k uint8, tweak uint32, seed uint64, count uint8) {
		rng := rand.New(rand.NewPCG(seed, uint64(size)))
		fl := newFilter(make([]byte, int(size)%(MaxFilterSize+1)), uint32(k)%(MaxHashFuncs+1), tweak, UpdateNone)
		n := int(count) % (MaxMatchBatch + 1)
		var members [][]byte
		for i := range n {
			e := randomElements(rng, 1, []int{hash160Len, compressedPubKeyLen}[i%2])[0]
			if i%3 == 0 {
				fl.Add(e)
				members = append(members, e)
			}
		}
		checkMatcherAgrees(t, fl, randomBatch(rng, 2*n, members))
	})
}
