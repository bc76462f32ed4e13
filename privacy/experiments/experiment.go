package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
)

// Experiments reproduce published results side by side with the formulas
// and with measurements on real filters and synthetic universes. Each is
// a pure function of its Config: the same seed gives the same numbers.

// Config holds the knobs every experiment understands; a zero field takes
// the experiment's default.
type Config struct {
	Seed uint64
	// Workers bounds the scan goroutines (0: GOMAXPROCS).
	Workers int
	// Universe is the number of synthetic candidates |A|.
	Universe uint64
	// Trials is the number of independent wallets (fresh keys and
	// tweaks) per Monte Carlo point.
	Trials int
	// Blocks sizes the synthetic chain of the chain-based experiments.
	Blocks int
	// Keys is the wallet size N: the keys in the first filter of
	// restart-intersection, or the one N single-filter measures (0: the
	// experiment's own sizes).
	Keys int
	// Filters is the number of filters r restart-intersection sends (0:
	// its default, 5).
	Filters int
	// KeyStep is the number of keys each further filter of
	// restart-intersection holds beyond the one before it (Gervais et
	// al.'s setting: Keys 3070, KeyStep 50, Filters 5).
	KeyStep int
	// FPRate, when set, is the one target rate restart-intersection
	// sizes its filters for (0: bitcoinj's 0.0005, 0.01 and 0.05), or
	// the rate of the experiments that take one.
	FPRate float64
	// Wallets is the number of wallets of each kind in a population.
	Wallets int
	// Peers is the number of peers a wallet connects to.
	Peers int
	// HashFuncs, when set, is the hash count of the filters of the
	// experiments that take one (at most bip37.MaxHashFuncs).
	HashFuncs int
	// Progress, when set, is told of a long run's advance (see
	// ProgressFunc). It is called synchronously from the run.
	Progress ProgressFunc
	// Sessions, when set, is given every client session a population
	// experiment simulated, with its transcript, in order.
	Sessions func(*Session)
}

// ProgressFunc is told that a run's stage has done done of total units
// (wallets simulated, candidates scanned). Stages come in order; a stage
// may report its total before any unit is done.
type ProgressFunc func(stage string, done, total int)

// progress reports to cfg.Progress when set.
func (cfg Config) progress(stage string, done, total int) {
	if cfg.Progress != nil {
		cfg.Progress(stage, done, total)
	}
}

// Comparison is one quantity: measured, predicted by the formula, and
// published.
type Comparison struct {
	Quantity string  `json:"quantity"`
	Measured float64 `json:"measured"`
	// Formula is the model's prediction, when there is one.
	Formula *float64 `json:"formula,omitempty"`
	// Literature is the published figure, when there is one.
	Literature *float64 `json:"literature,omitempty"`
	// RelDiff is (measured - literature) / literature, or against the
	// formula when there is no published figure; absent when there is
	// neither or the reference is 0.
	RelDiff *float64 `json:"rel_diff,omitempty"`
	// Interval is a 95 % interval for a Monte Carlo measurement, when
	// one applies.
	Interval *[2]float64 `json:"interval,omitempty"`
	Source   string      `json:"source,omitempty"`
	Note     string      `json:"note,omitempty"`
	// Verdict says how the measurement stands against its reference:
	// whether the formula's (or the published) figure lies inside the
	// measurement's 95 % interval, or the relative difference when
	// there is no interval and both figures are far from 0. A relative
	// difference is never given for a measured 0 or a reference of 0.
	Verdict string `json:"verdict,omitempty"`
	// FormOnly marks a published figure from another setting (other
	// wallets, another chain, another scale): set beside the measurement
	// to compare in form, not to be reproduced.
	FormOnly bool `json:"form_only,omitempty"`
}

// Verdicts of Comparison.Verdict.
const (
	VerdictInside = "inside the 95 % interval"
	VerdictAbove  = "above the 95 % interval"
	VerdictBelow  = "below the 95 % interval"
	// VerdictFormOnly is the verdict of a published figure from another
	// setting.
	VerdictFormOnly = "another setting: compare in form"
	// verdictTiny is a relative difference's smallest reference: under
	// it, figures are compared by their interval or not at all.
	verdictTiny = 1e-9
)

