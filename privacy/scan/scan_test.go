package scan

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
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
	if err != nil {
		t.Fatal(err)
	}
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
			if r.Scanned != uint64(len(universe)) {
				t.Fatalf("scanned %d, want %d", r.Scanned, len(universe))
			}
			if r.FormCounts[1] != 40000 || r.FormCounts[2] != 20030 {
				t.Errorf("form counts %v", r.FormCounts[:3])
			}
			if r.Truth() != 30 || r.TruthCounts[2] != 30 {
				t.Errorf("truth counts %v", r.TruthCounts[:3])
			}
			for j, f := range filters {
				anyM, allM := testkit.BruteForce(universe, f)
				gotAny, gotAll := hitKeys(r, j, false), hitKeys(r, j, true)
				var nAny, nAll uint64
				for i, c := range universe {
					if anyM[i] != gotAny[c.Key()] || allM[i] != gotAll[c.Key()] {
						t.Fatalf("filter %d candidate %d: scan any=%v all=%v, brute force %v %v",
							j, i, gotAny[c.Key()], gotAll[c.Key()], anyM[i], allM[i])
					}
					if anyM[i] {
						nAny++
					}
					if allM[i] {
						nAll++
					}
				}
				if r.AnyCounts[j] != nAny || r.AllCounts[j] != nAll {
					t.Errorf("filter %d counts %d/%d, want %d/%d", j, r.AnyCounts[j], r.AllCounts[j], nAny, nAll)
				}
				if nAny < 1000 {
					t.Errorf("filter %d matched only %d: test too weak", j, nAny)
				}
			}
			for i := 1; i < len(r.Hits); i++ {
				if r.Hits[i-1].Candidate.Key() >= r.Hits[i].Candidate.Key() {
					t.Fatal("hits not sorted and distinct")
				}
			}
		})
	}
	t.Run("match-all filter", func(t *testing.T) {
		r := scanAll(t, element.Stream(element.SliceUniverse(universe[:100])), Config{Filters: []*bip37.Filter{empty}})
		if r.AnyCounts[0] != 100 || len(r.Hits) != 100 {
			t.Errorf("empty filter matched %d", r.AnyCounts[0])
		}
	})
}

func TestScanErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	loose := testkit.MustFilter(t, 1, 0.5, 0, bip37.UpdateNone, testkit.RandomCandidates(rng, 1, 1)...)
	_, err := Run(context.Background(), element.Stream(Synthetic{Seed: 1, Count: 100000}), Config{Filters: []*bip37.Filter{loose}, MaxHits: 10})
	if !errors.Is(err, ErrTooManyHits) {
		t.Errorf("err = %v, want ErrTooManyHits", err)
	}
	boom := errors.New("disk on fire")
	_, err = Run(context.Background(), &failingStream{n: 5, err: boom}, Config{Filters: []*bip37.Filter{loose}})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the stream's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, element.Stream(Synthetic{Seed: 1, Count: 1 << 20}), Config{Filters: []*bip37.Filter{loose}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
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
			if math.Abs(got-mean) > sigmas*sd {
				t.Errorf("measured %v false positives, expected %.1f +- %.1f (5 sigma %.1f)", got, mean, sd, sigmas*sd)
			}
			// The design-time formula f(m) agrees with the exact rate.
			if theory := f.FPRate(float64(tc.elements)); math.Abs(theory-p) > 0.1*p {
				t.Errorf("f(m) = %g vs exact %g", theory, p)
			}
		})
	}
}
