package behaviour

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpanSet checks the asked-heights set.
func TestSpanSet(t *testing.T) {
	var s spanSet
	s.add(10, 20)
	s.add(30, 40)
	s.add(21, 29) // adjacent on both sides: one span
	require.Len(t, s, 1, "%v, want [10 40]", s)
	require.Equal(t, (span{10, 40}), s[0], "%v, want [10 40]", s)
	s.add(50, 50)
	s.add(5, 7)
	for _, c := range []struct {
		from, to int32
		want     int32
		ok       bool
	}{{0, 4, 0, false}, {0, 5, 5, true}, {8, 9, 0, false}, {8, 12, 10, true}, {41, 49, 0, false}, {45, 60, 50, true}, {15, 15, 15, true}} {
		got, ok := s.firstCovered(c.from, c.to)
		require.Equal(t, c.ok, ok, "firstCovered(%d, %d) = %d %v, want %d %v (set %v)", c.from, c.to, got, ok, c.want, c.ok, s)
		require.False(t, ok && got != c.want, "firstCovered(%d, %d) = %d %v, want %d %v (set %v)", c.from, c.to, got, ok, c.want, c.ok, s)
	}
}

// TestHypergeometric checks the chance range and p-value against hand
// counts.
func TestHypergeometric(t *testing.T) {
	// 10 candidates, 3 the wallet's, 2 drawn: P(0) = 21/45, P(1) = 21/45,
	// P(2) = 3/45.
	h := newHypergeometric(10, 3, 2)
	for x, want := range []float64{21.0 / 45, 21.0 / 45, 3.0 / 45} {
		got := h.pmf[x-h.lo]
		require.InDelta(t, want, got, 1e-12, "pmf(%d) = %g, want %g", x, got, want)
	}
	lo, hi := h.central(0.025)
	require.Equal(t, 0, lo, "central = [%d, %d], want [0, 2] (P(2) = 0.067 > 0.025)", lo, hi)
	require.Equal(t, 2, hi, "central = [%d, %d], want [0, 2] (P(2) = 0.067 > 0.025)", lo, hi)
	p := h.pValue(2)
	require.InDelta(t, 6.0/45, p, 1e-12, "p(2) = %g, want %g", p, 6.0/45)
	// 1000 candidates, 100 the wallet's, 100 drawn: mean 10, sd 2.85.
	lo, hi = newHypergeometric(1000, 100, 100).central(0.025)
	require.GreaterOrEqual(t, lo, 4, "central = [%d, %d], want about 10 ± 1.96 x 2.85", lo, hi)
	require.LessOrEqual(t, lo, 5, "central = [%d, %d], want about 10 ± 1.96 x 2.85", lo, hi)
	require.GreaterOrEqual(t, hi, 15, "central = [%d, %d], want about 10 ± 1.96 x 2.85", lo, hi)
	require.LessOrEqual(t, hi, 16, "central = [%d, %d], want about 10 ± 1.96 x 2.85", lo, hi)
}
