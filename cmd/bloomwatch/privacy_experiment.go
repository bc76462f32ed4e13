package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/spf13/cobra"
)

// privacyExperimentOptions holds the flags of `privacy experiment`.
type privacyExperimentOptions struct {
	seed     uint64
	universe uint64
	trials   int
	blocks   int
	workers  int
	keys     int
	filters  int
	keyStep  int
	fpRate   float64
	asJSON   bool
	png      string
}

// newPrivacyExperimentCmd returns `privacy experiment`, which runs one
// experiment.
func newPrivacyExperimentCmd() *cobra.Command {
	o := &privacyExperimentOptions{}
	cmd := &cobra.Command{
		Use:   "experiment NAME",
		Short: "Reproduce a published result beside the formulas and a measurement",
		Long: "Run an experiment and print each result beside the formula's prediction and the published\n" +
			"figure, with the relative difference (measured vs published, or vs the formula when nothing\n" +
			"is published). Results are deterministic given --seed. A published setting runs with its\n" +
			"parameters, e.g. Gervais et al.'s five filters of N = 3070..3270 with fresh tweaks:\n" +
			"  bloomwatch privacy experiment restart-intersection --keys 3070 --key-step 50 --filters 5 --fp-rate 0.0005 --universe 33000000\n" +
			"Experiments:\n" + experimentList(),
		Args: cobra.ExactArgs(1),
		RunE: o.run,
	}
	f := cmd.Flags()
	f.Uint64Var(&o.seed, "seed", 1, "seed of every random choice")
	f.Uint64Var(&o.universe, "universe", 0, "synthetic candidates |A| (default: the experiment's)")
	f.IntVar(&o.trials, "trials", 0, "independent wallets per Monte Carlo point (default: the experiment's)")
	f.IntVar(&o.blocks, "blocks", 0, "synthetic chain length (default: the experiment's)")
	f.IntVar(&o.workers, "workers", 0, "scan goroutines (default: all CPUs)")
	f.IntVar(&o.keys, "keys", 0, "wallet size N: keys in the first filter (restart-intersection), or the one N (single-filter)")
	f.IntVar(&o.filters, "filters", 0, "filters of one wallet r (restart-intersection; default 5)")
	f.IntVar(&o.keyStep, "key-step", 0, "keys each further filter holds beyond the one before (restart-intersection)")
	f.Float64Var(&o.fpRate, "fp-rate", 0, "the one target rate of restart-intersection (default: 0.0005, 0.01 and 0.05)")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	f.StringVar(&o.png, "png", "", "draw the experiment's charts to this PNG file")
	return cmd
}

// experimentList names the experiments, one per line.
func experimentList() string {
	var b strings.Builder
	for _, e := range experiments.List() {
		fmt.Fprintf(&b, "  %-22s %s\n", e.Name, e.Summary)
	}
	return b.String()
}

// run implements `privacy experiment`.
func (o *privacyExperimentOptions) run(cmd *cobra.Command, args []string) error {
	if o.trials < 0 || o.blocks < 0 || o.workers < 0 || o.keys < 0 || o.filters < 0 || o.keyStep < 0 {
		return usagef("privacy experiment: --trials, --blocks, --workers, --keys, --filters and --key-step must not be negative")
	}
	if cmd.Flags().Changed("fp-rate") && !(o.fpRate > 0 && o.fpRate < 1) {
		return usagef("privacy experiment: --fp-rate must be in (0, 1)")
	}
	cfg := experiments.Config{Seed: o.seed, Universe: o.universe, Trials: o.trials, Blocks: o.blocks, Workers: o.workers,
		Keys: o.keys, Filters: o.filters, KeyStep: o.keyStep, FPRate: o.fpRate}
	start := time.Now()
	res, err := experiments.Run(cmd.Context(), args[0], cfg)
	if errors.Is(err, experiments.ErrUnknown) {
		var names []string
		for _, e := range experiments.List() {
			names = append(names, e.Name)
		}
		return usagef("privacy experiment: %w (want one of %s)", err, strings.Join(names, ", "))
	}
	if err != nil {
		return fmt.Errorf("privacy experiment %s: %w", args[0], err)
	}
	elapsed := time.Since(start)
	if o.png != "" {
		if err := writeChartsPNG(o.png, res.Charts); err != nil {
			return err
		}
	}
	if o.asJSON {
		return writeJSON(cmd, res)
	}
	if err := printExperiment(cmd.OutOrStdout(), res); err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "\nelapsed %s\n", elapsed.Round(time.Millisecond))
	return err
}
