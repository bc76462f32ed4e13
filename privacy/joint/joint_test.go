package joint

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/stretchr/testify/require"
)

// jointClose reports whether got is within a relative tol of want (both
// 0 counts as close).
func jointClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Max(math.Abs(got), math.Abs(want))
}

// jointElements returns n pseudorandom 20-byte elements.
func jointElements(rng *rand.Rand, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, synth.HashSize)
		for b := range out[i] {
			out[i][b] = byte(rng.Uint32())
		}
	}
	return out
}

// newTestFilter returns a filter of sizeBytes bytes and k hash functions
// with the given tweak holding elems.
func newTestFilter(t testing.TB, sizeBytes int, k, tweak uint32, elems [][]byte) *bip37.Filter {
	t.Helper()
	f, err := bip37.NewFilterFromBits(make([]byte, sizeBytes), k, tweak, bip37.UpdateNone)
	require.NoError(t, err)
	for _, e := range elems {
		f.Add(e)
	}
	return f
}

// randomFactor returns a factor of n bits, each set with probability p.
func randomFactor(rng *rand.Rand, id int, n uint64, p float64) factor {
	f := newFactor(id, n)
	for x := range n {
		if rng.Float64() < p {
			f.set(x)
			f.ones++
		}
	}
	return f
}

// bruteDist enumerates every residue of the lcm and returns the
// distribution of the mask of factors whose bit is set.
func bruteDist(fs []factor, width int) []float64 {
	l := lcmUpTo(fs, math.MaxUint64)
	out := make([]float64, 1<<width)
	for x := range l {
		var m uint32
		for i := range fs {
			m |= uint32(fs[i].bit(x%fs[i].n)) << fs[i].id
		}
		out[m]++
	}
	for m := range out {
		out[m] /= float64(l)
	}
	return out
}

func TestJointEvaluatorMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	sets := [][]uint64{
		{6, 10, 15}, {12, 18, 8}, {30, 42, 70, 105}, {7, 11, 13}, {8, 16}, {16, 24, 40},
		{9, 12, 16, 18}, {1, 5}, {4, 4, 6}, {2, 3, 4, 5, 6}, {64, 96, 160}, {100, 128, 72},
	}
	for range 40 {
		var s []uint64
		for range 2 + rng.IntN(3) {
			s = append(s, 1+rng.Uint64N(60))
		}
		sets = append(sets, s)
	}
	for si, sizes := range sets {
		var fs []factor
		for i, n := range sizes {
			p := []float64{0.5, 0.2, 0.9, 0, 1}[rng.IntN(5)]
			if rng.IntN(3) != 0 {
				p = 0.3 + 0.4*rng.Float64()
			}
			fs = append(fs, randomFactor(rng, i, n, p))
		}
		want := bruteDist(fs, len(fs))
		full := len(want) - 1
		for _, limit := range []uint64{0, 7, 100, 1 << 30} {
			got := rateOfFactors(fs, limit)
			require.True(t, jointClose(got, want[full], 1e-12), "set %d %v, budget %d: P(all set) = %.15g, enumeration %.15g", si, sizes, limit, got, want[full])
			dist := distOfFactors(fs, len(fs), limit)
			for m := range want {
				require.InDelta(t, want[m], dist[m], 1e-12, "set %d %v, budget %d: P(mask %b) = %.15g, enumeration %.15g", si, sizes, limit, m, dist[m], want[m])
			}
		}
	}
}

func TestJointReducesToKnownRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	el := jointElements(rng, 400)
	const tw = 0x1234567
	a := newTestFilter(t, 300, 6, tw, el[:150])
	b := newTestFilter(t, 300, 6, tw, el[100:260])
	c := newTestFilter(t, 300, 6, tw, el[50:200])
	and := func(fs ...*bip37.Filter) float64 {
		set := 0
		for i := range fs[0].Bits() {
			x := byte(0xff)
			for _, f := range fs {
				x &= f.Bits()[i]
			}
			for ; x != 0; x &= x - 1 {
				set++
			}
		}
		return float64(set) / float64(fs[0].NumBits())
	}
	check := func(name string, got, want, tol float64) {
		t.Helper()
		require.True(t, jointClose(got, want, tol), "%s: joint %.12g, want %.12g", name, got, want)
	}
	check("one filter: (X/n)^k", JointRate([]*bip37.Filter{a}), a.CurrentFPRate(), 0)
	check("one size, k and tweak: (X_and/n)^k", JointRate([]*bip37.Filter{a, b, c}), math.Pow(and(a, b, c), 6), 1e-14)
	check("a filter twice", JointRate([]*bip37.Filter{a, a}), a.CurrentFPRate(), 1e-14)

	d := newTestFilter(t, 300, 6, tw+1, el[:150])
	e := newTestFilter(t, 517, 4, tw+99, el[:150])
	check("different tweaks: the independent product", JointRate([]*bip37.Filter{a, d, e}), IndependentRate([]*bip37.Filter{a, d, e}), 1e-14)

	// k 3 and k 6 with one tweak share the first three seeds.
	short := newTestFilter(t, 300, 3, tw, el[200:330])
	check("different k", JointRate([]*bip37.Filter{a, short}),
		math.Pow(and(a, short), 3)*math.Pow(float64(a.BitsSet())/float64(a.NumBits()), 3), 1e-14)

	// Tweaks one SeedStep apart: a's hashes 1..5 are s's hashes 0..4.
	s := newTestFilter(t, 300, 6, tw+bip37.SeedStep, el[150:300])
	fa, fs := float64(a.BitsSet())/2400, float64(s.BitsSet())/2400
	check("tweaks one seed step apart", JointRate([]*bip37.Filter{a, s}), fa*math.Pow(and(a, s), 5)*fs, 1e-14)

	// Nested sizes: per seed, the smaller tiled over the larger.
	big := newTestFilter(t, 900, 6, tw, el[:300])
	tiled := 0
	for x := range uint64(7200) {
		if bitOf(a, x%2400) && bitOf(big, x) {
			tiled++
		}
	}
	check("nested sizes (x3)", JointRate([]*bip37.Filter{a, big}), math.Pow(float64(tiled)/7200, 6), 1e-14)

	// Degenerate filters.
	empty := newTestFilter(t, 0, 6, tw, nil)
	noHash := newTestFilter(t, 300, 0, tw, nil)
	check("match-all filters constrain nothing", JointRate([]*bip37.Filter{a, empty, noHash}), a.CurrentFPRate(), 0)
	check("only match-all filters", JointRate([]*bip37.Filter{empty, noHash}), 1, 0)
	check("no filters", JointRate(nil), 1, 0)
	check("no bits set", JointRate([]*bip37.Filter{a, newTestFilter(t, 450, 6, tw, nil)}), 0, 0)
	full, err := bip37.NewFilterFromBits(fullBytes(600), 6, tw, bip37.UpdateNone)
	require.NoError(t, err)
	check("every bit set", JointRate([]*bip37.Filter{a, full}), a.CurrentFPRate(), 1e-14)
	check("independent rate of match-all", IndependentRate([]*bip37.Filter{empty, noHash}), 1, 0)

	// The order filters are added in does not matter.
	all := []*bip37.Filter{a, b, c, d, e, short, s, big}
	want := JointRate(all)
	for range 10 {
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		check("shuffled", JointRate(all), want, 1e-12)
	}
}

// bitOf reports whether bit x of f is set.
func bitOf(f *bip37.Filter, x uint64) bool {
	return f.Bits()[x/8]>>(x%8)&1 != 0
}

// fullBytes returns n bytes with every bit set.
func fullBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xff
	}
	return b
}

