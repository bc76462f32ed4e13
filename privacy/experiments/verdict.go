package experiments

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// Intervals of the right kind, and verdicts that can fail. Every measured row carries the data its interval and its test
// are computed from (evidence): the successes and trials of independent
// trials, a count of independent events, or per-cluster sums when the
// units are clustered (sessions and transactions within wallets). A row
// that compares its measurement with a reference names the alternative
// it must be able to detect; finish computes each test's power against
// that alternative at the Bonferroni level (a lower bound of Holm's),
// prints a verdict only where that power reaches MinPower, and corrects
// the printed verdicts of one run for multiplicity (Holm).

// Interval kinds (Comparison.IntervalKind): how the interval was
// computed, or why there is none.
const (
	// KindBinomial: successes among independent trials, the exact
	// Clopper-Pearson interval.
	KindBinomial = "binomial"
	// KindPoisson: a count of independent events, Garwood's exact
	// interval.
	KindPoisson = "poisson"
	// KindClusterBinomial: a proportion over units clustered in wallets
	// (or trials), or a mean of per-wallet values in [0, 1]: the Wilson
	// interval at the effective sample size p(1-p)/v, v the variance of
	// a cluster bootstrap (the number of clusters when the bootstrap has
	// no spread), so that it stays inside [0, 1] and never shrinks to a
	// point.
	KindClusterBinomial = "cluster-binomial"
	// KindClusterBootstrap: a mean of counts over clustered units: the
	// cluster bootstrap's percentile interval, widened to the exact
	// Poisson interval of the pooled count (which keeps a measured 0
	// from an empty interval).
	KindClusterBootstrap = "cluster-bootstrap"
	// KindNormal: a least-squares estimate, plus or minus 1.96 standard
	// errors.
	KindNormal = "normal"
	// KindDeterministic: a count the setting fixes (a filter's size,
	// the decoys a policy inserts): no interval.
	KindDeterministic = "deterministic"
	// KindComputed: a figure computed from formulas or published counts,
	// not measured: no interval.
	KindComputed = "computed"
)

// IntervalKinds describes each kind, for the table's legend and the
// JSON.
var IntervalKinds = map[string]string{
	KindBinomial:         "exact binomial (Clopper-Pearson) over independent trials",
	KindPoisson:          "exact Poisson (Garwood) over independent events",
	KindClusterBinomial:  "Wilson at the effective n of a cluster bootstrap (2,000 resamples) over the clusters named in the note",
	KindClusterBootstrap: "cluster bootstrap (2,000 resamples, percentile) over the clusters named in the note, widened to the exact Poisson interval of the pooled count when it is a count",
	KindNormal:           "normal: a least-squares estimate +- 1.96 standard errors",
	KindDeterministic:    "none: fixed by the setting",
	KindComputed:         "none: computed, not measured",
}

// Verdict settings.
const (
	// FamilyAlpha is the family-wise level of one run's verdicts.
	FamilyAlpha = stats.FamilyAlpha
	// MinPower is the least power against its alternative a verdict
	// needs to be printed.
	MinPower = 0.8
	// bootstrapResamples is the cluster bootstrap's resample count.
	bootstrapResamples = 2000
)

// Test is a verdict's test: the measurement against a reference, with
// its power against the alternative the experiment tests.
type Test struct {
	// Against is "formula" or "published".
	Against   string  `json:"against"`
	Reference float64 `json:"reference"`
	// P is the two-sided p-value of measured == reference; PHolm the
	// Holm-adjusted one over the run's printed verdicts.
	P     float64  `json:"p"`
	PHolm *float64 `json:"p_holm,omitempty"`
	// Alternative describes what the test must detect; Power is the
	// probability of detecting it at PowerLevel (FamilyAlpha over the
	// number of candidate verdicts: Bonferroni, a lower bound for Holm).
	Alternative string  `json:"alternative"`
	Power       float64 `json:"power"`
	PowerLevel  float64 `json:"power_level"`
	// Printed reports that the power reached MinPower and the verdict
	// is printed.
	Printed bool `json:"printed"`
}

// Alternative is what a test must be able to detect: values of the
// measured quantity other than the reference.
type Alternative struct {
	Desc   string
	values func(ref float64) []float64
}

// altFactor is the alternative "the reference is off by a factor f
// either way".
func altFactor(f float64) Alternative {
	return Alternative{Desc: fmt.Sprintf("the reference off by a factor %g", f),
		values: func(ref float64) []float64 { return []float64{ref * f, ref / f} }}
}

