package bip37

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// closeTo reports whether got is within a relative tolerance of want.
func closeTo(got, want, rel float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// TestFalsePositiveRate checks the formula against the published bitcoinj
// figures (Nick 2015, docs/RESEARCH.md "Sources, as read") and the
// degenerate cases.
func TestFalsePositiveRate(t *testing.T) {
	tests := []struct {
		name  string
		nBits uint64
		k     uint32
		m     float64
		want  float64
		rel   float64
	}{
		// 1,269 bytes, k = 10 (computed from BIP37); f(542) = 1.46e-4 (Nick's
		// blog: fp = 0.000146).
		{"bitcoinj f(542)", 1269 * 8, 10, 542, 1.46e-4, 0.01},
		// At capacity the rate is close to the design target 0.0005.
		{"bitcoinj at capacity", 1269 * 8, 10, 642, 5.0e-4, 0.05},
		{"no insertions", 1000, 5, 0, 0, 0},
		{"no bits", 0, 5, 10, 1, 0},
		{"no hash functions", 1000, 0, 10, 1, 0},
		// (1 - e^-1)^1 for k m / n = 1.
		{"closed form", 100, 1, 100, 1 - math.Exp(-1), 1e-15},
	}
	for _, tc := range tests {
		got := FalsePositiveRate(tc.nBits, tc.k, tc.m)
		require.True(t, closeTo(got, tc.want, tc.rel), "%s: FalsePositiveRate(%d, %d, %v) = %v, want %v", tc.name, tc.nBits, tc.k, tc.m, got, tc.want)
	}
	// The pubkey-AND-hash test gives f^2 = 2.15e-8 (computed; Nick's blog
	// squared the rounded 0.000146: 2.13e-8).
	f := FalsePositiveRate(1269*8, 10, 542)
	require.True(t, closeTo(f*f, 2.15e-8, 0.02), "f^2 = %v, want 2.15e-8", f*f)
}

// TestEstimateElements checks the estimator on bit counts produced by a
// known fill and the edge cases.
func TestEstimateElements(t *testing.T) {
	tests := []struct {
		name    string
		nBits   uint64
		k       uint32
		bitsSet uint64
		want    float64
	}{
		{"empty", 1000, 5, 0, 0},
		// X = n(1 - e^(-k m / n)) inverted for n = 1000, k = 5, m = 100.
		{"expected fill", 1000, 5, 393, 99.87},
		{"saturated", 1000, 5, 1000, math.Inf(1)},
		{"over-saturated", 1000, 5, 2000, math.Inf(1)},
	}
	for _, tc := range tests {
		got := EstimateElements(tc.nBits, tc.k, tc.bitsSet)
		require.True(t, closeTo(got, tc.want, 1e-3), "%s: EstimateElements = %v, want %v", tc.name, got, tc.want)
	}
	for _, tc := range []struct{ nBits, k uint64 }{{0, 5}, {100, 0}} {
		got := EstimateElements(tc.nBits, uint32(tc.k), 0)
		require.True(t, math.IsNaN(got), "EstimateElements(%d, %d, 0) = %v, want NaN", tc.nBits, tc.k, got)
	}
}

// TestFilterEstimates checks that a filter's own estimators track the
// number of distinct elements inserted.
func TestFilterEstimates(t *testing.T) {
	f, err := NewFilter(1000, 0.0001, 12345, UpdateNone)
	require.NoError(t, err)
	const inserted = 600
	for i := range inserted {
		f.Add([]byte{byte(i), byte(i >> 8), 0xab, 0xcd})
	}
	est := f.EstimatedElements()
	require.InDelta(t, inserted, est, 0.05*inserted, "EstimatedElements = %v after %d inserts", est, inserted)
	theory := f.FPRate(inserted)
	current := f.CurrentFPRate()
	require.Greater(t, current, float64(0), "CurrentFPRate %v vs FPRate(%d) %v", current, inserted, theory)
	require.True(t, closeTo(current, theory, 0.5), "CurrentFPRate %v vs FPRate(%d) %v", current, inserted, theory)
	want := math.Pow(float64(f.BitsSet())/float64(f.NumBits()), float64(f.HashFuncs()))
	require.Equal(t, want, current, "CurrentFPRate = %v, want (X/n)^k = %v", current, want)
}

// TestExpectedFalsePositives checks f * (|A| - N).
func TestExpectedFalsePositives(t *testing.T) {
	tests := []struct {
		f          float64
		universe   uint64
		members    uint64
		wantResult float64
	}{
		{0.001, 1000000, 20, 999.98},
		{2.15e-8, 60000000, 271, 2.15e-8 * (60000000 - 271)},
		{0.5, 10, 10, 0},
		{0.5, 10, 20, 0},
	}
	for _, tc := range tests {
		got := ExpectedFalsePositives(tc.f, tc.universe, tc.members)
		require.True(t, closeTo(got, tc.wantResult, 1e-12), "ExpectedFalsePositives(%v, %d, %d) = %v, want %v", tc.f, tc.universe, tc.members, got, tc.wantResult)
	}
}
