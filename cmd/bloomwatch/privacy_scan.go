package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/spf13/cobra"
)

// privacyScanOptions holds the flags of `privacy scan`.
type privacyScanOptions struct {
	synthetic  uint64
	filter     string
	transcript string
	seed       uint64
	pubKeys    bool
	workers    int
	baseline   uint64
	asJSON     bool
}

// newPrivacyScanCmd returns `privacy scan`, which streams synthetic
// candidates through filters and times it.
func newPrivacyScanCmd() *cobra.Command {
	o := &privacyScanOptions{}
	cmd := &cobra.Command{
		Use:   "scan --synthetic N (--filter HEX | --transcript F) [--baseline M]",
		Short: "Stream N synthetic candidates through filters and report the time, rate and matches",
		Long: "Stream N synthetic candidates through one filter (--filter, a filterload payload in hex) or\n" +
			"through the last state of every filterload of a transcript, on every core, and print the\n" +
			"elapsed time, the rate, and each filter's matches beside the expected count. --baseline M\n" +
			"also times the first M candidates on one core through this project's matcher and through\n" +
			"btcutil/bloom's, in the same run, and prints the ratio.",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.Uint64Var(&o.synthetic, "synthetic", 0, "number of synthetic candidates")
	f.StringVar(&o.filter, "filter", "", "serialized filter (filterload payload) in hex")
	f.StringVar(&o.transcript, "transcript", "", "transcript file: scan every filterload's last state")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic candidates")
	f.BoolVar(&o.pubKeys, "pubkeys", false, "candidates carry a public-key form too")
	f.IntVar(&o.workers, "workers", 0, "scan goroutines (default: all CPUs)")
	f.Uint64Var(&o.baseline, "baseline", 0, "also time this many candidates on one core, bip37 vs btcutil")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// scanFilterJSON is one filter's line of `privacy scan --json`.
type scanFilterJSON struct {
	Bytes     int     `json:"bytes"`
	HashFuncs uint32  `json:"hash_funcs"`
	FPRate    float64 `json:"fp_rate"`
	Matched   uint64  `json:"matched"`
	Expected  float64 `json:"expected"`
	Sigma     float64 `json:"sigma"`
}

// scanBaselineJSON is the single-core comparison.
type scanBaselineJSON struct {
	Candidates    uint64  `json:"candidates"`
	Bip37PerSec   float64 `json:"bip37_per_sec"`
	BtcutilPerSec float64 `json:"btcutil_per_sec"`
	Ratio         float64 `json:"ratio"`
	// Agree reports that both matchers matched the same candidates.
	Agree bool `json:"agree"`
}

// scanJSON is the output of `privacy scan --json`.
type scanJSON struct {
	Candidates    uint64            `json:"candidates"`
	Workers       int               `json:"workers"`
	Seconds       float64           `json:"seconds"`
	PerSec        float64           `json:"per_sec"`
	PerSecPerCore float64           `json:"per_sec_per_core"`
	Filters       []scanFilterJSON  `json:"filters"`
	Baseline      *scanBaselineJSON `json:"baseline,omitempty"`
}

// run implements `privacy scan`.
func (o *privacyScanOptions) run(cmd *cobra.Command, _ []string) error {
	if o.synthetic == 0 {
		return usagef("privacy scan: --synthetic must be at least 1")
	}
	if (o.filter == "") == (o.transcript == "") {
		return usagef("privacy scan: give exactly one of --filter or --transcript")
	}
	if o.workers < 0 {
		return usagef("privacy scan: --workers must not be negative")
	}
	filters, err := scanFilters(o.filter, o.transcript)
	if err != nil {
		return err
	}
	workers := o.workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	u := privacy.Synthetic{Seed: o.seed, Count: o.synthetic, PubKeys: o.pubKeys}
	start := time.Now()
	res, err := privacy.Scan(cmd.Context(), privacy.Stream(u), privacy.ScanConfig{Filters: filters, Workers: workers})
	if err != nil {
		return fmt.Errorf("privacy scan: %w", err)
	}
	elapsed := time.Since(start).Seconds()
	out := scanJSON{
		Candidates: res.Scanned, Workers: workers, Seconds: elapsed,
		PerSec: float64(res.Scanned) / elapsed, PerSecPerCore: float64(res.Scanned) / elapsed / float64(workers),
	}
	for j, f := range filters {
		rate := privacy.AnyFormRate(f.CurrentFPRate(), formsOf(o.pubKeys))
		out.Filters = append(out.Filters, scanFilterJSON{
			Bytes: f.Size(), HashFuncs: f.HashFuncs(), FPRate: f.CurrentFPRate(), Matched: res.AnyCounts[j],
			Expected: rate * float64(res.Scanned), Sigma: privacy.BinomialSigma(float64(res.Scanned), rate),
		})
	}
	if o.baseline > 0 {
		out.Baseline = scanBaseline(u, filters[0], min(o.baseline, o.synthetic))
	}
	if o.asJSON {
		return writeJSON(cmd, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scanned %d synthetic candidates through %d filter(s) in %.2f s: %.1f M/s (%.1f M/s per core, %d workers)\n",
		out.Candidates, len(filters), out.Seconds, out.PerSec/1e6, out.PerSecPerCore/1e6, workers)
	for j, f := range out.Filters {
		fmt.Fprintf(&b, "filter %d: %d bytes, k=%d, fp rate %s: %d matched, expected %.1f +- %.1f\n",
			j, f.Bytes, f.HashFuncs, num(f.FPRate), f.Matched, f.Expected, f.Sigma)
	}
	if bl := out.Baseline; bl != nil {
		fmt.Fprintf(&b, "baseline, one core, first %d candidates through filter 0: bip37 %.1f M/s, btcutil/bloom %.1f M/s, ratio %.2f (same matches: %v)\n",
			bl.Candidates, bl.Bip37PerSec/1e6, bl.BtcutilPerSec/1e6, bl.Ratio, bl.Agree)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}

// formsOf is the number of forms of a synthetic candidate.
func formsOf(pubKeys bool) int {
	if pubKeys {
		return 2
	}
	return 1
}

// scanFilters returns the filter of --filter, or every generation's last
// state of --transcript.
func scanFilters(filterHex, transcript string) ([]*bip37.Filter, error) {
	if filterHex != "" {
		f, err := decodeFilter(filterHex)
		if err != nil {
			return nil, usagef("privacy scan: --filter: %w", err)
		}
		return []*bip37.Filter{f}, nil
	}
	recs, err := readTranscriptFile(transcript)
	if err != nil {
		return nil, err
	}
	tl, err := privacy.Replay(recs)
	if err != nil {
		return nil, fmt.Errorf("privacy scan: %w", err)
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

// scanBaseline times the first n candidates on one core through bip37's
// matcher and btcutil/bloom's, generating the same candidates for both.
func scanBaseline(u privacy.Synthetic, f *bip37.Filter, n uint64) *scanBaselineJSON {
	bf := bloom.LoadFilter(f.MsgFilterLoad())
	var c privacy.Candidate
	timeIt := func(match func([]byte) bool) (float64, int) {
		hits := 0
		start := time.Now()
		for i := range n {
			u.Fill(i, &c)
			if match(c.Forms[0]) {
				hits++
			}
		}
		return float64(n) / time.Since(start).Seconds(), hits
	}
	ours, ourHits := timeIt(f.Matches)
	theirs, theirHits := timeIt(bf.Matches)
	return &scanBaselineJSON{
		Candidates: n, Bip37PerSec: ours, BtcutilPerSec: theirs, Ratio: ours / theirs, Agree: ourHits == theirHits,
	}
}
