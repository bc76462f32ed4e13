package stats

import (
	"math"
	"slices"
)

// FamilyAlpha is the family-wise false-alarm level of one run's verdicts:
// every test a run prints (each curve point's comparison, each behaviour
// score in `privacy analyze`; the experiments' rows in `privacy
// experiment`) is Holm-corrected to it together.
const FamilyAlpha = 0.05

// CorrectionHolm names Holm's step-down correction, the one package privacy
// applies to a family of tests.
const CorrectionHolm = "Holm"

// HolmAdjust returns Holm's step-down adjusted p-values of a family: the
// i-th smallest p times (m - i + 1), made monotone and capped at 1, in
// the order of ps. A hypothesis is rejected at family-wise level alpha
// when its adjusted p-value is below alpha; the chance of any false
// rejection is then at most alpha under any dependence between the
// tests. A NaN p-value counts as 1.
func HolmAdjust(ps []float64) []float64 {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	p := func(i int) float64 {
		if math.IsNaN(ps[i]) {
			return 1
		}
		return ps[i]
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch pa, pb := p(a), p(b); {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	out := make([]float64, len(ps))
	running := 0.0
	for r, i := range idx {
		adj := math.Min(1, math.Max(running, float64(len(ps)-r)*p(i)))
		running = adj
		out[i] = adj
	}
	return out
}

// HolmReject returns which hypotheses of the family Holm's procedure
// rejects at family-wise level alpha (adjusted p-value at most alpha).
func HolmReject(ps []float64, alpha float64) []bool {
	out := make([]bool, len(ps))
	for i, a := range HolmAdjust(ps) {
		out[i] = a <= alpha
	}
	return out
}
