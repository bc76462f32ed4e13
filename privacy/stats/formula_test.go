package stats

import (
	"math"
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

func TestLog2Binomial(t *testing.T) {
	tests := []struct {
		name string
		n, k float64
		want float64
	}{
		{"C(4,2)=6", 4, 2, math.Log2(6)},
		{"C(10,3)=120", 10, 3, math.Log2(120)},
		{"C(52,5)=2598960", 52, 5, math.Log2(2598960)},
		{"C(n,0)=1", 7, 0, 0},
		{"C(n,n)=1", 7, 7, 0},
		{"k>n clamps to 0", 3, 5, 0},
		// C(1e9, 10) = prod_{i<10}(1e9-i) / 10!, summed in logs.
		{"C(1e9,10)", 1e9, 10, func() float64 {
			s := 0.0
			for i := range 10 {
				s += math.Log2(1e9-float64(i)) - math.Log2(float64(i+1))
			}
			return s
		}()},
		// Real-valued n: C(2.5, 1) = Gamma(3.5)/(Gamma(2)Gamma(2.5)) = 2.5.
		{"C(2.5,1)=2.5", 2.5, 1, math.Log2(2.5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Log2Binomial(tc.n, tc.k)
			require.True(t, near(got, tc.want, 1e-9), "Log2Binomial(%g, %g) = %.12g, want %.12g", tc.n, tc.k, got, tc.want)
		})
	}
	for _, bad := range [][2]float64{{-1, 0}, {5, -1}, {math.NaN(), 1}} {
		got := Log2Binomial(bad[0], bad[1])
		require.True(t, math.IsNaN(got), "Log2Binomial(%v) = %v, want NaN", bad, got)
	}
}

func TestEntropyPrecisionRecall(t *testing.T) {
	tests := []struct {
		name             string
		n, f             float64
		entropy, precise float64
	}{
		{"no false positive: no uncertainty", 5, 0, 0, 1},
		{"one of two", 1, 1, 1, 0.5},
		{"one of four", 1, 3, 2, 0.25},
		{"two of four: C(4,2)=6", 2, 2, math.Log2(6), 0.5},
		{"expected (fractional) F", 1, 0.5, math.Log2(1.5), 1 / 1.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Entropy(tc.n, tc.f)
			require.True(t, near(got, tc.entropy, 1e-9), "Entropy = %v, want %v", got, tc.entropy)
			got = Precision(tc.n, tc.f)
			require.True(t, near(got, tc.precise, 1e-12), "Precision = %v, want %v", got, tc.precise)
		})
	}
	got := Precision(0, 0)
	require.Equal(t, float64(0), got, "Precision of an empty set = %v, want 0", got)
	got = Recall(3, 4)
	require.Equal(t, 0.75, got, "Recall(3, 4) = %v", got)
	got = Recall(3, 0)
	require.Equal(t, float64(0), got, "Recall(3, 0) = %v", got)
}

func TestRates(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"P(no FP) (1-0.5)^2", ProbNoFalsePositive(0.5, 2), 0.25},
		{"P(no FP) f=0", ProbNoFalsePositive(0, 1e9), 1},
		{"P(no FP) f=1", ProbNoFalsePositive(1, 3), 0},
		{"P(no FP) ~ e^-E", ProbNoFalsePositive(1e-9, 1e9), math.Exp(-1)},
		{"any form 1-(1-.5)^2", AnyFormRate(0.5, 2), 0.75},
		{"any form of one form is f", AnyFormRate(1e-4, 1), 1e-4},
		{"all forms f^2", AllFormsRate(0.1, 2), 0.01},
		{"bitcoinj f^2", AllFormsRate(1.46e-4, 2), 2.1316e-8},
		{"intersection", IntersectionRate([]float64{0.5, 0.1, 0.2}), 0.01},
		{"intersection of none", IntersectionRate(nil), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, near(tc.got, tc.want, 1e-6), "got %.10g, want %.10g", tc.got, tc.want)
		})
	}
}

func TestBinomialSigma(t *testing.T) {
	got := BinomialSigma(100, 0.5)
	require.Equal(t, float64(5), got, "BinomialSigma(100, .5) = %v", got)
}
