package joint_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/joint"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/stretchr/testify/require"
)

// The validation matrix of the joint model: synthetic random candidates
// scanned through real bip37 filters, the count that passes compared with
// candidates * the model's rate. Every case expects at least
// minExpectedFP passes so the comparison has power, and must land inside
// the central 99.9 % range of a Poisson count of that mean. Seeds are
// fixed: a run is reproducible.

// matrixLevel is the probability of the Poisson range a measured count
// must fall in.
const matrixLevel = 0.999

// minExpectedFP is the smallest expected count a case may have.
const minExpectedFP = 20

// matrixStage is the test a candidate must pass.
type matrixStage int

const (
	// stageOneForm: the single form matches every filter.
	stageOneForm matrixStage = iota
	// stageAnyForm: every filter matches at least one of two forms.
	stageAnyForm
	// stageAllForms: every filter matches both forms.
	stageAllForms
)

// matrixCase is one row of the matrix.
type matrixCase struct {
	name       string
	filters    []*bip37.Filter
	stage      matrixStage
	candidates uint64
	// update, when set, changes the filters after they were added to the
	// model and updates the model (a filteradd), before the scan.
	update func(j *joint.Joint)
}

// scanMatrix counts the synthetic candidates (seed, count) that pass the
// stage. With prefix, it counts for every p the candidates that pass the
// first p filters (single form only) in counts[p-1].
func scanMatrix(seed, count uint64, filters []*bip37.Filter, stage matrixStage) []uint64 {
	u := scan.Synthetic{Seed: seed, Count: count, PubKeys: stage != stageOneForm}
	counts := make([]uint64, len(filters))
	var c element.Candidate
	for i := range count {
		u.Fill(i, &c)
		passed := 0
		for _, f := range filters {
			ok := false
			switch stage {
			case stageOneForm:
				ok = f.Matches(c.Forms[0])
			case stageAnyForm:
				ok = f.Matches(c.Forms[0]) || f.Matches(c.Forms[1])
			case stageAllForms:
				ok = f.Matches(c.Forms[0]) && f.Matches(c.Forms[1])
			}
			if !ok {
				break
			}
			passed++
		}
		for p := range passed {
			counts[p]++
		}
	}
	return counts
}

// matrixRate returns the model's rate for the stage.
func matrixRate(t *testing.T, j *joint.Joint, stage matrixStage) float64 {
	t.Helper()
	switch stage {
	case stageAnyForm:
		b := j.AnyFormRate(2)
		require.True(t, b.Exact(), "any-form rate not exact: %+v", b)
		return b.Lower
	case stageAllForms:
		return j.AllFormsRate(2)
	}
	return j.Rate()
}

// independentStageRate returns the stage's rate for the filters taken as
// independent.
func independentStageRate(filters []*bip37.Filter, stage matrixStage) float64 {
	r := 1.0
	for _, f := range filters {
		switch stage {
		case stageAnyForm:
			r *= stats.AnyFormRate(f.CurrentFPRate(), 2)
		case stageAllForms:
			r *= stats.AllFormsRate(f.CurrentFPRate(), 2)
		default:
			r *= f.CurrentFPRate()
		}
	}
	return r
}

// capacityFilter returns bip37.NewFilter(capacity, fpRate, tweak) holding
// elems.
func capacityFilter(t *testing.T, capacity uint32, fpRate float64, tweak uint32, elems [][]byte) *bip37.Filter {
	t.Helper()
	f, err := bip37.NewFilter(capacity, fpRate, tweak, bip37.UpdateNone)
	require.NoError(t, err)
	for _, e := range elems {
		f.Add(e)
	}
	return f
}

func TestJointValidationMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("scans about 25 M synthetic candidates")
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(41, 42))
	el := joint.JointElements(rng, 4000)
	tw := rng.Uint32()
	nf := func(size int, k uint32, tweak uint32, elems [][]byte) *bip37.Filter {
		return joint.NewTestFilter(t, size, k, tweak, elems)
	}
	addSmall, addLarge := nf(300, 5, tw, el[:200]), nf(600, 5, tw, el[:200])
	cases := []matrixCase{
		{name: "same tweak, equal sizes (300 B, k 7), elements growing 150/210/270",
			filters:    []*bip37.Filter{nf(300, 7, tw, el[:150]), nf(300, 7, tw, el[:210]), nf(300, 7, tw, el[:270])},
			candidates: 2_000_000},
		{name: "same tweak, nested x2 (300, 600 B, k 7), same 250 elements",
			filters:    []*bip37.Filter{nf(300, 7, tw, el[:250]), nf(600, 7, tw, el[:250])},
			candidates: 2_000_000},
		{name: "same tweak, nested x4 (150, 600 B, k 7), same 250 elements",
			filters:    []*bip37.Filter{nf(150, 7, tw, el[:250]), nf(600, 7, tw, el[:250])},
			candidates: 2_000_000},
		{name: "same tweak, sizes that do not divide (260, 521 B, k 4), same 400 elements",
			filters:    []*bip37.Filter{nf(260, 4, tw, el[:400]), nf(521, 4, tw, el[:400])},
			candidates: 1_000_000},
		{name: "same tweak, mixed sizes (260, 521, 1042 B, k 4), same 400 elements",
			filters:    []*bip37.Filter{nf(260, 4, tw, el[:400]), nf(521, 4, tw, el[:400]), nf(1042, 4, tw, el[:400])},
			candidates: 4_000_000},
		{name: "same tweak, lcm > 2^32 (1000, 1001, 1003 B, k 3), same 1500 elements",
			filters:    []*bip37.Filter{nf(1000, 3, tw, el[:1500]), nf(1001, 3, tw, el[:1500]), nf(1003, 3, tw, el[:1500])},
			candidates: 1_000_000},
		{name: "different tweaks (3 x 100 B, k 3), same 150 elements",
			filters:    []*bip37.Filter{nf(100, 3, tw, el[:150]), nf(100, 3, tw+1, el[:150]), nf(100, 3, tw+2, el[:150])},
			candidates: 1_000_000},
		{name: "tweaks 0xFBA4C795 apart (200 B, k 4), same 150 elements",
			filters:    []*bip37.Filter{nf(200, 4, tw, el[:150]), nf(200, 4, tw+bip37.SeedStep, el[:150])},
			candidates: 1_000_000},
		{name: "filteradd: nested x2 (300, 600 B, k 5), 40 elements added to the larger",
			filters:    []*bip37.Filter{addSmall, addLarge},
			candidates: 1_000_000,
			update: func(j *joint.Joint) {
				for _, e := range el[3000:3040] {
					addLarge.Add(e)
				}
				j.Update(1, addLarge)
			}},
		{name: "two forms, every form must match: nested x2 (100, 200 B, k 3), same 150 elements",
			filters:    []*bip37.Filter{nf(100, 3, tw, el[:150]), nf(200, 3, tw, el[:150])},
			stage:      stageAllForms,
			candidates: 2_000_000},
		{name: "two forms, any form per filter: nested x2 (100, 200 B, k 3), same 150 elements",
			filters:    []*bip37.Filter{nf(100, 3, tw, el[:150]), nf(200, 3, tw, el[:150])},
			stage:      stageAnyForm,
			candidates: 400_000},
		{name: "two forms, any form per filter: 260/521 B k 4 + another tweak",
			filters:    []*bip37.Filter{nf(260, 4, tw, el[:300]), nf(521, 4, tw, el[:300]), nf(150, 2, tw+5, el[:100])},
			stage:      stageAnyForm,
			candidates: 3_000_000},
	}
	t.Logf("| case | filters | candidates | expected (joint) | independent product | measured | 99.9 %% range |")
	t.Logf("|---|---|---|---|---|---|---|")
	for ci, c := range cases {
		j := joint.NewJoint()
		for _, f := range c.filters {
			j.Add(f)
		}
		if c.update != nil {
			c.update(j)
			scratch := joint.NewJoint()
			for _, f := range c.filters {
				scratch.Add(f)
			}
			got, want := j.Rate(), scratch.Rate()
			require.True(t, joint.JointClose(got, want, 1e-12), "%s: updated model %.12g, rebuilt %.12g", c.name, got, want)
		}
		rate := matrixRate(t, j, c.stage)
		expected := rate * float64(c.candidates)
		indep := independentStageRate(c.filters, c.stage) * float64(c.candidates)
		counts := scanMatrix(uint64(1000+ci), c.candidates, c.filters, c.stage)
		checkMatrixRow(t, c.name, len(c.filters), c.candidates, expected, indep, counts[len(counts)-1])
	}

	// 2 to 6 filters of one tweak, k 3, sizes 200, 400, 400, 600, 800 and
	// 1200 bytes, elements growing: one scan counts every prefix.
	sizes := []int{200, 400, 400, 600, 800, 1200}
	var chain []*bip37.Filter
	for i, s := range sizes {
		chain = append(chain, nf(s, 3, tw, el[:300+40*i]))
	}
	const chainCandidates = 2_000_000
	counts := scanMatrix(2000, chainCandidates, chain, stageOneForm)
	j := joint.NewJoint()
	j.Add(chain[0])
	for p := 2; p <= len(chain); p++ {
		j.Add(chain[p-1])
		name := fmt.Sprintf("same tweak, %d filters (sizes %v B, k 3, elements 300 + 40 per filter)", p, sizes[:p])
		checkMatrixRow(t, name, p, chainCandidates, j.Rate()*chainCandidates,
			joint.IndependentRate(chain[:p])*chainCandidates, counts[p-1])
	}
	t.Logf("matrix scanned in %v", time.Since(start).Round(time.Millisecond))
}

