package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIntervalsKnownValues checks the exact intervals against limits
// computed independently by bisection on the Poisson and binomial
// distribution functions summed term by term (Garwood: P(X >= c; lo) =
// P(X <= c; hi) = 0.025; Clopper-Pearson likewise for a proportion).
func TestIntervalsKnownValues(t *testing.T) {
	cases := []struct {
		name       string
		got        Interval
		lo, hi     float64
		wantMethod string
	}{
		{"poisson 0", PoissonInterval(0, 0.95), 0, 3.6889, MethodPoisson},
		{"poisson 1", PoissonInterval(1, 0.95), 0.0253, 5.5716, MethodPoisson},
		{"poisson 10", PoissonInterval(10, 0.95), 4.7954, 18.3904, MethodPoisson},
		{"poisson 100", PoissonInterval(100, 0.95), 81.3640, 121.6268, MethodPoisson},
		{"binomial 0/10", BinomialInterval(0, 10, 0.95), 0, 0.3085, MethodBinomial},
		{"binomial 5/10", BinomialInterval(5, 10, 0.95), 0.1871, 0.8129, MethodBinomial},
		{"binomial 10/10", BinomialInterval(10, 10, 0.95), 0.6915, 1, MethodBinomial},
		{"binomial 21/44", BinomialInterval(21, 44, 0.95), 0.3246, 0.6331, MethodBinomial},
		{"binomial 0/0", BinomialInterval(0, 0, 0.95), 0, 1, MethodBinomial},
	}
	for _, c := range cases {
		require.InDelta(t, c.lo, c.got.Lo, 1e-4, "%s: [%.4f, %.4f] %s, want [%.4f, %.4f] %s", c.name, c.got.Lo, c.got.Hi, c.got.Method, c.lo, c.hi, c.wantMethod)
		require.InDelta(t, c.hi, c.got.Hi, 1e-4, "%s: [%.4f, %.4f] %s, want [%.4f, %.4f] %s", c.name, c.got.Lo, c.got.Hi, c.got.Method, c.lo, c.hi, c.wantMethod)
		require.Equal(t, c.wantMethod, c.got.Method, "%s: [%.4f, %.4f] %s, want [%.4f, %.4f] %s", c.name, c.got.Lo, c.got.Hi, c.got.Method, c.lo, c.hi, c.wantMethod)
	}
	iv := NormalInterval(3, 2, 0)
	require.NotNil(t, iv, "normal interval clipped at 0: %+v", iv)
	require.Equal(t, float64(0), iv.Lo, "normal interval clipped at 0: %+v", iv)
	require.InDelta(t, (3 + 1.96*2), iv.Hi, 1e-3, "normal interval clipped at 0: %+v", iv)
	require.Nil(t, NormalInterval(math.Inf(1), 1, 0), "an estimate that could not be made has an interval")
	require.Nil(t, NormalInterval(1, -1, 0), "an estimate that could not be made has an interval")
}

// TestPoissonIntervalCoverage checks by simulation that the Garwood
// interval covers the mean at least 95 % of the time (it is exact, hence
// conservative for a discrete count), for means from 0.5 to 50.
func TestPoissonIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 27))
	const trials = 4000
	for _, mean := range []float64{0.5, 3, 12, 50} {
		covered := 0
		for range trials {
			if PoissonInterval(poissonDraw(rng, mean), 0.95).Contains(mean) {
				covered++
			}
		}
		// 3 binomial sd below 0.95 over 4000 trials is 0.940.
		rate := float64(covered) / trials
		require.GreaterOrEqual(t, rate, 0.94, "mean %v: coverage %.3f", mean, rate)
	}
}

// poissonDraw draws a Poisson count by inversion.
func poissonDraw(rng *rand.Rand, mean float64) uint64 {
	u, p := rng.Float64(), math.Exp(-mean)
	var x uint64
	cdf := p
	for u > cdf {
		x++
		p *= mean / float64(x)
		cdf += p
	}
	return x
}

// TestComparisonPower checks that a comparison that cannot fail is not
// reported: 0 measured against 1e-10 expected has no power; 12 against
// 10.5 has.
func TestComparisonPower(t *testing.T) {
	v, p := CompareCount(0, 1e-10, 1e-10)
	require.Equal(t, "", v, "0 vs 1e-10: %q, power %v: want no verdict", v, p)
	require.LessOrEqual(t, p, 0.01, "0 vs 1e-10: %q, power %v: want no verdict", v, p)
	v, p = CompareCount(0, 3.8, 3.8)
	require.Equal(t, "", v, "0 vs 3.8: %q, power %v: want no verdict", v, p)
	require.Less(t, p, MinComparisonPower, "0 vs 3.8: %q, power %v: want no verdict", v, p)
	v, p = CompareCount(12, 10.5, 10.5)
	require.Equal(t, ComparisonInside, v, "12 vs 10.5: %q, power %v", v, p)
	require.GreaterOrEqual(t, p, MinComparisonPower, "12 vs 10.5: %q, power %v", v, p)
	v, _ = CompareCount(40, 10.5, 10.5)
	require.Equal(t, ComparisonOutside, v, "40 vs 10.5: %q, want outside", v)
	// A model only bounded: inside when the interval meets the range.
	v, _ = CompareCount(30, 12, 25)
	require.Equal(t, ComparisonInside, v, "30 vs 12..25: %q", v)
	// The power rises with the expectation.
	prev := 0.0
	for _, e := range []float64{1, 5, 10, 30, 100} {
		p := ComparisonPower(e, ConfidenceLevel)
		require.GreaterOrEqual(t, p, prev, "power %v at %v below %v", p, e, prev)
		prev = p
	}
	require.GreaterOrEqual(t, prev, 0.99, "power at 100 expected: %v", prev)
}