// verdict fills c.Verdict from its figures.
func (c *Comparison) verdict() {
	ref := c.Formula
	who := "formula"
	if c.Literature != nil {
		ref, who = c.Literature, "published"
	}
	switch {
	case c.Verdict != "":
		// set by the experiment
	case ref == nil:
	case c.FormOnly && c.Literature != nil:
		c.Verdict = VerdictFormOnly
	case c.Interval != nil && !math.IsNaN(c.Interval[0]):
		switch r := *ref; {
		case r < c.Interval[0]*(1-1e-12):
			c.Verdict = who + " " + VerdictBelow
		case r > c.Interval[1]*(1+1e-12):
			c.Verdict = who + " " + VerdictAbove
		default:
			c.Verdict = who + " " + VerdictInside
		}
	case c.RelDiff != nil:
		c.Verdict = fmt.Sprintf("%+.1f%% vs %s", 100**c.RelDiff, who)
	}
}

// Param is one setting an experiment ran with.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Result is an experiment's output. Its charts use privacy's chart model,
// which package privacy/plot draws.
type Result struct {
	Name   string          `json:"name"`
	Title  string          `json:"title"`
	Params []Param         `json:"params"`
	Rows   []Comparison    `json:"rows"`
	Charts []privacy.Chart `json:"charts"`
}

// experimentFunc runs one experiment.
type experimentFunc func(ctx context.Context, cfg Config) (*Result, error)

// Info names an experiment.
type Info struct {
	Name    string
	Summary string
	run     experimentFunc
}

// registry lists the experiments, in the order List returns them.
var registry = []Info{
	{"bitcoinj-sizing", "bitcoinj filter sizing (N=271 keys, p=0.0005, M=642) and the both-forms test", runSizing},
	{"single-filter", "anonymity of one bitcoinj filter vs wallet size N=1..100 (--keys: one N)", runSingleFilter},
	{"restart-intersection", "intersection of r filters of one wallet with fresh tweaks (--keys, --key-step, --filters)", runRestartIntersection},
	{"saturation", "UPDATE_ALL replay over a synthetic chain, tight vs headroom", runSaturation},
	{"mitigations", "collapse curves of each mitigation beside the unmitigated client", runMitigations},
	{"linking", "the crawler's wrong merges vs target rate: Nick's formula, the term it leaves out, measured", runLinking},
	{"noise", "RAPPOR-style persisted and fresh decoys vs a looser rate of equal bandwidth and other mitigations", runNoise},
	{"requests", "what the getdata pattern leaks (birthday, re-fetched blocks) and its mitigations", runRequests},
	{"peers", "several peers: same filter to all vs a tweak per peer vs sharded elements, c colluding (--peers, --keys)", runPeers},
	{"tweak-policy", "one persisted tweak vs a tweak per peer behind a proxy: linking and intersection (--peers, --keys)", runTweakPolicy},
	{PopulationName, "wallets of three kinds on one chain: crawler linking (Nick's wrong merges) and multi-input clustering (--wallets)", runPopulation},
}

// PopulationName is the population experiment's name.
const PopulationName = "population"

// List returns the experiments Run knows.
func List() []Info { return slices.Clone(registry) }

// Run runs the named experiment. It returns Find's error, wrapping
// ErrUnknown, for a name not in List.
func Run(ctx context.Context, name string, cfg Config) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	e, err := Find(name)
	if err != nil {
		return nil, err
	}
	r, err := e.run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for i := range r.Rows {
		r.Rows[i].verdict()
	}
	return r, nil
}

// literature returns a pointer to a published figure.
func literature(v float64) *float64 { return &v }

// compare builds a comparison row, taking the relative difference against
// the literature when given, else against the formula.
func compare(quantity string, measured, formula float64, lit *float64, source string) Comparison {
	c := measuredOnly(quantity, measured, lit, source)
	c.Formula = &formula
	if lit == nil {
		c.RelDiff = finiteRelDiff(measured, formula)
	}
	return c
}