// altShift is the alternative "a proportion off by d either way"
// (clipped to [0, 1]).
func altShift(d float64) Alternative {
	return Alternative{Desc: fmt.Sprintf("a proportion off by %g either way", d),
		values: func(ref float64) []float64 {
			var out []float64
			if ref-d >= 0 {
				out = append(out, ref-d)
			}
			if ref+d <= 1 {
				out = append(out, ref+d)
			}
			return out
		}}
}

// altValue is one named alternative value.
func altValue(v float64, desc string) Alternative {
	return Alternative{Desc: desc, values: func(float64) []float64 { return []float64{v} }}
}

// evidence is what a row's interval and test are computed from.
type evidence struct {
	kind string
	// x of n: successes and trials (binomial), or a count and the
	// units it is averaged over (poisson, and the pooled count of a
	// cluster bootstrap).
	x, n float64
	// nEff is the cluster-binomial's effective sample size.
	nEff float64
	// boot holds the cluster bootstrap's replicate statistics, sorted.
	boot []float64
	// counts reports that x is a count (a cluster bootstrap widened by
	// its Poisson interval); signed that the quantity may be negative (a
	// difference).
	counts, signed bool
}

// rowSeed seeds a row's bootstrap from its quantity, so that results
// are deterministic.
func rowSeed(q string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(q))
	return h.Sum64()
}

// binomialRow is a proportion of x successes in n independent trials.
func binomialRow(q string, x, n int) Comparison {
	lo, hi := ClopperPearson(int64(x), int64(n), Alpha95)
	c := Comparison{Quantity: q, Measured: ratio(x, n), IntervalKind: KindBinomial,
		ev: evidence{kind: KindBinomial, x: float64(x), n: float64(n)}}
	if n == 0 {
		c.Measured = math.NaN()
		c.Display = "no trials"
	}
	return c.withInterval(lo, hi)
}

// poissonRow is a count of independent events averaged over units
// (units 1: the count itself).
func poissonRow(q string, count uint64, units float64) Comparison {
	lo, hi := PoissonInterval(count, Z95)
	return Comparison{Quantity: q, Measured: float64(count) / units, IntervalKind: KindPoisson,
		ev: evidence{kind: KindPoisson, x: float64(count), n: units}}.withInterval(lo/units, hi/units)
}

// normalRow is an estimate with its standard error.
func normalRow(q string, est, se float64) Comparison {
	return Comparison{Quantity: q, Measured: est, IntervalKind: KindNormal,
		ev: evidence{kind: KindNormal, x: est, n: se}}.withInterval(est-Z95*se, est+Z95*se)
}

// deterministicRow is a figure the setting fixes.
func deterministicRow(q string, v float64) Comparison {
	return Comparison{Quantity: q, Measured: v, IntervalKind: KindDeterministic}
}

// computedRow is a figure computed, not measured.
func computedRow(q string, v float64) Comparison {
	return Comparison{Quantity: q, Measured: v, IntervalKind: KindComputed}
}

// bootstrap returns the sorted statistics sum(num)/sum(den) of
// bootstrapResamples resamples of the clusters.
func bootstrap(q string, num, den []float64) []float64 {
	rng := rand.New(rand.NewPCG(rowSeed(q), uint64(len(num))))
	out := make([]float64, 0, bootstrapResamples)
	for range bootstrapResamples {
		var a, b float64
		for range num {
			i := rng.IntN(len(num))
			a, b = a+num[i], b+den[i]
		}
		if b > 0 {
			out = append(out, a/b)
		}
	}
	slices.Sort(out)
	return out
}

// percentile returns the p-quantile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Round(p * float64(len(sorted)-1)))
	return sorted[max(0, min(len(sorted)-1, i))]
}

