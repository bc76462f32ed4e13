package privacy

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/joint"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// The set stages: after each event, which candidates the adversary still
// suspects, measured on the hits and predicted by the formulas.

// genView is one generation as the adversary knows it after an event: its
// latest state and the height at which it was loaded.
type genView struct {
	state  int
	height int32
}

// view is the adversary's knowledge after one event: the latest filter
// state and every generation so far.
type view struct {
	event  replay.Event
	latest int
	gens   []genView
}

// views returns the view after every event from the first filter state on.
func (a *analysis) views() []view {
	var out []view
	latest := -1
	var gens []genView
	for _, e := range a.tl.Events {
		if e.Generation >= len(gens) {
			load := a.tl.Events[a.tl.Generations[e.Generation].Load].Record.Height
			gens = append(gens, genView{state: e.State, height: load})
		}
		if e.State >= 0 {
			latest = e.State
			if e.Generation >= 0 {
				gens[e.Generation].state = e.State
			}
		}
		if latest < 0 {
			continue
		}
		out = append(out, view{event: e, latest: latest, gens: slices.Clone(gens)})
	}
	return out
}

// bucket is the candidates that face the same filters: for the
// intersection, every generation loaded at or after their first-seen
// height, plus the latest filter.
type bucket struct {
	constraints []int
	forms       []uint64
	truth       []uint64
}

// buckets splits the universe by the constraints its candidates face and
// returns the sorted load heights that separate the buckets (see
// bucketOf). Without intersection there is one bucket: the latest filter.
func (a *analysis) buckets(v view, intersect bool) ([]bucket, []int32) {
	if !intersect {
		return []bucket{{constraints: []int{v.latest}, forms: a.res.FormCounts, truth: a.res.TruthCounts}}, nil
	}
	var heights []int32
	for _, g := range v.gens {
		if !slices.Contains(heights, g.height) {
			heights = append(heights, g.height)
		}
	}
	slices.Sort(heights)
	// Bucket j holds the candidates first seen after heights[j-1] and at
	// or before heights[j]; the last one those first seen after every
	// load, and bucket 0 also those of unknown first-seen height.
	out := make([]bucket, len(heights)+1)
	for j := range out {
		b := &out[j]
		b.forms, b.truth = make([]uint64, element.MaxFormsPerLine+1), make([]uint64, element.MaxFormsPerLine+1)
		b.constraints = []int{v.latest}
		for _, g := range v.gens {
			if j < len(heights) && g.height >= heights[j] && !slices.Contains(b.constraints, g.state) {
				b.constraints = append(b.constraints, g.state)
			}
		}
	}
	scan.AddCounts(out[0].forms, a.res.FormCounts)
	scan.AddCounts(out[0].truth, a.res.TruthCounts)
	move := func(hist map[int32][]uint64, pick func(*bucket) []uint64) {
		for h, c := range hist {
			j := bucketOf(heights, h)
			if j == 0 {
				continue
			}
			subCounts(pick(&out[0]), c)
			scan.AddCounts(pick(&out[j]), c)
		}
	}
	move(a.res.SeenCounts, func(b *bucket) []uint64 { return b.forms })
	move(a.res.TruthSeenCounts, func(b *bucket) []uint64 { return b.truth })
	return out, heights
}

// bucketOf returns the bucket of a candidate first seen at h: the first
// load height at or above it (0 for an unknown height, h <= 0).
func bucketOf(heights []int32, h int32) int {
	if h <= 0 {
		return 0
	}
	return sort.Search(len(heights), func(j int) bool { return heights[j] >= h })
}

// subCounts subtracts src from dst element-wise.
func subCounts(dst, src []uint64) {
	for i, v := range src {
		dst[i] -= v
	}
}

// required returns the constraint states of a candidate first seen at h.
func (a *analysis) required(v view, intersect bool, h int32) []int {
	out := []int{v.latest}
	if !intersect {
		return out
	}
	for _, g := range v.gens {
		if (h <= 0 || g.height >= h) && !slices.Contains(out, g.state) {
			out = append(out, g.state)
		}
	}
	return out
}

// setResult is a stage's set after one event: the hits in it, and the
// candidates outside the hits that no filter constrains (only with
// match-all filters), which are in it too.
type setResult struct {
	hits       []int32
	extra      uint64
	extraTruth uint64
}

// curve computes one set stage's points and returns its final set.
func (a *analysis) curve(st setStage) (Curve, setResult) {
	c := Curve{Stage: st.name}
	var res setResult
	revealedSoFar := map[string]bool{}
	for step, v := range a.views() {
		if v.event.Revealed != nil {
			revealedSoFar[string(v.event.Revealed)] = true
		}
		bks, heights := a.buckets(v, st.intersect)
		res = a.evaluate(v, st, bks, heights)
		if st.graph {
			res.hits = a.graph.prune(res.hits, a.hitRev)
		}
		p := a.point(step, v, st, bks, res)
		p.Revealed = len(revealedSoFar)
		c.Points = append(c.Points, p)
	}
	return c, res
}