// checkMatrixRow logs one row of the matrix and fails when the measured
// count is outside the Poisson range of the expected one.
func checkMatrixRow(t *testing.T, name string, filters int, candidates uint64, expected, indep float64, measured uint64) {
	t.Helper()
	require.GreaterOrEqual(t, expected, float64(minExpectedFP), "%s: expects %.1f passes, fewer than %d: the case has no power", name, expected, minExpectedFP)
	lo, hi := stats.PoissonRange(expected, matrixLevel)
	t.Logf("| %s | %d | %d | %.1f | %.3g | %d | [%d, %d] |", name, filters, candidates, expected, indep, measured, lo, hi)
	require.GreaterOrEqual(t, measured, lo, "%s: measured %d outside [%d, %d] around the expected %.1f", name, measured, lo, hi, expected)
	require.LessOrEqual(t, measured, hi, "%s: measured %d outside [%d, %d] around the expected %.1f", name, measured, lo, hi, expected)
}

func TestJointIndependentProductWrongForNestedCapacities(t *testing.T) {
	// The example: the same 300 elements in filters of one tweak
	// sized for 300 and then 600 elements at 1 % (359 and 718 bytes,
	// nested). Measured earlier: 7,463 of 20 M candidates pass both, where
	// the independent product predicted 71.9. Here 2 M candidates, a
	// tenth: the joint model must hold and the product must be refuted.
	rng := rand.New(rand.NewPCG(43, 44))
	el := joint.JointElements(rng, 300)
	tw := rng.Uint32()
	a := capacityFilter(t, 300, 0.01, tw, el)
	b := capacityFilter(t, 600, 0.01, tw, el)
	require.Equal(t, 2*a.Size(), b.Size(), "sizes %d and %d bytes do not nest", a.Size(), b.Size())
	const candidates = 2_000_000
	fs := []*bip37.Filter{a, b}
	expected := joint.JointRate(fs) * candidates
	indep := joint.IndependentRate(fs) * candidates
	measured := scanMatrix(3000, candidates, fs, stageOneForm)[1]
	checkMatrixRow(t, fmt.Sprintf("capacity 300 then 600 at 1 %% (%d, %d B, k %d), same 300 elements", a.Size(), b.Size(), a.HashFuncs()),
		2, candidates, expected, indep, measured)
	_, hi := stats.PoissonRange(indep, matrixLevel)
	require.Greater(t, measured, hi, "the independent product %.1f is not refuted by %d", indep, measured)
	require.GreaterOrEqual(t, expected, 50*indep, "joint %.1f is not orders of magnitude above the independent %.1f", expected, indep)
}
