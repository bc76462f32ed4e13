package main

import (
	"fmt"
	"strings"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/internal/table"
	"github.com/bloomwatch/bloomwatch/privacy"
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
			"elapsed and CPU time, the rate, and each filter's matches beside the expected count.\n" +
			"--baseline M also times the first M candidates on one core through the scan, through\n" +
			"bip37's Matches one candidate at a time and through btcutil/bloom's, alternated in the\n" +
			"same run, and prints the rates and what btcutil/bloom would take for the N candidates.",
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
	f.Uint64Var(&o.baseline, "baseline", 0, "also time this many candidates on one core: scan, bip37 and btcutil/bloom")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// scanJSON is the output of `privacy scan --json`.
type scanJSON = privacy.SyntheticScanReport

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
	rep, err := privacy.RunSyntheticScan(cmd.Context(), privacy.SyntheticScanConfig{
		Universe: privacy.Synthetic{Seed: o.seed, Count: o.synthetic, PubKeys: o.pubKeys},
		Filters:  filters, Workers: o.workers, Baseline: o.baseline,
	})
	if err != nil {
		return fmt.Errorf("privacy scan: %w", err)
	}
	if o.asJSON {
		return writeJSON(cmd, rep)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scanned %d synthetic candidates through %d filter(s) in %.2f s (%.2f s CPU): %.1f M/s (%.1f M/s per core, %d workers)\n",
		rep.Candidates, len(filters), rep.Seconds, rep.CPUSeconds, rep.PerSec/1e6, rep.PerSecPerCore/1e6, rep.Workers)
	for j, f := range rep.Filters {
		fmt.Fprintf(&b, "filter %d: %d bytes, k=%d, fp rate %s: %d matched, expected %.1f +- %.1f\n",
			j, f.Bytes, f.HashFuncs, table.Num(f.FPRate), f.Matched, f.Expected, f.Sigma)
	}
	if bl := rep.Baseline; bl != nil {
		fmt.Fprintf(&b, "baseline, one core, first %d candidates through filter 0, alternated: scan %.1f M/s, bip37 Matches %.1f M/s, btcutil/bloom %.1f M/s; scan/btcutil ratio %.2f, Matches/btcutil ratio %.2f (same matches: %v)\n",
			bl.Candidates, bl.ScanPerSec/1e6, bl.Bip37PerSec/1e6, bl.BtcutilPerSec/1e6, bl.ScanRatio, bl.Ratio, bl.Agree)
		fmt.Fprintf(&b, "btcutil/bloom at its rate on %d cores: %.2f s for these %d candidates (scan: %.2f s)\n",
			rep.Workers, float64(rep.Candidates)/bl.BtcutilPerSec/float64(rep.Workers), rep.Candidates, rep.Seconds)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}

// scanFilters returns the filter of --filter, or every generation's last
// state of --transcript.
func scanFilters(filterHex, transcriptPath string) ([]*bip37.Filter, error) {
	if filterHex != "" {
		f, err := decodeFilter(filterHex)
		if err != nil {
			return nil, usagef("privacy scan: --filter: %w", err)
		}
		return []*bip37.Filter{f}, nil
	}
	recs, err := readTranscriptFile(transcriptPath)
	if err != nil {
		return nil, err
	}
	filters, err := privacy.TranscriptFilters(recs)
	if err != nil {
		return nil, fmt.Errorf("privacy scan: %w", err)
	}
	return filters, nil
}
