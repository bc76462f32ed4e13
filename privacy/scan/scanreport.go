package scan

import (
	"context"
	"fmt"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/cputime"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/btcutil/bloom"
)

// A synthetic scan report: how fast the analyzer streams synthetic
// candidates through filters, each filter's matches beside the count its
// exact false-positive rate predicts, and, in the same run, the rate of
// btcutil/bloom's matcher on the same candidates (`bloomwatch privacy
// scan`).

// baselineRounds is the number of rounds a baseline alternates its three
// matchers over, each round in a different order, so that a change in the
// machine's load during the run falls on all three.
const baselineRounds = 3

// SyntheticConfig says what RunSynthetic measures.
type SyntheticConfig struct {
	Universe Synthetic
	// Filters are scanned together, read-only.
	Filters []*bip37.Filter
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Baseline, when positive, is the number of candidates (at most
	// Universe.Count) timed on one core after the scan, through Filters[0]
	// by the scan, by bip37.Filter.Matches one candidate at a time and by
	// btcutil/bloom's Matches.
	Baseline uint64
}

// SyntheticReport is what RunSynthetic measured.
type SyntheticReport struct {
	Candidates uint64 `json:"candidates"`
	Workers    int    `json:"workers"`
	// Seconds is the scan's wall time; CPUSeconds the process's CPU time
	// (user and system) during it, 0 where the OS does not say.
	Seconds       float64      `json:"seconds"`
	CPUSeconds    float64      `json:"cpu_seconds"`
	PerSec        float64      `json:"per_sec"`
	PerSecPerCore float64      `json:"per_sec_per_core"`
	Filters       []FilterLine `json:"filters"`
	Baseline      *Baseline    `json:"baseline,omitempty"`
}

// FilterLine is one filter's line of a synthetic scan report.
type FilterLine struct {
	Bytes     int     `json:"bytes"`
	HashFuncs uint32  `json:"hash_funcs"`
	FPRate    float64 `json:"fp_rate"`
	Matched   uint64  `json:"matched"`
	// Expected and Sigma are the binomial mean and standard deviation of
	// the matches at the filter's exact rate (X/n)^k, per form.
	Expected float64 `json:"expected"`
	Sigma    float64 `json:"sigma"`
}

// Baseline compares, on one core and the same candidates, the scan
// with bip37's per-candidate matcher and btcutil/bloom's.
type Baseline struct {
	Candidates uint64 `json:"candidates"`
	// ScanPerSec is the scan's rate with one worker; Bip37PerSec the rate
	// of generating each candidate and calling bip37.Filter.Matches;
	// BtcutilPerSec the same with btcutil/bloom's Filter.Matches.
	ScanPerSec    float64 `json:"scan_per_sec"`
	Bip37PerSec   float64 `json:"bip37_per_sec"`
	BtcutilPerSec float64 `json:"btcutil_per_sec"`
	// ScanRatio is ScanPerSec/BtcutilPerSec; Ratio Bip37PerSec/BtcutilPerSec.
	ScanRatio float64 `json:"scan_ratio"`
	Ratio     float64 `json:"ratio"`
	// Agree reports that the three matched the same number of candidates.
	Agree bool `json:"agree"`
}

// RunSynthetic scans cfg.Universe through cfg.Filters on every worker,
// times it and, with cfg.Baseline, compares matchers on one core.
func RunSynthetic(ctx context.Context, cfg SyntheticConfig) (*SyntheticReport, error) {
	if len(cfg.Filters) == 0 {
		return nil, fmt.Errorf("synthetic scan: no filter")
	}
	workers := workerCount(cfg.Workers)
	cpu0 := cputime.Process()
	start := time.Now()
	res, err := Run(ctx, element.Stream(cfg.Universe), Config{Filters: cfg.Filters, Workers: workers})
	if err != nil {
		return nil, fmt.Errorf("synthetic scan: %w", err)
	}
	elapsed := time.Since(start).Seconds()
	rep := &SyntheticReport{
		Candidates: res.Scanned, Workers: workers, Seconds: elapsed, CPUSeconds: (cputime.Process() - cpu0).Seconds(),
		PerSec: float64(res.Scanned) / elapsed, PerSecPerCore: float64(res.Scanned) / elapsed / float64(workers),
	}
	forms := 1
	if cfg.Universe.PubKeys {
		forms = 2
	}
	for j, f := range cfg.Filters {
		rate := stats.AnyFormRate(f.CurrentFPRate(), forms)
		rep.Filters = append(rep.Filters, FilterLine{
			Bytes: f.Size(), HashFuncs: f.HashFuncs(), FPRate: f.CurrentFPRate(), Matched: res.AnyCounts[j],
			Expected: rate * float64(res.Scanned), Sigma: stats.BinomialSigma(float64(res.Scanned), rate),
		})
	}
	if n := min(cfg.Baseline, cfg.Universe.Count); n > 0 {
		one := Synthetic{Seed: cfg.Universe.Seed, Count: n}
		if rep.Baseline, err = compareMatchers(ctx, one, cfg.Filters[0]); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// compareMatchers times u's candidates through f on one core with the
// scan, bip37's Matches and btcutil/bloom's Matches, alternating them over
// baselineRounds slices of u.
func compareMatchers(ctx context.Context, u Synthetic, f *bip37.Filter) (*Baseline, error) {
	bf := bloom.LoadFilter(f.MsgFilterLoad())
	var c element.Candidate
	perCandidate := func(match func([]byte) bool) func(lo, hi uint64) (uint64, error) {
		return func(lo, hi uint64) (uint64, error) {
			var hits uint64
			for i := lo; i < hi; i++ {
				u.Fill(i, &c)
				if match(c.Forms[0]) {
					hits++
				}
			}
			return hits, nil
		}
	}
	matchers := [3]func(lo, hi uint64) (uint64, error){
		func(lo, hi uint64) (uint64, error) {
			r, err := Run(ctx, element.StreamRange(u, lo, hi), Config{Filters: []*bip37.Filter{f}, Workers: 1})
			if err != nil {
				return 0, fmt.Errorf("synthetic scan baseline: %w", err)
			}
			return r.AnyCounts[0], nil
		},
		perCandidate(f.Matches),
		perCandidate(bf.Matches),
	}
	var (
		elapsed [3]time.Duration
		hits    [3]uint64
	)
	for r := range uint64(baselineRounds) {
		lo, hi := u.Count*r/baselineRounds, u.Count*(r+1)/baselineRounds
		for k := range matchers {
			m := (k + int(r)) % len(matchers)
			start := time.Now()
			h, err := matchers[m](lo, hi)
			if err != nil {
				return nil, err
			}
			elapsed[m] += time.Since(start)
			hits[m] += h
		}
	}
	rate := func(m int) float64 { return float64(u.Count) / elapsed[m].Seconds() }
	b := &Baseline{Candidates: u.Count, ScanPerSec: rate(0), Bip37PerSec: rate(1), BtcutilPerSec: rate(2),
		Agree: hits[0] == hits[1] && hits[1] == hits[2]}
	b.ScanRatio, b.Ratio = b.ScanPerSec/b.BtcutilPerSec, b.Bip37PerSec/b.BtcutilPerSec
	return b, nil
}

// TranscriptFilters returns the filters an adversary holds at the end of a
// transcript: every generation's last state (a filterload and the
// filteradds after it), each distinct state once, in order.
func TranscriptFilters(recs []transcript.Record) ([]*bip37.Filter, error) {
	tl, err := replay.Replay(recs)
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	var out []*bip37.Filter
	for _, g := range tl.Generations {
		if !seen[g.Latest] {
			seen[g.Latest] = true
			out = append(out, tl.States[g.Latest])
		}
	}
	return out, nil
}
