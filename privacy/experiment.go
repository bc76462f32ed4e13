package privacy

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Experiments reproduce published results side by side with the formulas
// and with measurements on real filters and synthetic universes. Each is
// a pure function of its ExperimentConfig: the same seed gives the same
// numbers.

// ExperimentConfig holds the knobs every experiment understands; a zero
// field takes the experiment's default.
type ExperimentConfig struct {
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

// Series is one line of a chart.
type Series struct {
	Name string    `json:"name"`
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
	// Points draws markers only (a measurement), not a line.
	Points bool `json:"points,omitempty"`
}

// Chart is a figure an experiment draws.
type Chart struct {
	Title  string   `json:"title"`
	XLabel string   `json:"x_label"`
	YLabel string   `json:"y_label"`
	LogY   bool     `json:"log_y"`
	Series []Series `json:"series"`
}

// Param is one setting an experiment ran with.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ExperimentResult is an experiment's output.
type ExperimentResult struct {
	Name   string       `json:"name"`
	Title  string       `json:"title"`
	Params []Param      `json:"params"`
	Rows   []Comparison `json:"rows"`
	Charts []Chart      `json:"charts"`
}

// experimentFunc runs one experiment.
type experimentFunc func(ctx context.Context, cfg ExperimentConfig) (*ExperimentResult, error)

// ExperimentInfo names an experiment.
type ExperimentInfo struct {
	Name    string
	Summary string
	run     experimentFunc
}

// experiments is the registry, in the order Experiments lists them.
var experiments = []ExperimentInfo{
	{"bitcoinj-sizing", "bitcoinj filter sizing (N=271 keys, p=0.0005, M=642) and the both-forms test", runSizing},
	{"single-filter", "anonymity of one bitcoinj filter vs wallet size N=1..100", runSingleFilter},
	{"restart-intersection", "intersection of r=1..5 filters with fresh tweaks", runRestartIntersection},
	{"saturation", "UPDATE_ALL replay over a synthetic chain, tight vs headroom", runSaturation},
	{"mitigations", "collapse curves of each mitigation beside the unmitigated client", runMitigations},
}

// Experiments lists the experiments RunExperiment knows.
func Experiments() []ExperimentInfo { return slices.Clone(experiments) }

// RunExperiment runs the named experiment. It returns ErrUnknownExperiment
// for a name not in Experiments.
func RunExperiment(ctx context.Context, name string, cfg ExperimentConfig) (*ExperimentResult, error) {
	for _, e := range experiments {
		if e.Name == name {
			return e.run(ctx, cfg)
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownExperiment, name)
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

// param formats a setting.
func param(name string, v any) Param { return Param{Name: name, Value: fmt.Sprint(v)} }

// Sources of the published figures.
const (
	srcGervais = "Gervais et al., ACSAC 2014"
	srcNick    = "Nick, ETH thesis 2015"
	srcGuide   = "bloomwatch simnet measurement (GUIDE section 4)"
	srcFormula = "formula"
)