// evaluate returns the hits that match every state their bucket requires
// (through every form when the both-forms test applies to the state), and
// counts the unconstrained candidates outside the hits.
func (a *analysis) evaluate(v view, st setStage, bks []bucket, heights []int32) setResult {
	var res setResult
	for i, h := range a.res.Hits {
		ok := true
		for _, s := range a.required(v, st.intersect, h.Candidate.FirstSeen) {
			if replay.MatchesAll(a.tl.States[s]) {
				continue
			}
			mask := h.Any
			if st.allForms && a.pubKeysIn[s] {
				mask = h.All
			}
			if !mask.Has(s) {
				ok = false
				break
			}
		}
		if ok {
			res.hits = append(res.hits, int32(i))
		}
	}
	// Candidates whose every required filter matches everything are in
	// the set whether or not they are hits; count those that are not.
	for _, b := range bks {
		if !a.allMatchAll(b.constraints) {
			continue
		}
		for _, n := range b.forms {
			res.extra += n
		}
		for _, n := range b.truth {
			res.extraTruth += n
		}
	}
	for _, h := range a.res.Hits {
		b := bks[0]
		if heights != nil {
			b = bks[bucketOf(heights, h.Candidate.FirstSeen)]
		}
		if a.allMatchAll(b.constraints) {
			res.extra--
			if h.Truth {
				res.extraTruth--
			}
		}
	}
	return res
}

// allMatchAll reports whether every state matches everything.
func (a *analysis) allMatchAll(states []int) bool {
	for _, s := range states {
		if !replay.MatchesAll(a.tl.States[s]) {
			return false
		}
	}
	return true
}

// point measures a set and computes the formulas for it. The formulas
// need the wallet size N only for precision and entropy, which are
// computed with the truth alone: without it the expected false positives
// are every candidate's chance match (f * |A|, the wallet's own few not
// subtracted, since nothing measured says how many they are).
func (a *analysis) point(step int, v view, st setStage, bks []bucket, res setResult) Point {
	r := v.event.Record
	latest := a.tl.States[v.latest]
	p := Point{
		Step: step, Kind: r.Kind, Label: eventLabel(v.event), Seq: r.Seq, Height: r.Height, Peer: r.Peer,
		Filters: len(bks[0].constraints), EstElements: latest.EstimatedElements(),
		EstElementsCI: estElementsInterval(latest),
		Matched:       uint64(len(res.hits)) + res.extra,
	}
	for j, b := range bks {
		je := a.jointOf(b.constraints, st.allForms)
		if j == 0 {
			p.FPRate = je.rate
		}
		e := a.expectedFP(je, b.forms, b.truth)
		p.ExpectedFP += e.upper
		p.ExpectedFPLower += e.lower
		p.IndependentFP += e.independent
	}
	if a.hasTruth {
		p.TruePositives = res.extraTruth
		for _, i := range res.hits {
			if a.res.Hits[i].Truth {
				p.TruePositives++
			}
		}
		p.FalsePositives = p.Matched - p.TruePositives
		// The graph stage prunes by the transaction graph, which the
		// joint model does not: its expectation is the intersection's,
		// an upper bound, not a prediction to test.
		p.score(float64(a.res.Truth()), !st.graph)
	}
	p.EstElements = finiteOr(p.EstElements, -1)
	return p
}

// score fills the figures that need the truth: N (members), the measured
// precision, recall and entropy, the expected precision and entropy over
// the false-positive count, and, when compare is set, the comparison's
// power and p-value (the analysis decides the outcome over the run's
// family: decideComparisons).
//
// N is fixed by the truth and only the false-positive count F is random
// (which non-members hash into the filter), so the precision TP/(TP+F) and
// the entropy log2 C(TP+F, TP) take the ends of F's Garwood interval
// mapped through them (MethodPoissonMapped), not an interval of their own;
// the recall is certain (a Bloom filter has no false negatives, and the
// graph stage prunes deterministically given the chain) and has none.
func (p *Point) score(members float64, compare bool) {
	p.Scored, p.Members = true, members
	tp, fp := float64(p.TruePositives), float64(p.FalsePositives)
	fpCI := stats.PoissonInterval(p.FalsePositives, stats.ConfidenceLevel)
	p.FalsePositivesCI = &fpCI
	p.Precision = stats.Precision(tp, fp)
	p.PrecisionCI = &stats.Interval{Lo: stats.Precision(tp, fpCI.Hi), Hi: stats.Precision(tp, fpCI.Lo), Method: stats.MethodPoissonMapped}
	p.Recall = stats.Recall(tp, members)
	p.Entropy = stats.Entropy(tp, fp)
	p.EntropyCI = &stats.Interval{Lo: stats.Entropy(tp, fpCI.Lo), Hi: stats.Entropy(tp, fpCI.Hi), Method: stats.MethodPoissonMapped}
	p.ExpectedPrecision = stats.ExpectedPrecision(members, 0, p.ExpectedFP)
	p.ExpectedEntropy = stats.ExpectedEntropy(members, 0, p.ExpectedFP)
	if compare {
		p.ComparisonPower = stats.ComparisonPower(p.ExpectedFP, stats.ConfidenceLevel)
		p.ComparisonP = stats.CountPValue(p.FalsePositives, p.ExpectedFPLower, p.ExpectedFP)
		p.compare = true
	}
}

