package bip37

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomElement returns a pseudorandom 20-byte element.
func randomElement(rng *rand.Rand) []byte {
	b := make([]byte, hash160Len)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// filterOf returns a filter of sizeBytes bytes and k hash functions with
// the given tweak holding elems.
func filterOf(t testing.TB, sizeBytes int, k, tweak uint32, elems [][]byte) *Filter {
	t.Helper()
	f, err := NewFilterFromBits(make([]byte, sizeBytes), k, tweak, UpdateNone)
	require.NoError(t, err)
	for _, e := range elems {
		f.Add(e)
	}
	return f
}

func TestHashSeedSelectsFilterBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		size := 1 + rng.IntN(400)
		k := 1 + rng.Uint32N(MaxHashFuncs)
		tweak := rng.Uint32()
		if trial%4 == 0 {
			tweak = ^uint32(0) - rng.Uint32N(8) // seeds wrap around 2^32
		}
		var elems [][]byte
		for range rng.IntN(20) {
			elems = append(elems, randomElement(rng))
		}
		f := filterOf(t, size, k, tweak, elems)
		// Rebuild the bit array from HashSeed and MurmurHash3 alone.
		want := make([]byte, size)
		n := uint32(size * bitsPerByte)
		for _, e := range elems {
			for j := range k {
				idx := MurmurHash3(HashSeed(tweak, j), e) % n
				want[idx/bitsPerByte] |= 1 << (idx % bitsPerByte)
			}
		}
		require.Equal(t, string(want), string(f.Bits()), "trial %d: bits from HashSeed differ from Filter.Add (size %d, k %d, tweak %#x)", trial, size, k, tweak)
	}
	require.Equal(t, uint32(0xFBA4C795), HashSeed(0, 1), "HashSeed: got %#x %#x %#x", HashSeed(0, 1), HashSeed(5, 0), HashSeed(1, 2))
	require.Equal(t, uint32(5), HashSeed(5, 0), "HashSeed: got %#x %#x %#x", HashSeed(0, 1), HashSeed(5, 0), HashSeed(1, 2))
	require.Equal(t, uint32((2*0xFBA4C795+1)%(1<<32)), HashSeed(1, 2), "HashSeed: got %#x %#x %#x", HashSeed(0, 1), HashSeed(5, 0), HashSeed(1, 2))
}

func TestFoldIsTheSmallerFilter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		small := 1 + rng.IntN(500)
		factor := 1 + rng.IntN(5)
		k := 1 + rng.Uint32N(20)
		tweak := rng.Uint32()
		var elems [][]byte
		for range rng.IntN(3 * small) {
			elems = append(elems, randomElement(rng))
		}
		big := filterOf(t, small*factor, k, tweak, elems)
		big.flags = UpdateAll
		want := filterOf(t, small, k, tweak, elems)
		got, err := Fold(big, small)
		require.NoError(t, err)
		require.Equal(t, string(want.Bits()), string(got.Bits()), "trial %d: fold of %d bytes onto %d differs from the filter built at %d bytes", trial, small*factor, small, small)
		require.Equal(t, k, got.HashFuncs(), "trial %d: fold changed parameters: k %d tweak %#x flags %v size %d", trial, got.HashFuncs(), got.Tweak(), got.Flags(), got.Size())
		require.Equal(t, tweak, got.Tweak(), "trial %d: fold changed parameters: k %d tweak %#x flags %v size %d", trial, got.HashFuncs(), got.Tweak(), got.Flags(), got.Size())
		require.Equal(t, UpdateAll, got.Flags(), "trial %d: fold changed parameters: k %d tweak %#x flags %v size %d", trial, got.HashFuncs(), got.Tweak(), got.Flags(), got.Size())
		require.Equal(t, small, got.Size(), "trial %d: fold changed parameters: k %d tweak %#x flags %v size %d", trial, got.HashFuncs(), got.Tweak(), got.Flags(), got.Size())
	}
}

func TestFoldErrors(t *testing.T) {
	f := filterOf(t, 12, 3, 7, nil)
	for _, size := range []int{0, -1, 5, 24} {
		_, err := Fold(f, size)
		require.ErrorIs(t, err, ErrSizesNotNested, "Fold(12 bytes, %d): err %v, want ErrSizesNotNested", size, err)
	}
	for _, g := range []*Filter{filterOf(t, 0, 3, 7, nil), filterOf(t, 12, 0, 7, nil)} {
		_, err := Fold(g, 1)
		require.ErrorIs(t, err, ErrNoElementInfo, "Fold(%d bytes, k %d): err %v, want ErrNoElementInfo", g.Size(), g.HashFuncs(), err)
	}
}

func TestEstimateOverlapErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	elems := [][]byte{randomElement(rng), randomElement(rng)}
	base := filterOf(t, 100, 5, 9, elems)
	full := filterOf(t, 100, 5, 9, nil)
	for i := range full.bits {
		full.bits[i] = 0xff
	}
	cases := []struct {
		name string
		b    *Filter
		want error
	}{
		{"other tweak", filterOf(t, 100, 5, 10, elems), ErrParamsDiffer},
		{"tweak one seed step apart", filterOf(t, 100, 5, 9+SeedStep, elems), ErrParamsDiffer},
		{"other k", filterOf(t, 100, 6, 9, elems), ErrParamsDiffer},
		{"sizes do not nest", filterOf(t, 150, 5, 9, elems), ErrSizesNotNested},
		{"sizes do not nest, smaller", filterOf(t, 40, 5, 9, elems), ErrSizesNotNested},
		{"empty filter", filterOf(t, 0, 5, 9, nil), ErrNoElementInfo},
		{"no hash functions", filterOf(t, 100, 0, 9, nil), ErrNoElementInfo},
		{"saturated union", full, ErrSaturated},
	}
	for _, c := range cases {
		for _, order := range [][2]*Filter{{base, c.b}, {c.b, base}} {
			_, err := EstimateOverlap(order[0], order[1])
			require.ErrorIs(t, err, c.want, "%s: err %v, want %v", c.name, err, c.want)
			u, err := EstimateUnion(order[0], order[1])
			require.ErrorIs(t, err, c.want, "%s: EstimateUnion = %v, %v", c.name, u, err)
			require.True(t, math.IsNaN(u), "%s: EstimateUnion = %v, %v", c.name, u, err)
			i, err := EstimateIntersection(order[0], order[1])
			require.ErrorIs(t, err, c.want, "%s: EstimateIntersection = %v, %v", c.name, i, err)
			require.True(t, math.IsNaN(i), "%s: EstimateIntersection = %v, %v", c.name, i, err)
		}
	}
	// Nested sizes in either order and equal sizes are accepted.
	for _, size := range []int{100, 200, 50, 25, 500} {
		_, err := EstimateOverlap(base, filterOf(t, size, 5, 9, elems))
		require.NoError(t, err, "size 100 with %d", size)
	}
}

// overlapCase is one configuration of the estimator accuracy test: A
// holds nA elements in sizeA bytes; B holds the first common of them and
// added new ones in sizeB bytes; both share k and a tweak.
type overlapCase struct {
	name              string
	sizeA, sizeB      int
	k                 uint32
	nA, common, added int
}

