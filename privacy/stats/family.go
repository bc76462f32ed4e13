package stats

// Verdicts as one family: every comparison a report prints (each
// curve point's measured false positives against the model, each
// behaviour score against chance) is a test; a test is printed only
// where it has the power to fail, and the printed ones are
// Holm-corrected together, so that on correct inputs the chance that any
// of them raises a false alarm is at most FamilyAlpha.

// Family says how one run's verdicts were decided.
type Family struct {
	Correction  string  `json:"correction"`
	FamilyAlpha float64 `json:"family_alpha"`
	// Candidates counts the tests asked for; Screened those with power
	// at FamilyAlpha (the power of each is then computed at FamilyAlpha
	// / Screened, Bonferroni's level, a lower bound of Holm's); Printed
	// those whose power there allows a verdict; Rejected those Holm
	// rejects (an "outside", a "points at" or an "avoids").
	Candidates int `json:"candidates"`
	Screened   int `json:"screened"`
	Printed    int `json:"printed"`
	Rejected   int `json:"rejected"`
}

// Test is one test of a family: its p-value, its power at a two-sided
// level, its least power for a verdict, and what to do once decided (adj
// is the Holm-adjusted p-value; nil: no verdict).
type Test struct {
	P        float64
	Power    func(level float64) float64
	MinPower float64
	Decide   func(power float64, adj *float64)
}

// DecideFamily screens the tests' power at FamilyAlpha, computes it for
// the screened ones at FamilyAlpha over their number, and Holm-corrects
// those with enough power; every test's Decide is called once.
func DecideFamily(tests []Test) Family {
	v := Family{Correction: CorrectionHolm, FamilyAlpha: FamilyAlpha, Candidates: len(tests)}
	for _, t := range tests {
		if t.Power(FamilyAlpha) >= t.MinPower {
			v.Screened++
		}
	}
	level := FamilyAlpha / float64(max(1, v.Screened))
	var printed []int
	powers := make([]float64, len(tests))
	for i, t := range tests {
		powers[i] = t.Power(level)
		if powers[i] >= t.MinPower {
			printed = append(printed, i)
		}
	}
	ps := make([]float64, len(printed))
	for k, i := range printed {
		ps[k] = tests[i].P
	}
	adjusted := HolmAdjust(ps)
	done := make([]bool, len(tests))
	for k, i := range printed {
		adj := adjusted[k]
		if adj < FamilyAlpha {
			v.Rejected++
		}
		tests[i].Decide(powers[i], &adj)
		done[i] = true
	}
	v.Printed = len(printed)
	for i, t := range tests {
		if !done[i] {
			t.Decide(powers[i], nil)
		}
	}
	return v
}
