package privacy

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// TestMeterTxFPSameQuantity checks that the dashboard's per-transaction
// false-positive line compares like with like: many blocks of
// transactions of DefaultElementsPerTx random elements each, served under
// filters of several rates that change between blocks (a reload that
// grows the filter, as the demo's do), tested against the filter the
// client sent last; the observed count must lie inside the Poisson range
// of the meter's expectation at every rate schedule, and the expectation
// must be the one of the filters that served the blocks, not the latest
// one alone.
func TestMeterTxFPSameQuantity(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 8))
	const (
		blocks      = 400
		txsPerBlock = 50
	)
	// Each schedule is the filters' target rates in turn, one per
	// quarter of the blocks.
	for _, schedule := range [][]float64{
		{1e-3, 1e-3, 1e-3, 1e-3},
		{2e-2, 2e-2, 2e-3, 2e-3},
		{1e-3, 5e-3, 2e-2, 5e-2},
		{5e-2, 1e-2, 1e-3, 1e-4},
	} {
		m := NewMeter(MeterConfig{})
		var fp, tested uint64
		var seq uint64
		var latest *bip37.Filter
		for b := range blocks {
			if b%(blocks/len(schedule)) == 0 {
				rate := schedule[b/(blocks/len(schedule))]
				latest = testkit.MustFilter(t, 200, rate, uint32(seq+1), bip37.UpdateNone, testkit.RandomCandidates(rng, 200, 1)...)
				_, err := m.Observe(testkit.LoadRecord(seq, "peer", int32(b), latest))
				require.NoError(t, err)
				seq++
			}
			for range txsPerBlock {
				tested++
				for range DefaultElementsPerTx {
					if latest.Matches(testkit.RandomBytes(rng, 32)) {
						fp++
						break
					}
				}
			}
			m.SetObserved(fp, tested)
		}
		r := m.Current()
		require.Equal(t, tested, r.ObservedTxTested)
		expected := r.ExpectedTxFPRate * float64(tested)
		lo, hi := stats.PoissonRange(expected, 0.999)
		require.Truef(t, fp >= lo && fp <= hi, "schedule %v: %d false positives observed, %.1f expected (99.9 %% range %d-%d)",
			schedule, fp, expected, lo, hi)
	}
}