// sumOf adds the values.
func sumOf(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// clusterPropRow is a proportion sum(num)/sum(den) of units clustered
// in the clusters (num[i] of den[i] units in cluster i, each num[i] <=
// den[i]; unit names the clusters for the note): the Wilson interval at
// the effective sample size of a cluster bootstrap.
func clusterPropRow(q string, num, den []float64, unit string) Comparison {
	n := sumOf(den)
	if n == 0 {
		return Comparison{Quantity: q, Measured: math.NaN(), Display: "no units", IntervalKind: KindClusterBinomial}
	}
	p := sumOf(num) / n
	boot := bootstrap(q, num, den)
	nEff := float64(len(num))
	if v := spread(boot); v > 0 && p > 0 && p < 1 {
		nEff = p * (1 - p) / v
	}
	lo, hi := wilsonAt(p, nEff, Z95)
	return Comparison{Quantity: q, Measured: p, IntervalKind: KindClusterBinomial,
		ev:   evidence{kind: KindClusterBinomial, x: p * nEff, n: nEff, nEff: nEff},
		Note: fmt.Sprintf("%d %s, effective n %.4g of %.4g units", len(num), unit, nEff, n)}.withInterval(lo, hi)
}

// clusterMeanRow is a mean sum(num)/sum(den) over units clustered in the
// clusters (num[i] over den[i] units in cluster i): the cluster
// bootstrap's percentile interval, widened to the exact Poisson interval
// of the pooled count when num holds counts.
func clusterMeanRow(q string, num, den []float64, counts bool, unit string) Comparison {
	n := sumOf(den)
	if n == 0 {
		return Comparison{Quantity: q, Measured: math.NaN(), Display: "no units", IntervalKind: KindClusterBootstrap}
	}
	x := sumOf(num)
	boot := bootstrap(q, num, den)
	lo, hi := percentile(boot, Alpha95/2), percentile(boot, 1-Alpha95/2)
	if counts {
		pl, ph := garwood(math.Round(x), Alpha95)
		lo, hi = math.Min(lo, pl/n), math.Max(hi, ph/n)
	}
	return Comparison{Quantity: q, Measured: x / n, IntervalKind: KindClusterBootstrap,
		ev:   evidence{kind: KindClusterBootstrap, x: x, n: n, boot: boot, counts: counts},
		Note: clusterNote(len(num), unit, n)}.withInterval(lo, hi)
}

// diffRow is the mean over clusters of the paired differences a[i] -
// b[i] of two [0, 1] measurements on the same clusters (wallets), with
// the cluster bootstrap's percentile interval; when every difference is
// the same (no spread), the interval is the widest the two sides'
// intervals allow, never a point. Tested against 0 it asks whether the
// two sides differ.
func diffRow(q string, a, b []float64, unit string) Comparison {
	ones := make([]float64, len(a))
	d := make([]float64, len(a))
	for i := range ones {
		ones[i], d[i] = 1, a[i]-b[i]
	}
	c := clusterMeanRow(q, d, ones, false, unit)
	c.ev.signed = true
	if c.Interval != nil && spread(c.ev.boot) == 0 {
		ra, rb := clusterPropRow(q+" a", a, ones, unit), clusterPropRow(q+" b", b, ones, unit)
		c.Interval = &[2]float64{ra.Interval[0] - rb.Interval[1], ra.Interval[1] - rb.Interval[0]}
		c.Note = joinNote(c.Note, "no spread across wallets: the interval is the two sides' intervals combined")
	}
	return c
}

// altDiff is the alternative "a difference of d either way".
func altDiff(d float64) Alternative {
	return Alternative{Desc: fmt.Sprintf("a difference of %g either way", d),
		values: func(ref float64) []float64 { return []float64{ref - d, ref + d} }}
}

// clusterNote names the clusters and, when they differ, the units.
func clusterNote(clusters int, unit string, units float64) string {
	if units == float64(clusters) {
		return fmt.Sprintf("%d %s", clusters, unit)
	}
	return fmt.Sprintf("%d %s, %.4g units", clusters, unit, units)
}

// spread returns the variance of bootstrap replicates, 0 when they differ
// only by rounding (a statistic with no variation across the clusters).
func spread(boot []float64) float64 {
	v := variance(boot)
	if len(boot) == 0 {
		return 0
	}
	m := math.Abs(sumOf(boot) / float64(len(boot)))
	if math.Sqrt(v) <= 1e-12*math.Max(m, 1e-300) {
		return 0
	}
	return v
}

// variance returns the sample variance of v.
func variance(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := sumOf(v) / float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(v)-1)
}

