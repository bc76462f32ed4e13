package scan

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/stretchr/testify/require"
)

// onlyStream hides a universe's indexed form so Run takes its batch path.
type onlyStream struct{ element.Universe }

// failingStream yields n candidates, then fails.
type failingStream struct {
	n   int
	err error
}

func (f *failingStream) Next(c *element.Candidate) bool {
	if f.n == 0 {
		return false
	}
	f.n--
	c.Forms = [][]byte{{byte(f.n), byte(f.n >> 8), 1}}
	return true
}

func (f *failingStream) Err() error { return f.err }

func TestScanMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	wallet := testkit.RandomCandidates(rng, 30, 2)
	// A loose filter so thousands of candidates match.
	f1 := testkit.MustFilter(t, 60, 0.05, 1, bip37.UpdateNone, wallet...)
	f2 := testkit.MustFilter(t, 20, 0.1, 2, bip37.UpdateNone, wallet[:10]...)
	empty, err := bip37.NewFilterFromBits(nil, 0, 0, bip37.UpdateNone)
	require.NoError(t, err)
	filters := []*bip37.Filter{f1, f2}
	universe := append(testkit.RandomCandidates(rng, 40000, 1), testkit.RandomCandidates(rng, 20000, 2)...)
	universe = append(universe, wallet...)
	truth := element.NewSetFromCandidates(wallet)

	tests := []struct {
		name    string
		u       element.Universe
		workers int
	}{
		{"indexed, one worker", element.Stream(element.SliceUniverse(universe)), 1},
		{"indexed, four workers", element.Stream(element.SliceUniverse(universe)), 4},
		{"stream batches", onlyStream{element.Stream(element.SliceUniverse(universe))}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := scanAll(t, tc.u, Config{Filters: filters, Truth: truth, Workers: tc.workers})
			require.Equal(t, uint64(len(universe)), r.Scanned, "scanned %d, want %d", r.Scanned, len(universe))
			require.Equal(t, uint64(40000), r.FormCounts[1], "form counts %v", r.FormCounts[:3])
			require.Equal(t, uint64(20030), r.FormCounts[2], "form counts %v", r.FormCounts[:3])
			require.Equal(t, uint64(30), r.Truth(), "truth counts %v", r.TruthCounts[:3])
			require.Equal(t, uint64(30), r.TruthCounts[2], "truth counts %v", r.TruthCounts[:3])
			for j, f := range filters {
				anyM, allM := testkit.BruteForce(universe, f)
				gotAny, gotAll := hitKeys(r, j, false), hitKeys(r, j, true)
				var nAny, nAll uint64
				for i, c := range universe {
					if anyM[i] != gotAny[c.Key()] || allM[i] != gotAll[c.Key()] {
						require.Equal(t, gotAny[c.Key()], anyM[i], "filter %d candidate %d: scan any=%v all=%v, brute force %v %v", j, i, gotAny[c.Key()], gotAll[c.Key()], anyM[i], allM[i])
						require.Equal(t, gotAll[c.Key()], allM[i], "filter %d candidate %d: scan any=%v all=%v, brute force %v %v", j, i, gotAny[c.Key()], gotAll[c.Key()], anyM[i], allM[i])
					}
					if anyM[i] {
						nAny++
					}
					if allM[i] {
						nAll++
					}
				}
				require.Equal(t, nAny, r.AnyCounts[j], "filter %d counts %d/%d, want %d/%d", j, r.AnyCounts[j], r.AllCounts[j], nAny, nAll)
				require.Equal(t, nAll, r.AllCounts[j], "filter %d counts %d/%d, want %d/%d", j, r.AnyCounts[j], r.AllCounts[j], nAny, nAll)
				require.GreaterOrEqual(t, nAny, uint64(1000), "filter %d matched only %d: test too weak", j, nAny)
			}
			for i := 1; i < len(r.Hits); i++ {
				require.False(t, r.Hits[i-1].Candidate.Key() >= r.Hits[i].Candidate.Key(), "hits not sorted and distinct")
			}
		})
	}
	t.Run("match-all filter", func(t *testing.T) {
		r := scanAll(t, element.Stream(element.SliceUniverse(universe[:100])), Config{Filters: []*bip37.Filter{empty}})
		require.Equal(t, uint64(100), r.AnyCounts[0], "empty filter matched %d", r.AnyCounts[0])
		require.Len(t, r.Hits, 100, "empty filter matched %d", r.AnyCounts[0])
	})
}

func TestScanErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	loose := testkit.MustFilter(t, 1, 0.5, 0, bip37.UpdateNone, testkit.RandomCandidates(rng, 1, 1)...)
	_, err := Run(context.Background(), element.Stream(Synthetic{Seed: 1, Count: 100000}), Config{Filters: []*bip37.Filter{loose}, MaxHits: 10})
	require.ErrorIs(t, err, ErrTooManyHits, "err = %v, want ErrTooManyHits", err)
	boom := errors.New("disk on fire")
	_, err = Run(context.Background(), &failingStream{n: 5, err: boom}, Config{Filters: []*bip37.Filter{loose}})
	require.ErrorIs(t, err, boom, "err = %v, want the stream's error", err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, element.Stream(Synthetic{Seed: 1, Count: 1 << 20}), Config{Filters: []*bip37.Filter{loose}})
	require.ErrorIs(t, err, context.Canceled, "err = %v, want context.Canceled", err)
}

// TestScanMonteCarloFPRate checks the measured false-positive count of
// real filters over synthetic universes against the binomial law of the
// exact rate (X/n)^k, within 5 standard deviations. The seeds are fixed,
// so the test is deterministic; with correct code a failure would be a
// 5-sigma event (probability below 1e-6 per case).
func TestScanMonteCarloFPRate(t *testing.T) {
	const sigmas = 5
	tests := []struct {
		name     string
		capacity uint32
		elements int
		fp       float64
		universe uint64
	}{
		{"bitcoinj at 542 of 642", 642, 542, 0.0005, 4_000_000},
		{"at capacity, 1%", 1000, 1000, 0.01, 1_000_000},
		{"overfilled 3x", 100, 300, 0.001, 1_000_000},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			f := testkit.MustFilter(t, tc.capacity, tc.fp, rng.Uint32(), bip37.UpdateNone, testkit.RandomCandidates(rng, tc.elements, 1)...)
			r := scanAll(t, element.Stream(Synthetic{Seed: uint64(100 + i), Count: tc.universe}), Config{Filters: []*bip37.Filter{f}})
			p := f.CurrentFPRate()
			mean := p * float64(tc.universe)
			sd := stats.BinomialSigma(float64(tc.universe), p)
			got := float64(r.AnyCounts[0])
			require.InDelta(t, mean, got, sigmas*sd, "measured %v false positives, expected %.1f +- %.1f (5 sigma %.1f)", got, mean, sd, sigmas*sd)
			// The design-time formula f(m) agrees with the exact rate.
			theory := f.FPRate(float64(tc.elements))
			require.InDelta(t, p, theory, 0.1*p, "f(m) = %g vs exact %g", theory, p)
		})
	}
}
