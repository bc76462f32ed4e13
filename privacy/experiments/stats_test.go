package experiments

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// near reports whether got is within rel relative tolerance of want (or
// abs 1e-12 when want is 0).
func near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

func TestRelDiff(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"reldiff", RelDiff(1.1, 1), 0.1},
		{"reldiff both 0", RelDiff(0, 0), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, near(tc.got, tc.want, 1e-6), "got %.10g, want %.10g", tc.got, tc.want)
		})
	}
	require.True(t, math.IsInf(RelDiff(1, 0), 1), "RelDiff(1, 0) should be +Inf")
}

func TestIntervals(t *testing.T) {
	// Exact Garwood 95 % bounds (chi-square quantiles), from tables.
	poisson := []struct {
		c      uint64
		lo, hi float64
	}{
		{0, 0, 3.689},
		{1, 0.0253, 5.572},
		{10, 4.795, 18.39},
		{100, 81.36, 121.63},
	}
	for _, tc := range poisson {
		lo, hi := PoissonInterval(tc.c, Z95)
		require.InDelta(t, tc.lo, lo, 1e-3*math.Max(1, tc.lo), "PoissonInterval(%d) = [%.4g, %.4g], want about [%.4g, %.4g]", tc.c, lo, hi, tc.lo, tc.hi)
		require.InDelta(t, tc.hi, hi, 1e-3*tc.hi, "PoissonInterval(%d) = [%.4g, %.4g], want about [%.4g, %.4g]", tc.c, lo, hi, tc.lo, tc.hi)
	}
	// Large counts: the normal approximation c +- z sqrt(c) within 1 %.
	lo, hi := PoissonInterval(1_000_000, Z95)
	require.True(t, near(lo, 1e6-Z95*1000, 1e-4), "PoissonInterval(1e6) = [%.1f, %.1f]", lo, hi)
	require.True(t, near(hi, 1e6+Z95*1000, 1e-4), "PoissonInterval(1e6) = [%.1f, %.1f]", lo, hi)
	// Wilson: 0 of 10 -> [0, 0.2775]; 5 of 10 -> [0.2366, 0.7634].
	wilson := []struct {
		k, n   int
		lo, hi float64
	}{{0, 10, 0, 0.2775}, {5, 10, 0.2366, 0.7634}, {10, 10, 0.7225, 1}}
	for _, tc := range wilson {
		lo, hi := WilsonInterval(float64(tc.k), float64(tc.n), Z95)
		require.InDelta(t, tc.lo, lo, 1e-3, "WilsonInterval(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		require.InDelta(t, tc.hi, hi, 1e-3, "WilsonInterval(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
	}
	lo, hi = WilsonInterval(0, 0, Z95)
	require.Equal(t, float64(0), lo, "WilsonInterval(0, 0) = [%v, %v]", lo, hi)
	require.Equal(t, float64(1), hi, "WilsonInterval(0, 0) = [%v, %v]", lo, hi)
}

// TestExactBinomial checks the Clopper-Pearson bounds against tables and
// the binomial distribution function against a direct sum.
func TestExactBinomial(t *testing.T) {
	for _, tc := range []struct {
		x, n   int64
		lo, hi float64
	}{
		{0, 10, 0, 0.3085}, {5, 10, 0.1871, 0.8129}, {10, 10, 0.6915, 1}, {8, 8, 0.6306, 1}, {7, 8, 0.4735, 0.9968},
	} {
		lo, hi := ClopperPearson(tc.x, tc.n, Alpha95)
		require.InDelta(t, tc.lo, lo, 1e-4, "ClopperPearson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.x, tc.n, lo, hi, tc.lo, tc.hi)
		require.InDelta(t, tc.hi, hi, 1e-4, "ClopperPearson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.x, tc.n, lo, hi, tc.lo, tc.hi)
	}
	// P(X <= 3) for Binomial(20, 0.3) by a direct sum.
	var sum float64
	for k := 0; k <= 3; k++ {
		c := 1.0
		for i := 0; i < k; i++ {
			c *= float64(20-i) / float64(i+1)
		}
		sum += c * math.Pow(0.3, float64(k)) * math.Pow(0.7, float64(20-k))
	}
	got := BinomialCDF(3, 20, 0.3)
	require.True(t, near(got, sum, 1e-10), "BinomialCDF(3, 20, 0.3) = %v, want %v", got, sum)
	got = PoissonCDF(2, 1.5)
	require.True(t, near(got, math.Exp(-1.5)*(1+1.5+1.125), 1e-12), "PoissonCDF(2, 1.5) = %v", got)
}

// TestVerdictsNeedPower checks the verdict policy: a comparison of a
// measured 0 with an expectation of 1e-10 has no power and gets no
// verdict; a binomial with power gets one, Holm-adjusted; a proportion
// off its reference is found to differ.
func TestVerdictsNeedPower(t *testing.T) {
	r := &Result{Rows: []Comparison{
		poissonRow("tiny", 0, 1).withFormula(1e-10).test(altFactor(2)),
		binomialRow("fair", 480, 1000).withFormula(0.5).test(altShift(0.1)),
		binomialRow("biased", 800, 1000).withFormula(0.5).test(altShift(0.1)),
		deterministicRow("size", 1269).withFormula(1269),
	}}
	r.finish()
	tiny, fair, biased, size := r.Rows[0], r.Rows[1], r.Rows[2], r.Rows[3]
	require.Equal(t, "", tiny.Verdict, "0 vs 1e-10: verdict %q, test %+v: want none (no power)", tiny.Verdict, tiny.Test)
	require.NotNil(t, tiny.Test, "0 vs 1e-10: verdict %q, test %+v: want none (no power)", tiny.Verdict, tiny.Test)
	require.False(t, tiny.Test.Printed, "0 vs 1e-10: verdict %q, test %+v: want none (no power)", tiny.Verdict, tiny.Test)
	require.LessOrEqual(t, tiny.Test.Power, 0.1, "0 vs 1e-10: verdict %q, test %+v: want none (no power)", tiny.Verdict, tiny.Test)
	require.True(t, strings.HasPrefix(fair.Verdict, VerdictAgrees), "480 of 1000 vs 0.5: %q %+v", fair.Verdict, fair.Test)
	require.GreaterOrEqual(t, fair.Test.Power, MinPower, "480 of 1000 vs 0.5: %q %+v", fair.Verdict, fair.Test)
	require.NotNil(t, fair.Test.PHolm, "480 of 1000 vs 0.5: %q %+v", fair.Verdict, fair.Test)
	require.True(t, strings.HasPrefix(biased.Verdict, VerdictDiffers), "800 of 1000 vs 0.5: %q", biased.Verdict)
	require.Nil(t, size.Test, "a deterministic count has an interval or a test: %+v", size)
	require.Nil(t, size.Interval, "a deterministic count has an interval or a test: %+v", size)
	require.Equal(t, 2, r.Verdicts.Printed, "policy %+v", r.Verdicts)
	require.Equal(t, 3, r.Verdicts.Candidates, "policy %+v", r.Verdicts)
	require.Equal(t, "Holm", r.Verdicts.Correction, "policy %+v", r.Verdicts)
	// Holm: the smaller p is multiplied by 2, the larger by 1.
	got, want := *biased.Test.PHolm, math.Min(1, 2*biased.Test.P)
	require.True(t, near(got, want, 1e-9), "Holm p %v, want %v", got, want)
}

// TestClusterIntervalsProper checks that a mean over wallets whose values
// are all 1 gets a proper interval below 1 (not [1, 1]), and a proportion
// never leaves [0, 1].
func TestClusterIntervalsProper(t *testing.T) {
	ones := make([]float64, 25)
	for i := range ones {
		ones[i] = 1
	}
	r := clusterPropRow("all ones", ones, ones, "wallets")
	require.Equal(t, float64(1), r.Interval[1], "25 wallets at 1: interval %v, want about [0.87, 1]", *r.Interval)
	require.LessOrEqual(t, r.Interval[0], 0.9, "25 wallets at 1: interval %v, want about [0.87, 1]", *r.Interval)
	require.GreaterOrEqual(t, r.Interval[0], 0.8, "25 wallets at 1: interval %v, want about [0.87, 1]", *r.Interval)
	num, den := []float64{9, 10, 8, 10}, []float64{10, 10, 10, 10}
	r = clusterPropRow("props", num, den, "wallets")
	require.GreaterOrEqual(t, r.Interval[0], float64(0), "interval %v around %v", *r.Interval, r.Measured)
	require.LessOrEqual(t, r.Interval[1], float64(1), "interval %v around %v", *r.Interval, r.Measured)
	require.LessOrEqual(t, r.Interval[0], r.Measured, "interval %v around %v", *r.Interval, r.Measured)
	require.GreaterOrEqual(t, r.Interval[1], r.Measured, "interval %v around %v", *r.Interval, r.Measured)
	z := clusterMeanRow("zeros", []float64{0, 0, 0}, []float64{1, 1, 1}, true, "wallets")
	require.Equal(t, float64(0), z.Interval[0], "three zero counts: %v, want the Poisson [0, 3.69/3]", *z.Interval)
	require.GreaterOrEqual(t, z.Interval[1], float64(1), "three zero counts: %v, want the Poisson [0, 3.69/3]", *z.Interval)
}