// admits reports whether v is a possible value of the measured quantity
// (a proportion lies in [0, 1], a mean of counts is not negative).
func (e evidence) admits(v float64) bool {
	switch e.kind {
	case KindBinomial, KindClusterBinomial:
		return v >= 0 && v <= 1
	}
	return (e.signed || v >= 0) && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// pValue returns the two-sided p-value of "the measured quantity equals
// ref" from the evidence, the test its interval inverts.
func (e evidence) pValue(ref float64) float64 {
	switch e.kind {
	case KindBinomial:
		return math.Min(1, 2*math.Min(BinomialCDF(e.x, e.n, ref), binomialSF(e.x, e.n, ref)))
	case KindPoisson:
		l := ref * e.n
		return math.Min(1, 2*math.Min(PoissonCDF(e.x, l), poissonSF(e.x, l)))
	case KindClusterBinomial:
		p := e.x / e.n
		sd := math.Sqrt(ref * (1 - ref) / e.n)
		if sd == 0 {
			if p == ref {
				return 1
			}
			return 0
		}
		return 2 * normalCDF(-math.Abs(p-ref)/sd)
	case KindNormal:
		if e.n <= 0 {
			return math.NaN()
		}
		return 2 * normalCDF(-math.Abs(e.x-ref)/e.n)
	case KindClusterBootstrap:
		b := float64(len(e.boot))
		below := float64(sort.SearchFloat64s(e.boot, math.Nextafter(ref, math.Inf(1))))
		above := b - float64(sort.SearchFloat64s(e.boot, ref))
		p := math.Min(1, 2*math.Min(below+1, above+1)/(b+1))
		if e.counts {
			l := ref * e.n
			x := math.Round(e.x)
			p = math.Max(p, math.Min(1, 2*math.Min(PoissonCDF(x, l), poissonSF(x, l))))
		}
		return p
	}
	return math.NaN()
}

// power returns the probability that the test of ref rejects at level
// when the truth is alt.
func (e evidence) power(ref, alt, level float64) float64 {
	switch e.kind {
	case KindBinomial:
		return discretePower(e.n, level,
			func(x float64) float64 { return BinomialCDF(x, e.n, ref) }, func(x float64) float64 { return binomialSF(x, e.n, ref) },
			func(x float64) float64 { return BinomialCDF(x, e.n, alt) }, func(x float64) float64 { return binomialSF(x, e.n, alt) })
	case KindPoisson:
		l0, l1 := ref*e.n, alt*e.n
		top := math.Max(l0, l1) + 40*math.Sqrt(math.Max(l0, l1)+1) + 40
		return discretePower(top, level,
			func(x float64) float64 { return PoissonCDF(x, l0) }, func(x float64) float64 { return poissonSF(x, l0) },
			func(x float64) float64 { return PoissonCDF(x, l1) }, func(x float64) float64 { return poissonSF(x, l1) })
	case KindClusterBinomial:
		z := normalQuantile(1 - level/2)
		s0, s1 := math.Sqrt(ref*(1-ref)/e.n), math.Sqrt(alt*(1-alt)/e.n)
		d := math.Abs(alt - ref)
		if s1 == 0 {
			if d > z*s0 {
				return 1
			}
			return 0
		}
		return normalCDF((d-z*s0)/s1) + normalCDF((-d-z*s0)/s1)
	case KindNormal:
		if e.n <= 0 {
			return 0
		}
		z := normalQuantile(1 - level/2)
		d := math.Abs(alt - ref)
		return normalCDF(d/e.n-z) + normalCDF(-d/e.n-z)
	case KindClusterBootstrap:
		z := normalQuantile(1 - level/2)
		se := math.Sqrt(spread(e.boot))
		if e.counts {
			se = math.Max(se, math.Sqrt(math.Max(ref*e.n, 1))/e.n)
		}
		if se == 0 {
			return 0
		}
		d := math.Abs(alt - ref)
		return normalCDF(d/se-z) + normalCDF(-d/se-z)
	}
	return 0
}

// discretePower is the power of the exact two-sided test on a count in
// [0, top]: the null rejects x when its lower or upper tail is at most
// level/2; the power is the alternative's probability of those x.
func discretePower(top, level float64, cdf0, sf0, cdf1, sf1 func(float64) float64) float64 {
	tail := level / 2
	// xl: the largest x with cdf0(x) <= tail (-1: none).
	lo, hi := -1.0, math.Floor(top)+1
	for hi-lo > 1 {
		m := math.Floor((lo + hi) / 2)
		if cdf0(m) <= tail {
			lo = m
		} else {
			hi = m
		}
	}
	xl := lo
	// xh: the smallest x with sf0(x) <= tail (top+1: none).
	lo, hi = -1, math.Floor(top)+1
	for hi-lo > 1 {
		m := math.Floor((lo + hi) / 2)
		if sf0(m) <= tail {
			hi = m
		} else {
			lo = m
		}
	}
	xh := hi
	p := 0.0
	if xl >= 0 {
		p += cdf1(xl)
	}
	if xh <= math.Floor(top) || sf0(xh) <= tail {
		p += sf1(xh)
	}
	return math.Min(1, p)
}

// test asks for a verdict of the measurement against the row's formula,
// able to detect alt.
func (c Comparison) test(alt Alternative) Comparison {
	c.alt, c.against = &alt, "formula"
	return c
}

// testLabeled asks for a verdict against the row's formula column,
// which holds a reference named label (another measurement).
func (c Comparison) testLabeled(label string, alt Alternative) Comparison {
	c.alt, c.against = &alt, label
	return c
}

// testPublished asks for a verdict against the published figure.
func (c Comparison) testPublished(alt Alternative) Comparison {
	c.alt, c.against = &alt, "published"
	return c
}

// VerdictPolicy states how a run's verdicts were decided.
type VerdictPolicy struct {
	Correction  string  `json:"correction"`
	FamilyAlpha float64 `json:"family_alpha"`
	MinPower    float64 `json:"min_power"`
	// Candidates counts the rows that asked for a verdict, Printed those
	// whose power allowed one.
	Candidates int `json:"candidates"`
	// Screened counts the candidates with power MinPower at FamilyAlpha:
	// the power of each is then computed at FamilyAlpha / Screened.
	Screened int `json:"screened"`
	Printed  int `json:"printed"`
}

// Verdict words.
const (
	VerdictAgrees  = "agrees with"
	VerdictDiffers = "differs from"
	// VerdictFormOnly is the verdict of a published figure from another
	// setting.
	VerdictFormOnly = "another setting: compare in form"
)

// finish computes every requested test, keeps those with power, and
// applies Holm's correction to them.
func (r *Result) finish() {
	var cand []int
	for i := range r.Rows {
		c := &r.Rows[i]
		if c.FormOnly && c.Literature != nil && c.Verdict == "" {
			c.Verdict = VerdictFormOnly
		}
		if c.alt == nil {
			continue
		}
		ref := c.Formula
		if c.against == "published" {
			ref = c.Literature
		}
		if ref == nil || c.ev.kind == "" || math.IsNaN(c.Measured) || math.IsNaN(*ref) {
			continue
		}
		cand = append(cand, i)
	}
	// Power is screened in two steps, so that rows no number of trials
	// here could decide do not dilute the others: first at the family
	// level, then, for the rows that pass, at the Bonferroni level over
	// them (a lower bound of the power under Holm's procedure).
	tests := make(map[int]*Test, len(cand))
	alts := make(map[int][]float64, len(cand))
	screened := 0
	for _, i := range cand {
		c := &r.Rows[i]
		ref := *c.Formula
		if c.against == "published" {
			ref = *c.Literature
		}
		for _, a := range c.alt.values(ref) {
			if c.ev.admits(a) && a != ref {
				alts[i] = append(alts[i], a)
			}
		}
		tests[i] = &Test{Against: c.against, Reference: ref, P: c.ev.pValue(ref), Alternative: c.alt.Desc}
		if minPower(c.ev, ref, alts[i], FamilyAlpha) >= MinPower {
			screened++
		}
	}
	level := FamilyAlpha / float64(max(1, screened))
	var printed []int
	for _, i := range cand {
		c, t := &r.Rows[i], tests[i]
		t.PowerLevel = level
		t.Power = minPower(c.ev, t.Reference, alts[i], level)
		if t.Power >= MinPower {
			t.Printed = true
			printed = append(printed, i)
			c.Note = joinNote(c.Note, fmt.Sprintf("power %.2f against %s", t.Power, c.alt.Desc))
		} else {
			c.Note = joinNote(c.Note, fmt.Sprintf("no verdict: power %.2f against %s", t.Power, c.alt.Desc))
		}
		c.Test = t
	}
	// Holm over the printed verdicts (stats.HolmAdjust, the one
	// implementation the analyzer uses too).
	ps := make([]float64, len(printed))
	for k, i := range printed {
		ps[k] = r.Rows[i].Test.P
	}
	for k, adj := range stats.HolmAdjust(ps) {
		c := &r.Rows[printed[k]]
		c.Test.PHolm = &adj
		word := VerdictAgrees
		if adj < FamilyAlpha {
			word = VerdictDiffers
		}
		c.Verdict = fmt.Sprintf("%s %s (Holm p %s)", word, c.against, fmtP(adj))
	}
	r.Verdicts = VerdictPolicy{Correction: stats.CorrectionHolm, FamilyAlpha: FamilyAlpha, MinPower: MinPower,
		Candidates: len(cand), Screened: screened, Printed: len(printed)}
}

// minPower is the least power over the alternatives (0 without any).
func minPower(e evidence, ref float64, alts []float64, level float64) float64 {
	if len(alts) == 0 {
		return 0
	}
	p := 1.0
	for _, a := range alts {
		p = math.Min(p, e.power(ref, a, level))
	}
	return p
}

// fmtP formats a p-value.
func fmtP(p float64) string {
	switch {
	case p >= 0.01:
		return fmt.Sprintf("%.2f", p)
	case p >= 1e-4:
		return fmt.Sprintf("%.1g", p)
	}
	return "< 1e-4"
}

// joinNote appends a sentence to a note.
func joinNote(note, more string) string {
	if note == "" {
		return more
	}
	return note + "; " + more
}
