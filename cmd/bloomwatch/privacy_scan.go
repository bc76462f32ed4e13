package main

import (
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
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
type scanJSON = scan.SyntheticReport

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
	rep, err := scan.RunSynthetic(cmd.Context(), scan.SyntheticConfig{
		Universe: scan.Synthetic{Seed: o.seed, Count: o.synthetic, PubKeys: o.pubKeys},
		Filters:  filters, Workers: o.workers, Baseline: o.baseline,
	})
	if err != nil {
		return fmt.Errorf("privacy scan: %w", err)
	}
	if o.asJSON {
		return writeJSON(cmd, rep)
	}
	return rep.WriteText(cmd.OutOrStdout())
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
	filters, err := scan.TranscriptFilters(recs)
	if err != nil {
		return nil, fmt.Errorf("privacy scan: %w", err)
	}
	return filters, nil
}