// estElementsInterval returns the 95 % interval of a filter's element
// estimate m^ (its standard error, elementStdErr), or nil when m^ is not
// finite (every bit set) or the filter matches everything.
func estElementsInterval(f *bip37.Filter) *stats.Interval {
	m := f.EstimatedElements()
	return stats.NormalInterval(m, replay.ElementStdErr(f.NumBits(), f.HashFuncs(), m), 0)
}

// eventLabel names an event for tables and charts.
func eventLabel(e replay.Event) string {
	r := e.Record
	s := fmt.Sprintf("#%d %s %s", r.Seq, r.Kind, r.Peer)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	if e.Note != "" {
		s += " [" + e.Note + "]"
	}
	return s
}

// bitsPerByte converts filter sizes to bits.
const bitsPerByte = 8

// jointEval is the joint model (Joint) of one set of constraint states,
// with the both-forms test's choice per filter, and its rates per form
// count, computed once per analysis (FormsRate recomputes per-seed
// histograms: milliseconds for a dozen large filters).
type jointEval struct {
	joint     *joint.Joint
	everyForm []bool    // by joint index: the both-forms test applies
	single    []float64 // by joint index: the filter's own rate (X/n)^k
	rate      float64
	forms     map[int]joint.RateBounds
}

// jointOf returns the joint model of the constraint states (those that
// match everything constrain nothing and are left out). The both-forms
// test applies to a state when allForms is set and the state evidently
// holds public keys (detectPubKeys).
func (a *analysis) jointOf(constraints []int, allForms bool) *jointEval {
	states := make([]int, 0, len(constraints))
	for _, s := range constraints {
		if !replay.MatchesAll(a.tl.States[s]) && !slices.Contains(states, s) {
			states = append(states, s)
		}
	}
	slices.Sort(states)
	key := fmt.Sprint(allForms, states)
	if je, ok := a.joints[key]; ok {
		return je
	}
	je := &jointEval{joint: joint.NewJoint(), forms: map[int]joint.RateBounds{}}
	for _, s := range states {
		je.joint.Add(a.tl.States[s])
		je.everyForm = append(je.everyForm, allForms && a.pubKeysIn[s])
		je.single = append(je.single, a.stateRate[s])
	}
	je.rate = je.joint.Rate()
	if a.joints == nil {
		a.joints = map[string]*jointEval{}
	}
	a.joints[key] = je
	return je
}

// formsRate returns the joint rate of a candidate of nf forms (cached).
func (je *jointEval) formsRate(nf int) joint.RateBounds {
	b, ok := je.forms[nf]
	if !ok {
		b = je.joint.FormsRate(nf, je.everyForm)
		je.forms[nf] = b
	}
	return b
}

// independentRate returns the rate of a candidate of nf forms if the
// filters were independent: the product over filters of f_i^nf (both-forms
// test) or 1-(1-f_i)^nf. It is the reference the joint model replaces.
func (je *jointEval) independentRate(nf int) float64 {
	rate := 1.0
	for i, f := range je.single {
		if je.everyForm[i] {
			rate *= stats.AllFormsRate(f, nf)
		} else {
			rate *= stats.AnyFormRate(f, nf)
		}
	}
	return rate
}

// expectation is an expected false-positive count: the joint model's
// (upper and lower bounds, equal when the rate is exact) and the
// independent-filters reference.
type expectation struct {
	upper, lower, independent float64
}

// expectedFP returns the model's false-positive count among candidates
// counted by forms (truth: the wallet's among them, all zero without the
// truth) that must survive every constraint filter of je: per form count
// F, the candidates that are not known to be the wallet's times
// Joint.FormsRate(F, everyForm).
func (a *analysis) expectedFP(je *jointEval, forms, truth []uint64) expectation {
	var e expectation
	for nf := 1; nf < len(forms); nf++ {
		n := float64(forms[nf])
		if n == 0 {
			continue
		}
		nonMembers := n - float64(truth[nf])
		b := je.formsRate(nf)
		e.upper += b.Upper * nonMembers
		e.lower += b.Lower * nonMembers
		e.independent += je.independentRate(nf) * nonMembers
	}
	return e
}

// finiteOr returns v, or alt when v is infinite or NaN.
func finiteOr(v, alt float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return alt
	}
	return v
}
