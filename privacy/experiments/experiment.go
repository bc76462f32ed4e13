package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"

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
	// sizes its filters for (0: bitcoinj's 0.0005, 0.01 and 0.05).
	FPRate float64
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
}

// List returns the experiments Run knows.
func List() []Info { return slices.Clone(registry) }

// Run runs the named experiment. It returns an error wrapping ErrUnknown
// for a name not in List.
func Run(ctx context.Context, name string, cfg Config) (*Result, error) {
	for _, e := range registry {
		if e.Name == name {
			return e.run(ctx, cfg)
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknown, name)
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

// finiteRelDiff returns RelDiff when it is finite, else nil.
func finiteRelDiff(measured, reference float64) *float64 {
	d := RelDiff(measured, reference)
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return nil
	}
	return &d
}

// withInterval attaches a 95 % interval.
func (c Comparison) withInterval(lo, hi float64) Comparison {
	c.Interval = &[2]float64{lo, hi}
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