func TestEstimateOverlapAccuracy(t *testing.T) {
	// Every case is run over trials random element sets and tweaks. The
	// estimates must be unbiased within 4 standard errors of the mean
	// (after the second-order bias phi(t)/2k per estimate), and their
	// root-mean-square error must lie within 20 % of the StdErr formula
	// evaluated at the true counts (the sampling error of an RMS over 300
	// trials is about 4 %).
	const trials = 300
	cases := []overlapCase{
		{"equal sizes (718 B, capacity 300 at 1e-4): a reload drops 50, adds 120", 718, 718, 13, 200, 150, 120},
		{"nested x2 (306 -> 612 B): the reload keeps all, adds 100", 306, 612, 13, 100, 100, 100},
		{"nested x4 (153 -> 612 B): keeps all, adds 180", 153, 612, 13, 60, 60, 180},
		{"nested x2, larger first (612 -> 306 B): drops 50, adds 50", 612, 306, 13, 150, 100, 50},
		{"nested x3, k = 5, disjoint sets", 400, 1200, 5, 150, 0, 150},
	}
	for ci, c := range cases {
		rng := rand.New(rand.NewPCG(11, uint64(ci)))
		n := float64(min(c.sizeA, c.sizeB) * bitsPerByte)
		k := float64(c.k)
		truth := Overlap{
			SizeBytes: min(c.sizeA, c.sizeB), HashFuncs: c.k,
			A: float64(c.nA), B: float64(c.common + c.added),
			Union: float64(c.nA + c.added), Intersection: float64(c.common),
		}
		wantSDI, wantSDOnlyA, wantSDOnlyB := truth.StdErr()
		phi := func(m float64) float64 { t := k * m / n; return math.Expm1(t) - t }
		biasI := (phi(truth.A) + phi(truth.B) - phi(truth.Union)) / (2 * k)
		biasOnlyB := (phi(truth.Union) - phi(truth.A)) / (2 * k)
		var sumI, sumI2, sumB, sumB2, sumA2 float64
		for range trials {
			tweak := rng.Uint32()
			var a, b [][]byte
			for range c.nA {
				a = append(a, randomElement(rng))
			}
			b = append(b, a[:c.common]...)
			for range c.added {
				b = append(b, randomElement(rng))
			}
			o, err := EstimateOverlap(filterOf(t, c.sizeA, c.k, tweak, a), filterOf(t, c.sizeB, c.k, tweak, b))
			require.NoError(t, err, "%s", c.name)
			require.Equal(t, truth.SizeBytes, o.SizeBytes, "%s: estimated at %d bytes, k %d", c.name, o.SizeBytes, o.HashFuncs)
			require.Equal(t, c.k, o.HashFuncs, "%s: estimated at %d bytes, k %d", c.name, o.SizeBytes, o.HashFuncs)
			d := o.A + o.B - o.Union - o.Intersection
			require.LessOrEqual(t, math.Abs(d), 1e-9, "%s: intersection is not A + B - union (off by %v)", c.name, d)
			ei, eb, ea := o.Intersection-truth.Intersection, o.OnlyB()-float64(c.added), o.OnlyA()-float64(c.nA-c.common)
			sumI, sumI2 = sumI+ei, sumI2+ei*ei
			sumB, sumB2 = sumB+eb, sumB2+eb*eb
			sumA2 += ea * ea
		}
		rmsI, rmsB, rmsA := math.Sqrt(sumI2/trials), math.Sqrt(sumB2/trials), math.Sqrt(sumA2/trials)
		t.Logf("%s: intersection bias %+.2f rms %.2f (formula %.2f); added bias %+.2f rms %.2f (formula %.2f); dropped rms %.2f (formula %.2f)",
			c.name, sumI/trials, rmsI, wantSDI, sumB/trials, rmsB, wantSDOnlyB, rmsA, wantSDOnlyA)
		d := sumI/trials - biasI
		require.LessOrEqual(t, math.Abs(d), 4*wantSDI/math.Sqrt(trials), "%s: intersection biased by %.2f", c.name, d)
		d = sumB/trials - biasOnlyB
		require.LessOrEqual(t, math.Abs(d), 4*wantSDOnlyB/math.Sqrt(trials), "%s: added-elements estimate biased by %.2f", c.name, d)
		for _, r := range []struct {
			what      string
			rms, want float64
		}{{"intersection", rmsI, wantSDI}, {"added", rmsB, wantSDOnlyB}, {"dropped", rmsA, wantSDOnlyA}} {
			require.GreaterOrEqual(t, r.rms, 0.8*r.want, "%s: %s rms error %.2f, StdErr formula %.2f", c.name, r.what, r.rms, r.want)
			require.LessOrEqual(t, r.rms, 1.2*r.want, "%s: %s rms error %.2f, StdErr formula %.2f", c.name, r.what, r.rms, r.want)
		}
	}
}

func TestEstimateOverlapSymmetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var a, b [][]byte
	for range 80 {
		a = append(a, randomElement(rng))
	}
	b = append(b, a[:40]...)
	for range 30 {
		b = append(b, randomElement(rng))
	}
	fa, fb := filterOf(t, 200, 7, 3, a), filterOf(t, 800, 7, 3, b)
	ab, err := EstimateOverlap(fa, fb)
	require.NoError(t, err)
	ba, err := EstimateOverlap(fb, fa)
	require.NoError(t, err)
	require.Equal(t, ba.B, ab.A, "EstimateOverlap is not symmetric: %+v vs %+v", ab, ba)
	require.Equal(t, ba.A, ab.B, "EstimateOverlap is not symmetric: %+v vs %+v", ab, ba)
	require.Equal(t, ba.Union, ab.Union, "EstimateOverlap is not symmetric: %+v vs %+v", ab, ba)
	require.Equal(t, ba.Intersection, ab.Intersection, "EstimateOverlap is not symmetric: %+v vs %+v", ab, ba)
	require.Equal(t, ba.OnlyA(), ab.OnlyB(), "EstimateOverlap is not symmetric: %+v vs %+v", ab, ba)
	u, _ := EstimateUnion(fa, fb)
	i, _ := EstimateIntersection(fa, fb)
	require.Equal(t, ab.Union, u, "EstimateUnion/Intersection = %v, %v; overlap %+v", u, i, ab)
	require.Equal(t, ab.Intersection, i, "EstimateUnion/Intersection = %v, %v; overlap %+v", u, i, ab)
}
