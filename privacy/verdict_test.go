package privacy

import (
	"encoding/json"
	"math/rand"
	randv2 "math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/behavetest"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// TestVerdictsFlipOnWrongInput: each verdict comes out one way on a
// right input and flips on a deliberately wrong one. The count
// comparison: a universe holding 150 candidates inserted in the filter
// that the truth leaves out (unaccounted decoys, as a wrong truth file
// would) is "outside"; with them in the truth it is "inside". The
// behaviour scores: reloads right after each payment point at the
// wallet; reloads on a schedule of their own are no better than chance.
func TestVerdictsFlipOnWrongInput(t *testing.T) {
	fx := newFixture(36, 20, 30_000, 1)
	extra := testkit.RandomCandidates(randv2.New(randv2.NewPCG(36, 1)), 150, 1)
	f := testkit.MustFilter(t, 200, 0.01, 7, bip37.UpdateNone, append(fx.wallet, extra...)...)
	univ := append(append([]element.Candidate(nil), fx.universe...), extra...)
	rec := []transcript.Record{testkit.LoadRecord(0, "127.0.0.1:1", 5, f)}
	for _, tc := range []struct {
		name  string
		truth []element.Candidate
		want  string
	}{
		{"right truth", append(append([]element.Candidate(nil), fx.wallet...), extra...), stats.ComparisonInside},
		{"truth missing 150 inserted elements", fx.wallet, stats.ComparisonOutside},
	} {
		rep := analyze(t, Input{Records: rec, Universe: element.Stream(element.SliceUniverse(univ)), Truth: tc.truth})
		p := lastPoint(t, rep, StageSingle)
		require.Equalf(t, tc.want, p.Comparison, "%s: %d false positives, %.1f expected, power %.2f", tc.name, p.FalsePositives, p.ExpectedFP, p.ComparisonPower)
		require.NotNil(t, p.ComparisonPHolm)
		var b strings.Builder
		require.NoError(t, rep.WriteTable(&b))
		require.Contains(t, b.String(), map[string]string{stats.ComparisonInside: "inside (", stats.ComparisonOutside: "OUTSIDE ("}[tc.want])
	}

	c := behavetest.NewChain(rand.New(rand.NewSource(1)), 100, 399, 0.3)
	immediate := behavetest.RunLive(t, c, func(h int32) bool { return c.Wallet[h] }, false)
	require.Equal(t, behaviour.VerdictPoints, immediate.Blocks.Score(behaviour.SignalReloadTiming).Verdict)
	rng := rand.New(rand.NewSource(2))
	c = behavetest.NewChain(rng, 100, 599, 0.3)
	own := behavetest.RunLive(t, c, behavetest.Scheduled(rng, c.From), true)
	s := own.Blocks.Score(behaviour.SignalReloadTiming)
	require.Equalf(t, behaviour.VerdictChance, s.Verdict, "%v (power %.2f)", s, s.Power)
	require.GreaterOrEqual(t, s.Power, behaviour.MinVerdictPower)
}

// TestVerdictCalibration: over 100 correct inputs (fresh universes
// through four filters of one wallet, two tweaks and three sizes, the
// truth complete), the share of runs in which any verdict of the run
// raises a false alarm is at most 5 %. Each run prints eight comparisons
// (single and intersection, one per filterload); without the family's
// correction the false alarms add up across them.
func TestVerdictCalibration(t *testing.T) {
	const runs = 100
	alarms, tests := 0, 0
	for run := range runs {
		seed := uint64(1000 + run)
		fx := newFixture(seed, 20, 20_000, 1)
		fs := []*bip37.Filter{
			testkit.MustFilter(t, 20, 0.02, uint32(seed), bip37.UpdateNone, fx.wallet...),
			testkit.MustFilter(t, 20, 0.005, uint32(seed), bip37.UpdateNone, fx.wallet...),
			testkit.MustFilter(t, 20, 0.05, uint32(seed)+1, bip37.UpdateNone, fx.wallet...),
			testkit.MustFilter(t, 20, 0.01, uint32(seed)+1, bip37.UpdateNone, fx.wallet...),
		}
		var rec []transcript.Record
		for i, f := range fs {
			rec = append(rec, testkit.LoadRecord(uint64(i), "127.0.0.1:1", int32(5+i), f))
		}
		rep := analyze(t, Input{Records: rec, Universe: element.Stream(element.SliceUniverse(fx.universe)), Truth: fx.wallet,
			Attacks: Attacks{Intersection: true}})
		tests += rep.Verdicts.Printed
		if rep.Verdicts.Rejected > 0 {
			alarms++
		}
	}
	iv := stats.BinomialInterval(uint64(alarms), runs, stats.ConfidenceLevel)
	t.Logf("%d of %d correct runs raised a false alarm (%d verdicts printed): family-wise rate %.2f, 95 %% interval [%.3f, %.3f] (Clopper-Pearson)",
		alarms, runs, tests, float64(alarms)/runs, iv.Lo, iv.Hi)
	require.GreaterOrEqual(t, tests, 5*runs, "the runs must print verdicts to calibrate")
	require.LessOrEqual(t, alarms, runs*5/100)
}

// TestIntervalMethodsNamed: the precision's interval is F's mapped
// through N/(N+F) (about as narrow as F's relative interval, not a
// binomial over the matches), the recall has none, and each interval's
// method is named beside it in the text, the JSON and the CSV.
func TestIntervalMethodsNamed(t *testing.T) {
	fx := newFixture(37, 20, 200_000, 1)
	f := testkit.MustFilter(t, 20, 0.02, 9, bip37.UpdateNone, fx.wallet...)
	rep := analyze(t, Input{Records: []transcript.Record{testkit.LoadRecord(0, "127.0.0.1:1", 5, f)}, Universe: element.Stream(element.SliceUniverse(fx.universe)), Truth: fx.wallet})
	p := lastPoint(t, rep, StageSingle)
	require.Equal(t, stats.MethodPoissonMapped, p.PrecisionCI.Method)
	require.InDelta(t, stats.Precision(20, p.FalsePositivesCI.Hi), p.PrecisionCI.Lo, 1e-12)
	require.InDelta(t, stats.Precision(20, p.FalsePositivesCI.Lo), p.PrecisionCI.Hi, 1e-12)
	cp := stats.BinomialInterval(p.TruePositives, p.Matched, stats.ConfidenceLevel)
	require.Less(t, 2*(p.PrecisionCI.Hi-p.PrecisionCI.Lo), cp.Hi-cp.Lo, "F's interval mapped is far narrower than Clopper-Pearson on the matches")
	require.Equal(t, 1.0, p.Recall)
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	for _, want := range []string{"95 % (Garwood)", "95 % (F mapped)", "1 (certain)", "95 % (normal)"} {
		require.Contains(t, b.String(), want)
	}
	var csvOut strings.Builder
	require.NoError(t, WriteCSV(&csvOut, rep.Curves))
	header := strings.SplitN(csvOut.String(), "\n", 2)[0]
	for _, want := range []string{"false_positives_method", "precision_method", "entropy_method", "est_elements_method", "comparison_p_holm"} {
		require.Contains(t, header, want)
	}
	require.NotContains(t, header, "recall_lo")
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"precision_ci":{"lo":`)
	require.Contains(t, string(raw), `"method":"poisson-garwood-mapped"`)
	require.NotContains(t, string(raw), "recall_ci")
}