// TestAcceptanceMatchesIntervals checks the acceptance range against the
// intervals it stands for: a count inside it has an interval containing
// the mean, the counts just outside do not.
func TestAcceptanceMatchesIntervals(t *testing.T) {
	for _, mean := range []float64{0.3, 2, 7.5, 40, 1000} {
		lo, hi := acceptance(mean, ConfidenceLevel)
		for _, c := range []float64{lo, hi} {
			require.True(t, PoissonInterval(uint64(c), ConfidenceLevel).Contains(mean), "mean %v: count %v in [%v, %v] but its interval excludes the mean", mean, c, lo, hi)
		}
		require.False(t, lo > 0 && PoissonInterval(uint64(lo-1), ConfidenceLevel).Contains(mean), "mean %v: count %v below the range has an interval containing it", mean, lo-1)
		require.False(t, PoissonInterval(uint64(hi+1), ConfidenceLevel).Contains(mean), "mean %v: count %v above the range has an interval containing it", mean, hi+1)
	}
}

// TestExpectedOverFalsePositives checks E[H] and E[precision] over the
// Poisson false-positive count against a term-by-term sum (the sampled
// path for a large mean too), and against Jensen's bounds: entropy is
// concave in F, precision convex.
func TestExpectedOverFalsePositives(t *testing.T) {
	direct := func(mean float64, g func(float64) float64) float64 {
		sd := math.Sqrt(mean)
		var s float64
		for x := math.Max(0, math.Floor(mean-15*sd-15)); x <= mean+15*sd+15; x++ {
			lg, _ := math.Lgamma(x + 1)
			s += math.Exp(x*math.Log(mean)-mean-lg) * g(x)
		}
		return s
	}
	for _, tc := range []struct{ n, decoys, mean float64 }{{21, 0, 0.22}, {21, 0, 3.87}, {21, 3, 83.5}, {5, 0, 2e6}, {300, 0, 5e5}, {2000, 10, 2.5e5}} {
		h := ExpectedEntropy(tc.n, tc.decoys, tc.mean)
		wantH := direct(tc.mean, func(x float64) float64 { return Entropy(tc.n, tc.decoys+x) })
		require.InDelta(t, wantH, h, 1e-6*math.Max(1, wantH), "%+v: E[H] %v, direct sum %v", tc, h, wantH)
		plug := Entropy(tc.n, tc.decoys+tc.mean)
		require.LessOrEqual(t, h, plug+1e-9, "%+v: E[H] %v above the plug-in %v", tc, h, plug)
		p := ExpectedPrecision(tc.n, tc.decoys, tc.mean)
		wantP := direct(tc.mean, func(x float64) float64 { return Precision(tc.n, tc.decoys+x) })
		require.InDelta(t, wantP, p, 1e-9, "%+v: E[precision] %v, direct sum %v", tc, p, wantP)
		plug = Precision(tc.n, tc.decoys+tc.mean)
		require.GreaterOrEqual(t, p, plug-1e-12, "%+v: E[precision] %v below the plug-in %v", tc, p, plug)
	}
	// The lgamma path agrees with the term-by-term sum.
	for _, c := range [][2]float64{{65, 65}, {100, 1e6}, {3000, 2.5e9}, {70, 1e12}} {
		a, b := entropyBits(c[0], c[1]), Log2Binomial(c[0]+c[1], c[0])
		require.InDelta(t, b, a, 1e-6*b, "entropy of %v: lgamma %v, sum %v", c, a, b)
	}
	// No false positive expected: the plug-in is exact.
	require.Equal(t, float64(0), ExpectedEntropy(10, 0, 0), "zero mean")
	require.Equal(t, float64(1), ExpectedPrecision(10, 0, 0), "zero mean")
	// At a small mean the expectation differs from the plug-in: E[H] is
	// P(F=1) log2(N+1) + ..., not log2 C(N+0.22, N).
	h, plug := ExpectedEntropy(21, 0, 0.22), Entropy(21, 0.22)
	require.True(t, h < plug*0.9, "E[H] %v, plug-in %v: the expectation should be well below", h, plug)
}
