package experiments

import (
	"context"
	"encoding/json"
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
	// Records is the number of records of pprl's encoded database (0:
	// its default).
	Records int
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
	// Population, when set, is given the population a population
	// experiment built, once, before its sessions.
	Population func(*Population)
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

// Comparison is one quantity: measured, with the interval its kind of
// measurement calls for, beside the formula's and the published figure,
// and a verdict where a test of the two can fail (verdict.go).
type Comparison struct {
	Quantity string `json:"quantity"`
	// Measured is the measurement (null in JSON when it is not finite:
	// Display then says why, e.g. a saturated filter's infinite m^).
	Measured float64 `json:"measured"`
	Display  string  `json:"display,omitempty"`
	// Formula is the model's prediction, when there is one.
	Formula *float64 `json:"formula,omitempty"`
	// Literature is the published figure, when there is one.
	Literature *float64 `json:"literature,omitempty"`
	// RelDiff is (measured - literature) / literature, or against the
	// formula when there is no published figure; absent when there is
	// neither, either is near 0, or the row is a measurement with an
	// interval (the interval and the test compare it).
	RelDiff *float64 `json:"rel_diff,omitempty"`
	// Interval is the 95 % interval of a measurement; IntervalKind says
	// how it was computed (IntervalKinds), or why there is none.
	Interval     *[2]float64 `json:"interval,omitempty"`
	IntervalKind string      `json:"interval_kind"`
	Source       string      `json:"source,omitempty"`
	Note         string      `json:"note,omitempty"`
	// Test is the verdict's test, when the row asked for one.
	Test *Test `json:"test,omitempty"`
	// Verdict is the test's outcome when its power allowed one
	// ("agrees with formula (Holm p 0.41)"), or VerdictFormOnly for a
	// published figure of another setting.
	Verdict string `json:"verdict,omitempty"`
	// FormOnly marks a published figure from another setting (other
	// wallets, another chain, another scale): set beside the measurement
	// to compare in form, not to be reproduced.
	FormOnly bool `json:"form_only,omitempty"`

	ev      evidence
	alt     *Alternative
	against string
}

// MarshalJSON writes a non-finite measurement as null.
func (c Comparison) MarshalJSON() ([]byte, error) {
	type plain Comparison
	out := struct {
		plain
		Measured *float64 `json:"measured"`
	}{plain: plain(c)}
	if !math.IsNaN(c.Measured) && !math.IsInf(c.Measured, 0) {
		out.Measured = &c.Measured
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes (a null measurement as
// NaN).
func (c *Comparison) UnmarshalJSON(b []byte) error {
	type plain Comparison
	in := struct {
		*plain
		Measured *float64 `json:"measured"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	c.Measured = math.NaN()
	if in.Measured != nil {
		c.Measured = *in.Measured
	}
	return nil
}

// verdictTiny is a relative difference's smallest reference: under it
// no relative difference is given.
const verdictTiny = 1e-9

// Param is one setting an experiment ran with.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Result is an experiment's output. Its charts use privacy's chart model,
// which package privacy/plot draws.
type Result struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Seed is the seed every random choice of the run derives from.
	Seed   uint64       `json:"seed"`
	Params []Param      `json:"params"`
	Rows   []Comparison `json:"rows"`
	// Verdicts states how the rows' verdicts were decided.
	Verdicts VerdictPolicy   `json:"verdicts"`
	Charts   []privacy.Chart `json:"charts"`
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
	{"rappor", "RAPPOR's responses on BIP37 filters: missed payments, epsilon, one-sided noise, the aggregator's regression (--wallets, --filters reloads)", runRappor},
	{"frequency", "the PPRL frequency-alignment attack on a crawl of filters, per tweak policy, beside the direct test (--wallets)", runFrequency},
	{"pprl", "the PPRL frequency attack of Christen et al. (PAKDD 2017) on Bloom-filter encodings of first names (--records, --hash-funcs)", runPPRL},
	{"bip158", "BIP37 beside BIP157/158 on the same chain and wallets: what the serving peer learns, at equal bandwidth (--wallets, --blocks)", runBIP158},
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
	r.Seed = cfg.Seed
	r.finish()
	return r, nil
}

// literature returns a pointer to a published figure.
func literature(v float64) *float64 { return &v }

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
		cfg.Wallets < 0 || cfg.Peers < 0 || cfg.HashFuncs < 0 || cfg.Records < 0:
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
		"filters": cfg.Filters, "key_step": cfg.KeyStep, "wallets": cfg.Wallets, "peers": cfg.Peers, "hash_funcs": cfg.HashFuncs, "records": cfg.Records}
}

// withInterval attaches a 95 % interval; the relative difference then
// gives way to it.
func (c Comparison) withInterval(lo, hi float64) Comparison {
	c.Interval = &[2]float64{lo, hi}
	return c
}

// withFormula sets the formula's figure.
func (c Comparison) withFormula(v float64) Comparison {
	c.Formula = &v
	if c.Literature == nil && c.Interval == nil {
		c.RelDiff = finiteRelDiff(c.Measured, v)
	}
	return c
}

// withPublished sets the published figure and its source.
func (c Comparison) withPublished(v float64, source string) Comparison {
	c.Literature, c.Source = &v, source
	if c.Interval == nil {
		c.RelDiff = finiteRelDiff(c.Measured, v)
	}
	return c
}

// withSource sets the row's source.
func (c Comparison) withSource(s string) Comparison {
	c.Source = s
	return c
}

// formOnly marks the published figure as another setting's.
func (c Comparison) formOnly() Comparison {
	c.FormOnly = true
	return c
}

// withNote appends a note.
func (c Comparison) withNote(note string) Comparison {
	c.Note = joinNote(c.Note, note)
	return c
}

// withDisplay sets the text shown instead of the measurement.
func (c Comparison) withDisplay(d string) Comparison {
	c.Display = d
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

// Sources of the figures in the published column, with the page,
// section or table they were read at, and the labels of
// figures that are not published. A figure this project measured is never
// a published one: it is labelled "measured here" and kept out of
// Comparison.Literature.
const (
	// srcGervais: the paper's PDF was not read; its figures were read in
	// a chapter two of its authors wrote about it
	// (docs/RESEARCH.md, "Sources").
	srcGervais = "Gervais et al., ACSAC 2014, as summarized in Karame & Androulaki, Bitcoin and Blockchain Security (2016), ch. 6 (ebrary.net 88242-88250; the paper itself not read)"
	// srcNick is the thesis; srcNickPage names its printed page.
	srcNick = "Nick, Data-Driven De-Anonymization in Bitcoin, ETH thesis 2015"
	// srcNickBlog: the post's section "A Simple Attack".
	srcNickBlog = "Nick, blog \"Privacy in BitcoinJ\", 12 Feb 2015, section \"A Simple Attack\""
	// srcChristenEval: the abstract of the evaluation of both attack
	// families on the North Carolina voter register (docs/RESEARCH.md,
	// "Sources").
	srcChristenEval = "Christen et al.'s attacks evaluated on NCVR, \"Evaluating hardening techniques against cryptanalysis attacks on Bloom filter encodings for record linkage\", International Journal of Population Data Science, abstract (Results)"
	srcFormula      = "formula"
	srcBIP37        = "computed from BIP37's sizing formulas (not a published figure)"
)

// srcNickPage is the thesis at a printed page or table.
func srcNickPage(where string) string { return srcNick + ", " + where }

// Unit conversions.
const (
	// bitsPerByte converts filter sizes to bits.
	bitsPerByte = 8
	// floatBits is the precision strconv formats float64 with.
	floatBits = 64
)