func TestJointIncrementalMatchesScratch(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	el := jointElements(rng, 3000)
	next := 0
	take := func(n int) [][]byte { next += n; return el[next-n : next] }
	const tw = 0xabcdef
	for _, limit := range []uint64{scalarDirectBudget, 0} {
		j := NewJoint()
		j.limit = limit
		var cur []*bip37.Filter
		next = 0
		sizes := []int{100, 200, 300, 400, 130, 260, 521}
		for step := range 40 {
			switch {
			case len(cur) < 2 || step%3 == 0:
				f := newTestFilter(t, sizes[rng.IntN(len(sizes))], 2+rng.Uint32N(6), tw+uint32(rng.IntN(2))*bip37.SeedStep, take(60))
				require.Equal(t, len(cur), j.Add(f), "Add returned a wrong index")
				cur = append(cur, f)
			case step%3 == 1:
				// filteradd: bits only added.
				i := rng.IntN(len(cur))
				for _, e := range take(5) {
					cur[i].Add(e)
				}
				j.Update(i, cur[i])
			case step%5 == 2:
				// Same parameters, other bits (some cleared).
				i := rng.IntN(len(cur))
				f := cur[i]
				cur[i] = newTestFilter(t, f.Size(), f.HashFuncs(), f.Tweak(), take(50))
				j.Update(i, cur[i])
			default:
				// Other parameters.
				i := rng.IntN(len(cur))
				cur[i] = newTestFilter(t, sizes[rng.IntN(len(sizes))], 1+rng.Uint32N(6), tw+7*uint32(rng.IntN(2)), take(40))
				j.Update(i, cur[i])
			}
			scratch := NewJoint()
			scratch.limit = limit
			for _, f := range cur {
				scratch.Add(f)
			}
			got, want := j.Rate(), scratch.Rate()
			require.True(t, jointClose(got, want, 1e-12), "budget %d, step %d: incremental %.15g, from scratch %.15g", limit, step, got, want)
		}
		require.Equal(t, len(cur), j.Len(), "Len %d, want %d", j.Len(), len(cur))
	}
}

func TestJointResidueModelWithin32BitBound(t *testing.T) {
	// For one seed the 32-bit value weights residue r of L by
	// floor(2^32/L) + [r < 2^32 mod L]; the model weights it 1. Check the
	// stated bound |exact/model - 1| <= L/2^32 on one 36,000-byte filter
	// and on a nested pair.
	rng := rand.New(rand.NewPCG(27, 28))
	el := jointElements(rng, 20000)
	a := newTestFilter(t, 36000, 1, 5, el)
	b := newTestFilter(t, 9000, 1, 5, el[:4000])
	for _, fs := range [][]*bip37.Filter{{a}, {a, b}} {
		l := uint64(a.NumBits())
		q, rem := (uint64(1)<<32)/l, (uint64(1)<<32)%l
		var set, low uint64
		for x := range l {
			ok := true
			for _, f := range fs {
				ok = ok && bitOf(f, x%f.NumBits())
			}
			if ok {
				set++
				if x < rem {
					low++
				}
			}
		}
		exact := (float64(q)*float64(set) + float64(low)) / (1 << 32)
		model := JointRate(fs)
		d := math.Abs(exact/model - 1)
		require.LessOrEqual(t, d, float64(l)/(1<<32), "%d filters: 32-bit %.12g vs model %.12g: off by %.3g > L/2^32 = %.3g", len(fs), exact, model, d, float64(l)/(1<<32))
	}
}

// bruteForms enumerates every hash value of every seed of every form
// (residues of a common multiple l of the sizes) and returns the rate of
// the mixed test: filters with every[i] must pass every form, the others
// at least one.
func bruteForms(fs []*bip37.Filter, every []bool, forms int, l uint64) float64 {
	seedIndex := map[uint32]int{}
	for _, f := range fs {
		for h := range f.HashFuncs() {
			s := bip37.HashSeed(f.Tweak(), h)
			if _, ok := seedIndex[s]; !ok {
				seedIndex[s] = len(seedIndex)
			}
		}
	}
	vars := len(seedIndex) * forms
	vals := make([]uint64, vars)
	var hits, total float64
	for {
		ok := true
		for i, f := range fs {
			n := f.NumBits()
			passes := 0
			for form := range forms {
				p := true
				for h := range f.HashFuncs() {
					v := vals[form*len(seedIndex)+seedIndex[bip37.HashSeed(f.Tweak(), h)]]
					p = p && bitOf(f, v%n)
				}
				if p {
					passes++
				}
			}
			if every[i] && passes < forms || !every[i] && passes == 0 {
				ok = false
				break
			}
		}
		if ok {
			hits++
		}
		total++
		// Next assignment (odometer).
		k := 0
		for ; k < vars; k++ {
			vals[k]++
			if vals[k] < l {
				break
			}
			vals[k] = 0
		}
		if k == vars {
			return hits / total
		}
	}
}

func TestJointFormsRateMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	el := jointElements(rng, 50)
	const tw = 77
	type tc struct {
		name  string
		fs    []*bip37.Filter
		every []bool
		forms int
	}
	cases := []tc{
		{"nested 1/2 bytes, one tweak, any form", []*bip37.Filter{newTestFilter(t, 1, 1, tw, el[:3]), newTestFilter(t, 2, 1, tw, el[:4])}, nil, 2},
		{"nested, one tweak, k 2, any form", []*bip37.Filter{newTestFilter(t, 1, 2, tw, el[:2]), newTestFilter(t, 2, 2, tw, el[:3])}, nil, 2},
		{"three filters, any form", []*bip37.Filter{newTestFilter(t, 1, 1, tw, el[:2]), newTestFilter(t, 2, 1, tw, el[:5]), newTestFilter(t, 2, 1, tw+1, el[5:9])}, nil, 2},
		{"mixed: first every form", []*bip37.Filter{newTestFilter(t, 1, 1, tw, el[:3]), newTestFilter(t, 2, 2, tw, el[:4])}, []bool{true, false}, 2},
		{"three forms", []*bip37.Filter{newTestFilter(t, 1, 1, tw, el[:2]), newTestFilter(t, 2, 1, tw, el[:3])}, nil, 3},
		{"seed step apart, k 2", []*bip37.Filter{newTestFilter(t, 1, 2, tw, el[:2]), newTestFilter(t, 1, 2, tw+bip37.SeedStep, el[:2])}, nil, 2},
		{"every form everywhere", []*bip37.Filter{newTestFilter(t, 1, 1, tw, el[:3]), newTestFilter(t, 2, 1, tw, el[:4])}, []bool{true, true}, 2},
	}
	for _, c := range cases {
		j := NewJoint()
		for _, f := range c.fs {
			j.Add(f)
		}
		every := make([]bool, len(c.fs))
		copy(every, c.every)
		var fs []factor
		for _, f := range c.fs {
			fs = append(fs, newFactor(0, f.NumBits()))
		}
		want := bruteForms(c.fs, every, c.forms, lcmUpTo(fs, math.MaxUint64))
		got := j.FormsRate(c.forms, c.every)
		require.True(t, got.Exact(), "%s: FormsRate %+v, enumeration %.15g", c.name, got, want)
		require.True(t, jointClose(got.Lower, want, 1e-12), "%s: FormsRate %+v, enumeration %.15g", c.name, got, want)
	}
}

