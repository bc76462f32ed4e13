package experiments

import (
	"math"
	"strings"
	"testing"
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
			if !near(tc.got, tc.want, 1e-6) {
				t.Errorf("got %.10g, want %.10g", tc.got, tc.want)
			}
		})
	}
	if !math.IsInf(RelDiff(1, 0), 1) {
		t.Error("RelDiff(1, 0) should be +Inf")
	}
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
		if math.Abs(lo-tc.lo) > 1e-3*math.Max(1, tc.lo) || math.Abs(hi-tc.hi) > 1e-3*tc.hi {
			t.Errorf("PoissonInterval(%d) = [%.4g, %.4g], want about [%.4g, %.4g]", tc.c, lo, hi, tc.lo, tc.hi)
		}
	}
	// Large counts: the normal approximation c +- z sqrt(c) within 1 %.
	lo, hi := PoissonInterval(1_000_000, Z95)
	if !near(lo, 1e6-Z95*1000, 1e-4) || !near(hi, 1e6+Z95*1000, 1e-4) {
		t.Errorf("PoissonInterval(1e6) = [%.1f, %.1f]", lo, hi)
	}
	// Wilson: 0 of 10 -> [0, 0.2775]; 5 of 10 -> [0.2366, 0.7634].
	wilson := []struct {
		k, n   int
		lo, hi float64
	}{{0, 10, 0, 0.2775}, {5, 10, 0.2366, 0.7634}, {10, 10, 0.7225, 1}}
	for _, tc := range wilson {
		lo, hi := WilsonInterval(float64(tc.k), float64(tc.n), Z95)
		if math.Abs(lo-tc.lo) > 1e-3 || math.Abs(hi-tc.hi) > 1e-3 {
			t.Errorf("WilsonInterval(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	if lo, hi := WilsonInterval(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("WilsonInterval(0, 0) = [%v, %v]", lo, hi)
	}
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
		if math.Abs(lo-tc.lo) > 1e-4 || math.Abs(hi-tc.hi) > 1e-4 {
			t.Errorf("ClopperPearson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.x, tc.n, lo, hi, tc.lo, tc.hi)
		}
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
	if got := BinomialCDF(3, 20, 0.3); !near(got, sum, 1e-10) {
		t.Errorf("BinomialCDF(3, 20, 0.3) = %v, want %v", got, sum)
	}
	if got := PoissonCDF(2, 1.5); !near(got, math.Exp(-1.5)*(1+1.5+1.125), 1e-12) {
		t.Errorf("PoissonCDF(2, 1.5) = %v", got)
	}
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
	if tiny.Verdict != "" || tiny.Test == nil || tiny.Test.Printed || tiny.Test.Power > 0.1 {
		t.Errorf("0 vs 1e-10: verdict %q, test %+v: want none (no power)", tiny.Verdict, tiny.Test)
	}
	if !strings.HasPrefix(fair.Verdict, VerdictAgrees) || fair.Test.Power < MinPower || fair.Test.PHolm == nil {
		t.Errorf("480 of 1000 vs 0.5: %q %+v", fair.Verdict, fair.Test)
	}
	if !strings.HasPrefix(biased.Verdict, VerdictDiffers) {
		t.Errorf("800 of 1000 vs 0.5: %q", biased.Verdict)
	}
	if size.Test != nil || size.Interval != nil {
		t.Errorf("a deterministic count has an interval or a test: %+v", size)
	}
	if r.Verdicts.Printed != 2 || r.Verdicts.Candidates != 3 || r.Verdicts.Correction != "Holm" {
		t.Errorf("policy %+v", r.Verdicts)
	}
	// Holm: the smaller p is multiplied by 2, the larger by 1.
	if got, want := *biased.Test.PHolm, math.Min(1, 2*biased.Test.P); !near(got, want, 1e-9) {
		t.Errorf("Holm p %v, want %v", got, want)
	}
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
	if r.Interval[1] != 1 || r.Interval[0] > 0.9 || r.Interval[0] < 0.8 {
		t.Errorf("25 wallets at 1: interval %v, want about [0.87, 1]", *r.Interval)
	}
	num, den := []float64{9, 10, 8, 10}, []float64{10, 10, 10, 10}
	r = clusterPropRow("props", num, den, "wallets")
	if r.Interval[0] < 0 || r.Interval[1] > 1 || r.Interval[0] > r.Measured || r.Interval[1] < r.Measured {
		t.Errorf("interval %v around %v", *r.Interval, r.Measured)
	}
	z := clusterMeanRow("zeros", []float64{0, 0, 0}, []float64{1, 1, 1}, true, "wallets")
	if z.Interval[0] != 0 || z.Interval[1] < 1 {
		t.Errorf("three zero counts: %v, want the Poisson [0, 3.69/3]", *z.Interval)
	}
}
