package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/internal/progress"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/bloomwatch/bloomwatch/privacy/plot"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// privacyExperimentOptions holds the flags of `privacy experiment`.
type privacyExperimentOptions struct {
	seed        uint64
	universe    uint64
	trials      int
	blocks      int
	workers     int
	keys        int
	filters     int
	keyStep     int
	fpRate      float64
	wallets     int
	peers       int
	hashFuncs   int
	records     int
	asJSON      bool
	asCSV       bool
	png         string
	svg         string
	transcripts string
	progress    string
}

// newPrivacyExperimentCmd returns `privacy experiment`, which runs one
// experiment.
func newPrivacyExperimentCmd() *cobra.Command {
	o := &privacyExperimentOptions{}
	cmd := &cobra.Command{
		Use:   "experiment NAME",
		Short: "Reproduce a published result beside the formulas and a measurement",
		Long: "Run an experiment and print each result beside the formula's prediction and the published\n" +
			"figure. Every measurement has a 95 % interval of its kind (exact binomial or Poisson for\n" +
			"independent trials or events, a cluster bootstrap over wallets for clustered ones; none for a\n" +
			"deterministic count). A verdict (measured = reference) is printed only where its test has power\n" +
			"0.8 against the alternative the row names, and the verdicts of a run are Holm-corrected. Results\n" +
			"are deterministic given --seed (printed). A published setting runs with its parameters, e.g. Gervais et al.'s\n" +
			"five filters of N = 3070..3270 with fresh tweaks:\n" +
			"  bloomwatch privacy experiment restart-intersection --keys 3070 --key-step 50 --filters 5 --fp-rate 0.0005 --universe 33000000\n" +
			"Long runs report progress on stderr: a bar on a terminal, plain lines otherwise (--progress).\n" +
			"Experiments:\n" + experimentList(),
		Args: experimentArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	f.Uint64Var(&o.seed, "seed", 1, "seed of every random choice")
	f.Uint64Var(&o.universe, "universe", 0, "synthetic candidates |A| (default: the experiment's)")
	f.IntVar(&o.trials, "trials", 0, "independent wallets per Monte Carlo point (default: the experiment's)")
	f.IntVar(&o.blocks, "blocks", 0, "synthetic chain length (default: the experiment's)")
	f.IntVar(&o.workers, "workers", 0, "scan goroutines (default: all CPUs)")
	f.IntVar(&o.keys, "keys", 0, "wallet size N: keys in the first filter (restart-intersection), or the one N (single-filter, peers, tweak-policy)")
	f.IntVar(&o.filters, "filters", 0, "filters of one wallet r (restart-intersection; default 5)")
	f.IntVar(&o.keyStep, "key-step", 0, "keys each further filter holds beyond the one before (restart-intersection)")
	f.Float64Var(&o.fpRate, "fp-rate", 0, "target false-positive rate in [0, 1] of the experiments that take one (0: their defaults)")
	f.IntVar(&o.wallets, "wallets", 0, "wallets of each kind (population, linking, requests, noise)")
	f.IntVar(&o.peers, "peers", 0, "peers a wallet connects to (peers, tweak-policy)")
	f.IntVar(&o.hashFuncs, "hash-funcs", 0, "hash functions of the filters (peers, tweak-policy, pprl; at most 50)")
	f.IntVar(&o.records, "records", 0, "records of the encoded database (pprl)")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	f.BoolVar(&o.asCSV, "csv", false, "print the rows as CSV (one line per row, the seed on each)")
	f.StringVar(&o.png, "png", "", "draw the experiment's charts to this PNG file (and its caption to NAME.caption.txt beside it)")
	f.StringVar(&o.svg, "svg", "", "draw the experiment's charts to this SVG file")
	f.StringVar(&o.transcripts, "transcripts", "", "write one transcript per wallet session, and the chain's candidates ("+experiments.UniverseFileName+"), into this directory (population)")
	f.StringVar(&o.progress, "progress", progress.Auto, "progress on stderr: auto (bar on a terminal, lines otherwise), bar, lines or none")
	return cmd
}

// experimentArgs requires one experiment name; without one the error
// line lists them (cobra's "accepts 1 arg(s)" named none).
func experimentArgs(_ *cobra.Command, args []string) error {
	if len(args) == 1 {
		return nil
	}
	names := make([]string, 0, len(experiments.List()))
	for _, e := range experiments.List() {
		names = append(names, e.Name)
	}
	what := "give one experiment NAME"
	if len(args) > 1 {
		what = fmt.Sprintf("give one experiment NAME, not %d", len(args))
	}
	return usagef("privacy experiment: %s: %s (bloomwatch privacy experiment --help says what each does)", what, strings.Join(names, ", "))
}

// experimentList names the experiments, one per line.
func experimentList() string {
	var b strings.Builder
	for _, e := range experiments.List() {
		fmt.Fprintf(&b, "  %-22s %s\n", e.Name, e.Summary)
	}
	return b.String()
}

// check refuses bad parameters with one line each: exit 2.
func (o *privacyExperimentOptions) check(cmd *cobra.Command) error {
	switch {
	case o.trials < 0 || o.blocks < 0 || o.workers < 0 || o.keys < 0 || o.filters < 0 || o.keyStep < 0 ||
		o.wallets < 0 || o.peers < 0 || o.hashFuncs < 0 || o.records < 0:
		return usagef("privacy experiment: --trials, --blocks, --workers, --keys, --filters, --key-step, --wallets, --peers, --hash-funcs and --records must not be negative")
	case math.IsNaN(o.fpRate) || o.fpRate < 0 || o.fpRate > 1:
		return usagef("privacy experiment: --fp-rate %v is outside [0, 1]", o.fpRate)
	case cmd.Flags().Changed("fp-rate") && (o.fpRate == 0 || o.fpRate == 1):
		return usagef("privacy experiment: --fp-rate %v: a filter needs a rate strictly between 0 and 1", o.fpRate)
	case o.hashFuncs > bip37.MaxHashFuncs:
		return usagef("privacy experiment: --hash-funcs %d: BIP37 allows at most %d hash functions", o.hashFuncs, bip37.MaxHashFuncs)
	}
	if o.asJSON && o.asCSV {
		return usagef("privacy experiment: --json and --csv: choose one")
	}
	if err := progress.CheckMode(o.progress); err != nil {
		return usagef("privacy experiment: --progress %w", err)
	}
	return nil
}

// run implements `privacy experiment`.
func (o *privacyExperimentOptions) run(cmd *cobra.Command, args []string) error {
	if err := o.check(cmd); err != nil {
		return err
	}
	if o.transcripts != "" && args[0] != experiments.PopulationName {
		return usagef("privacy experiment: --transcripts goes with %s", experiments.PopulationName)
	}
	if _, err := experiments.Find(args[0]); err != nil {
		return usagef("privacy experiment: %w", err)
	}
	prog := progress.New(cmd.ErrOrStderr(), o.progress)
	cfg := experiments.Config{Seed: o.seed, Universe: o.universe, Trials: o.trials, Blocks: o.blocks, Workers: o.workers,
		Keys: o.keys, Filters: o.filters, KeyStep: o.keyStep, FPRate: o.fpRate, Wallets: o.wallets, Peers: o.peers,
		HashFuncs: o.hashFuncs, Records: o.records, Progress: prog.Report}
	var sessions []*experiments.Session
	var pop *experiments.Population
	if o.transcripts != "" {
		cfg.Sessions = func(s *experiments.Session) { sessions = append(sessions, s) }
		cfg.Population = func(p *experiments.Population) { pop = p }
	}
	start := time.Now()
	res, err := experiments.Run(cmd.Context(), args[0], cfg)
	prog.Done()
	if errors.Is(err, experiments.ErrBadConfig) {
		return usagef("privacy experiment %s: %w", args[0], err)
	}
	if err != nil {
		return fmt.Errorf("privacy experiment %s: %w", args[0], err)
	}
	elapsed := time.Since(start)
	// Every figure says what it is and how to make it again.
	for i := range res.Charts {
		res.Charts[i].Notes = append(res.Charts[i].Notes, fmt.Sprintf("measured here: bloomwatch privacy experiment %s%s", args[0], o.flagsNote(cmd)))
	}
	var outs []atomicfile.Data
	for _, fig := range []struct {
		path   string
		format plot.Format
	}{{o.png, plot.PNG}, {o.svg, plot.SVG}} {
		if fig.path == "" {
			continue
		}
		data, err := plot.Render(fig.format, res.Charts)
		if err != nil {
			return fmt.Errorf("privacy experiment %s: %s: %w", args[0], fig.path, err)
		}
		outs = append(outs, atomicfile.Data{Path: fig.path, Data: data})
	}
	// The caption (each panel's notes and the command) goes beside the
	// image, not into its legend.
	for _, path := range []string{o.png, o.svg} {
		if path != "" {
			outs = append(outs, atomicfile.Data{Path: captionPath(path), Data: []byte(plot.Caption(res.Charts))})
			break
		}
	}
	if err := atomicfile.WriteAll(outs, experimentFileMode); err != nil {
		return fmt.Errorf("privacy experiment %s: %w", args[0], err)
	}
	if o.transcripts != "" {
		if err := experiments.WriteTranscripts(o.transcripts, sessions, experimentFileMode); err != nil {
			return fmt.Errorf("privacy experiment %s: --transcripts: %w", args[0], err)
		}
		if err := experiments.WriteUniverse(o.transcripts, pop, experimentFileMode); err != nil {
			return fmt.Errorf("privacy experiment %s: --transcripts: %w", args[0], err)
		}
	}
	if o.asJSON {
		return writeJSON(cmd, res)
	}
	if o.asCSV {
		return res.WriteCSV(cmd.OutOrStdout())
	}
	if err := res.WriteTable(cmd.OutOrStdout()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "\nelapsed %s\n", elapsed.Round(time.Millisecond))
	return err
}

// flagsNote lists the flags set on the command line (but the output
// flags), as a figure's note repeats them.
func (o *privacyExperimentOptions) flagsNote(cmd *cobra.Command) string {
	var b strings.Builder
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "png", "svg", "json", "transcripts", "progress", "workers":
			return
		}
		fmt.Fprintf(&b, " --%s %s", f.Name, f.Value.String())
	})
	return b.String()
}

// captionPath is the caption file beside a figure: NAME.caption.txt for
// NAME.png or NAME.svg.
func captionPath(figure string) string {
	return strings.TrimSuffix(figure, filepath.Ext(figure)) + ".caption.txt"
}