func TestJointFormsRateIndependentFilters(t *testing.T) {
	// Filters with different tweaks (no seed in common) are independent,
	// so the any-form rate is the product of the single-filter ones:
	// exact up to MaxExactFormsFilters filters, and inside the bounds
	// above it.
	rng := rand.New(rand.NewPCG(31, 32))
	el := jointElements(rng, 2000)
	for _, nf := range []int{3, MaxExactFormsFilters, MaxExactFormsFilters + 3} {
		j := NewJoint()
		var fs []*bip37.Filter
		every := make([]bool, nf)
		for i := range nf {
			f := newTestFilter(t, 50+10*i, 3, uint32(1000+i), el[i*100:i*100+60+5*i])
			fs = append(fs, f)
			j.Add(f)
			every[i] = i%4 == 1
		}
		j.Add(newTestFilter(t, 0, 3, 5, nil)) // matches everything
		for _, forms := range []int{1, 2, 3} {
			for _, mixed := range []bool{false, true} {
				want := 1.0
				for i, f := range fs {
					if mixed && every[i] {
						want *= stats.AllFormsRate(f.CurrentFPRate(), forms)
					} else {
						want *= stats.AnyFormRate(f.CurrentFPRate(), forms)
					}
				}
				var ev []bool
				if mixed {
					ev = every
				}
				got := j.FormsRate(forms, ev)
				if nf <= MaxExactFormsFilters || forms == 1 {
					require.True(t, got.Exact(), "%d filters, %d forms, mixed %v: %+v, want exactly %.12g", nf, forms, mixed, got, want)
					require.True(t, jointClose(got.Lower, want, 1e-9), "%d filters, %d forms, mixed %v: %+v, want exactly %.12g", nf, forms, mixed, got, want)
					continue
				}
				require.False(t, got.Exact(), "%d filters, %d forms, mixed %v: bounds %+v do not hold %.12g", nf, forms, mixed, got, want)
				require.LessOrEqual(t, got.Lower, want*(1+1e-12), "%d filters, %d forms, mixed %v: bounds %+v do not hold %.12g", nf, forms, mixed, got, want)
				require.GreaterOrEqual(t, got.Upper, want*(1-1e-12), "%d filters, %d forms, mixed %v: bounds %+v do not hold %.12g", nf, forms, mixed, got, want)
			}
		}
		got := j.AllFormsRate(2)
		require.True(t, jointClose(got, math.Pow(IndependentRate(fs), 2), 1e-12), "AllFormsRate(2) = %v", got)
		anyRate := j.AnyFormRate(0)
		require.Equal(t, exactly(0), anyRate, "AnyFormRate(0) = %+v", anyRate)
	}
}

func TestPoissonRange(t *testing.T) {
	cases := []struct {
		mean   float64
		lo, hi uint64
	}{
		// Quantiles of Poisson(mean) at 0.0005 and 0.9995, checked with
		// the cumulative sums below.
		{20, 7, 36},
		{100, 69, 134},
	}
	for _, c := range cases {
		lo, hi := stats.PoissonRange(c.mean, 0.999)
		require.Equal(t, c.lo, lo, "PoissonRange(%v) = [%d, %d], want [%d, %d]", c.mean, lo, hi, c.lo, c.hi)
		require.Equal(t, c.hi, hi, "PoissonRange(%v) = [%d, %d], want [%d, %d]", c.mean, lo, hi, c.lo, c.hi)
	}
	// The defining property, by direct summation, over a range of means.
	for _, mean := range []float64{0.5, 3, 20, 137.5, 1000, 20000} {
		lo, hi := stats.PoissonRange(mean, 0.999)
		cdf := func(x uint64) float64 { // P(X <= x)
			s := 0.0
			for i := uint64(0); i <= x; i++ {
				lg, _ := math.Lgamma(float64(i) + 1)
				s += math.Exp(float64(i)*math.Log(mean) - mean - lg)
			}
			return s
		}
		below := 0.0
		if lo > 0 {
			below = cdf(lo - 1)
		}
		require.LessOrEqual(t, below, 0.0005, "PoissonRange(%v) = [%d, %d]: P(X<lo) %.3g, P(X<=lo) %.3g, P(X>hi) %.3g", mean, lo, hi, below, cdf(lo), 1-cdf(hi))
		require.Greater(t, cdf(lo), 0.0005, "PoissonRange(%v) = [%d, %d]: P(X<lo) %.3g, P(X<=lo) %.3g, P(X>hi) %.3g", mean, lo, hi, below, cdf(lo), 1-cdf(hi))
		require.LessOrEqual(t, 1-cdf(hi), 0.0005+1e-12, "PoissonRange(%v) = [%d, %d]: P(X<lo) %.3g, P(X<=lo) %.3g, P(X>hi) %.3g", mean, lo, hi, below, cdf(lo), 1-cdf(hi))
		require.False(t, hi > 0 && 1-cdf(hi-1) <= 0.0005, "PoissonRange(%v) = [%d, %d]: P(X<lo) %.3g, P(X<=lo) %.3g, P(X>hi) %.3g", mean, lo, hi, below, cdf(lo), 1-cdf(hi))
	}
	for _, bad := range [][2]float64{{0, 0.999}, {-1, 0.999}, {math.NaN(), 0.999}, {math.Inf(1), 0.999}, {10, 1}, {10, 0}} {
		lo, hi := stats.PoissonRange(bad[0], bad[1])
		require.Equal(t, uint64(0), lo, "PoissonRange(%v, %v) = [%d, %d], want [0, 0]", bad[0], bad[1], lo, hi)
		require.Equal(t, uint64(0), hi, "PoissonRange(%v, %v) = [%d, %d], want [0, 0]", bad[0], bad[1], lo, hi)
	}
}

