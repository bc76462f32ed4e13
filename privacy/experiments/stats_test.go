package experiments

import (
	"math"
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
	// The approximation used above exactPoissonMax agrees with the exact
	// bounds where the two branches meet.
	elo, ehi := PoissonInterval(exactPoissonMax, Z95)
	alo, ahi := poissonWilsonHilferty(exactPoissonMax, Z95)
	if !near(alo, elo, 1e-3) || !near(ahi, ehi, 1e-3) {
		t.Errorf("at c=%d exact [%.2f, %.2f] vs Wilson-Hilferty [%.2f, %.2f]", exactPoissonMax, elo, ehi, alo, ahi)
	}
	// Wilson: 0 of 10 -> [0, 0.2775]; 5 of 10 -> [0.2366, 0.7634].
	wilson := []struct {
		k, n   int
		lo, hi float64
	}{{0, 10, 0, 0.2775}, {5, 10, 0.2366, 0.7634}, {10, 10, 0.7225, 1}}
	for _, tc := range wilson {
		lo, hi := WilsonInterval(tc.k, tc.n, Z95)
		if math.Abs(lo-tc.lo) > 1e-3 || math.Abs(hi-tc.hi) > 1e-3 {
			t.Errorf("WilsonInterval(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	if lo, hi := WilsonInterval(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("WilsonInterval(0, 0) = [%v, %v]", lo, hi)
	}
}
