package joint

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/stretchr/testify/require"
)

// Benchmarks of the joint model on the target, 100 filters of
// 36,000 bytes (the BIP37 maximum), beside one AND pass over the same
// filters (what the meter and the analyzer do per group today):
//
//	go test -run '^$' -bench 'Joint100x36000|AND100x36000' ./privacy
//
// The filters' bits are random at half density (a filter at its design
// fill has half its bits set); the model's cost does not depend on how
// the bits came about. Variants:
//
//   - one-tweak: one tweak and k = 13 for all: one group of 100 filters
//     sharing 13 seeds (the worst case for a single AND);
//   - mixed-k: one tweak, k = 1..50: 50 nested groups;
//   - seed-steps: tweaks t + (i mod 10)*0xFBA4C795, k = 13: groups of
//     filters whose hash indexes are shifted against each other;
//   - fresh-tweaks: 100 tweaks: no seed shared;
//   - add-one: the 100th filter added to a model of 99 (one-tweak);
//   - filteradd: one element's bits added to one filter (one-tweak).
//
// The from-scratch variants include copying the 3.6 MB of bits into the
// model. BenchmarkAND100x36000/bytes is the AND as meterGroup.recompute
// and groupRates do it, a byte at a time; /words the same pass 64 bits at
// a time.

const (
	benchJointFilters = 100
	benchJointSize    = bip37.MaxFilterSize
	benchJointK       = 13
)

// benchJointFilterSet returns 100 random half-full 36,000-byte filters
// with the tweak and k of each index.
func benchJointFilterSet(b *testing.B, tweak func(i int) uint32, k func(i int) uint32) []*bip37.Filter {
	b.Helper()
	rng := rand.New(rand.NewPCG(51, 52))
	out := make([]*bip37.Filter, benchJointFilters)
	buf := make([]byte, benchJointSize)
	for i := range out {
		for x := range buf {
			buf[x] = byte(rng.Uint32())
		}
		f, err := bip37.NewFilterFromBits(buf, k(i), tweak(i), bip37.UpdateAll)
		if err != nil {
			require.NoError(b, err)
		}
		out[i] = f
	}
	return out
}

// benchSink keeps results alive.
var benchSink float64

func BenchmarkJoint100x36000(b *testing.B) {
	const tweak = 0x5eed
	sameK := func(int) uint32 { return benchJointK }
	variants := []struct {
		name  string
		tweak func(int) uint32
		k     func(int) uint32
	}{
		{"one-tweak", func(int) uint32 { return tweak }, sameK},
		{"mixed-k", func(int) uint32 { return tweak }, func(i int) uint32 { return uint32(1 + i%bip37.MaxHashFuncs) }},
		{"seed-steps", func(i int) uint32 { return tweak + uint32(i%10)*bip37.SeedStep }, sameK},
		{"fresh-tweaks", func(i int) uint32 { return tweak + uint32(i) }, sameK},
	}
	for _, v := range variants {
		fs := benchJointFilterSet(b, v.tweak, v.k)
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(benchJointFilters * benchJointSize)
			for b.Loop() {
				benchSink = JointRate(fs)
			}
		})
	}
	fs := benchJointFilterSet(b, func(int) uint32 { return tweak }, sameK)
	b.Run("add-one", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			j := NewJoint()
			for _, f := range fs[:benchJointFilters-1] {
				j.Add(f)
			}
			j.Rate()
			b.StartTimer()
			j.Add(fs[benchJointFilters-1])
			benchSink = j.Rate()
		}
	})
	b.Run("filteradd", func(b *testing.B) {
		j := NewJoint()
		for _, f := range fs {
			j.Add(f)
		}
		j.Rate()
		f := fs[7].Clone()
		rng := rand.New(rand.NewPCG(53, 54))
		elem := make([]byte, synth.HashSize)
		for b.Loop() {
			for x := range elem {
				elem[x] = byte(rng.Uint32())
			}
			f.Add(elem)
			j.Update(7, f)
			benchSink = j.Rate()
		}
	})
}

func BenchmarkAND100x36000(b *testing.B) {
	fs := benchJointFilterSet(b, func(int) uint32 { return 0x5eed }, func(int) uint32 { return benchJointK })
	// bytes: the AND as meterGroup.recompute and groupRates do it, then
	// the rate (X_and/n)^k.
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(benchJointFilters * benchJointSize)
		and := make([]byte, benchJointSize)
		for b.Loop() {
			copy(and, fs[0].Bits())
			for _, f := range fs[1:] {
				for i, x := range f.Bits() {
					and[i] &= x
				}
			}
			set := 0
			for _, x := range and {
				set += bits.OnesCount8(x)
			}
			benchSink = math.Pow(float64(set)/float64(benchJointSize*bitsPerByte), benchJointK)
		}
	})
	// words: the same pass 64 bits at a time.
	b.Run("words", func(b *testing.B) {
		b.SetBytes(benchJointFilters * benchJointSize)
		and := make([]uint64, benchJointSize/8)
		for b.Loop() {
			for i := range and {
				and[i] = binary.LittleEndian.Uint64(fs[0].Bits()[8*i:])
			}
			for _, f := range fs[1:] {
				data := f.Bits()
				for i := range and {
					and[i] &= binary.LittleEndian.Uint64(data[8*i:])
				}
			}
			set := 0
			for _, x := range and {
				set += bits.OnesCount64(x)
			}
			benchSink = math.Pow(float64(set)/float64(benchJointSize*bitsPerByte), benchJointK)
		}
	})
}

// BenchmarkJointFormsRate12x36000 is the exact any-form rate of a
// two-form candidate over MaxExactFormsFilters filters of 36,000 bytes
// (one tweak, k = 13), what the analyzer's plain intersection would ask
// per bucket.
func BenchmarkJointFormsRate12x36000(b *testing.B) {
	fs := benchJointFilterSet(b, func(int) uint32 { return 0x5eed }, func(int) uint32 { return benchJointK })
	j := NewJoint()
	for _, f := range fs[:MaxExactFormsFilters] {
		j.Add(f)
	}
	j.Rate()
	for b.Loop() {
		r := j.AnyFormRate(2)
		benchSink = r.Lower
	}
}