func TestJointFormsRateBoundsHoldForCorrelatedFilters(t *testing.T) {
	// Twelve correlated filters (one tweak, nested and non-nested sizes)
	// have an exact any-form rate. A thirteenth filter with every bit set
	// changes nothing but takes the set over MaxExactFormsFilters: the
	// bounds must contain the exact value, and the upper bound, computed
	// over the most selective twelve, must equal it.
	rng := rand.New(rand.NewPCG(33, 34))
	el := jointElements(rng, 400)
	const tw = 4242
	sizes := []int{30, 60, 60, 45, 90, 120, 30, 61, 122, 40, 80, 50}
	exact := NewJoint()
	bounded := NewJoint()
	every := make([]bool, len(sizes)+1)
	for i, s := range sizes {
		f := newTestFilter(t, s, 2+uint32(i%3), tw+uint32(i%2)*bip37.SeedStep, el[:40+10*i])
		exact.Add(f)
		bounded.Add(f)
		every[i] = i%5 == 3
	}
	full, err := bip37.NewFilterFromBits(fullBytes(70), 3, tw, bip37.UpdateNone)
	require.NoError(t, err)
	bounded.Add(full)
	for _, ev := range [][]bool{nil, every} {
		for _, forms := range []int{2, 3} {
			want := exact.FormsRate(forms, ev)
			got := bounded.FormsRate(forms, ev)
			require.True(t, want.Exact(), "forms %d: exact %+v, bounded %+v", forms, want, got)
			require.False(t, got.Exact(), "forms %d: exact %+v, bounded %+v", forms, want, got)
			t.Logf("forms %d, some every-form filters %v: exact %.4g, bounds [%.4g, %.4g]", forms, ev != nil, want.Lower, got.Lower, got.Upper)
			require.LessOrEqual(t, got.Lower, want.Lower, "forms %d, every %v: bounds %+v around %.12g", forms, ev != nil, got, want.Lower)
			require.True(t, jointClose(got.Upper, want.Lower, 1e-12), "forms %d, every %v: bounds %+v around %.12g", forms, ev != nil, got, want.Lower)
			require.Greater(t, got.Lower, float64(0), "forms %d, every %v: bounds %+v around %.12g", forms, ev != nil, got, want.Lower)
		}
	}
}

// TestMergeNestedIsExact checks the evaluator's merge of factors whose
// size divides another's against enumeration over the lcm.
func TestMergeNestedIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 18))
	sizes := [][]uint64{{12, 24, 24, 48}, {10, 15, 30, 7}, {64, 128, 8, 96}, {9, 27, 6, 4}, {130, 260, 521}}
	for _, ns := range sizes {
		var fs []factor
		for i, n := range ns {
			fs = append(fs, randomFactor(rng, i, n, 0.7))
		}
		before := make([][]uint64, len(fs))
		for i := range fs {
			before[i] = append([]uint64(nil), fs[i].w...)
		}
		got := rateOfFactors(fs, 1<<30)
		want := bruteDist(fs, len(fs))[1<<len(fs)-1]
		require.True(t, jointClose(got, want, 1e-12), "sizes %v: rate %g, enumeration %g", ns, got, want)
		merged := mergeNested(fs)
		for i := range fs {
			require.True(t, slicesEqual(fs[i].w, before[i]), "sizes %v: mergeNested changed factor %d's bits", ns, i)
		}
		for i := range merged {
			for j := range merged {
				require.False(t, i != j && merged[i].n%merged[j].n == 0, "sizes %v: merged sizes %d and %d still nest", ns, merged[i].n, merged[j].n)
			}
		}
	}
}

// slicesEqual reports whether two word slices are equal.
func slicesEqual(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