// measuredOnly builds a row with no formula.
func measuredOnly(quantity string, measured float64, lit *float64, source string) Comparison {
	c := Comparison{Quantity: quantity, Measured: measured, Literature: lit, Source: source}
	if lit != nil {
		c.RelDiff = finiteRelDiff(measured, *lit)
	}
	return c
}

// finiteRelDiff returns RelDiff when it means something: both figures
// finite and away from 0 (a measured 0 against an expected 1e-22 is no
// relative error of -100 %: the interval says whether they agree).
func finiteRelDiff(measured, reference float64) *float64 {
	if math.Abs(measured) < verdictTiny || math.Abs(reference) < verdictTiny {
		return nil
	}
	d := RelDiff(measured, reference)
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return nil
	}
	return &d
}

// check refuses settings no experiment can run: negative sizes, a rate
// outside [0, 1], more hash functions than BIP37 allows.
func (cfg Config) check() error {
	switch {
	case cfg.Trials < 0 || cfg.Blocks < 0 || cfg.Workers < 0 || cfg.Keys < 0 || cfg.Filters < 0 || cfg.KeyStep < 0 ||
		cfg.Wallets < 0 || cfg.Peers < 0 || cfg.HashFuncs < 0:
		return fmt.Errorf("%w: negative size in %+v", ErrBadConfig, cfg.sizes())
	case cfg.FPRate < 0 || cfg.FPRate > 1 || math.IsNaN(cfg.FPRate):
		return fmt.Errorf("%w: false-positive rate %v outside [0, 1]", ErrBadConfig, cfg.FPRate)
	case cfg.HashFuncs > bip37.MaxHashFuncs:
		return fmt.Errorf("%w: %d hash functions, BIP37 allows at most %d", ErrBadConfig, cfg.HashFuncs, bip37.MaxHashFuncs)
	}
	return nil
}

// sizes lists the size settings, for error messages.
func (cfg Config) sizes() map[string]int {
	return map[string]int{"trials": cfg.Trials, "blocks": cfg.Blocks, "workers": cfg.Workers, "keys": cfg.Keys,
		"filters": cfg.Filters, "key_step": cfg.KeyStep, "wallets": cfg.Wallets, "peers": cfg.Peers, "hash_funcs": cfg.HashFuncs}
}

// withInterval attaches a 95 % interval.
func (c Comparison) withInterval(lo, hi float64) Comparison {
	c.Interval = &[2]float64{lo, hi}
	return c
}

// formOnly marks the published figure as another setting's.
func (c Comparison) formOnly() Comparison {
	c.FormOnly = true
	return c
}

// formOnlyIf marks a row's published figure, when it has one, as
// another setting's.
func formOnlyIf(c Comparison) Comparison {
	if c.Literature != nil {
		c.FormOnly = true
	}
	return c
}

// withNote attaches a note.
func (c Comparison) withNote(note string) Comparison {
	c.Note = note
	return c
}

// orDefault returns v unless it is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// finiteOr returns v, or alt when v is infinite or NaN.
func finiteOr(v, alt float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return alt
	}
	return v
}

// param formats a setting.
func param(name string, v any) Param { return Param{Name: name, Value: fmt.Sprint(v)} }

// Sources of the figures in the published column, and the labels of
// figures that are not published. A figure this project measured is
// never a published one: it is labelled "measured here" and kept out of
// Comparison.Literature.
const (
	srcGervais    = "Gervais et al., ACSAC 2014"
	srcNick       = "Nick, ETH thesis 2015"
	srcNickBlog   = "Nick, blog \"Privacy in BitcoinJ\", 2015"
	srcFormula    = "formula"
	srcBIP37      = "computed from BIP37's sizing formulas (not a published figure)"
	srcHereSimnet = "measured here earlier (bloomwatch on simnet, GUIDE section 4)"
)

// Unit conversions.
const (
	// bitsPerByte converts filter sizes to bits.
	bitsPerByte = 8
	// floatBits is the precision strconv formats float64 with.
	floatBits = 64
)
