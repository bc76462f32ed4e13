package stats

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecideFamily decides a family of three: one without power, one
// Holm rejects and one it keeps, and checks every test is decided once
// with the counts the family reports.
func TestDecideFamily(t *testing.T) {
	decided := map[string]int{}
	var adjs = map[string]*float64{}
	test := func(name string, p, power float64) Test {
		return Test{P: p, MinPower: 0.8,
			Power: func(float64) float64 { return power },
			Decide: func(_ float64, adj *float64) {
				decided[name]++
				adjs[name] = adj
			},
		}
	}
	fam := DecideFamily([]Test{test("weak", 0.001, 0.1), test("reject", 0.001, 0.9), test("keep", 0.5, 0.9)})
	require.Equal(t, Family{Correction: CorrectionHolm, FamilyAlpha: FamilyAlpha, Candidates: 3, Screened: 2, Printed: 2, Rejected: 1}, fam)
	require.Equal(t, map[string]int{"weak": 1, "reject": 1, "keep": 1}, decided)
	require.Nil(t, adjs["weak"])
	require.InDelta(t, 0.002, *adjs["reject"], 1e-12)
	require.InDelta(t, 0.5, *adjs["keep"], 1e-12)
}
