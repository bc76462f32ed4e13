package privacy

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
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
	event  Event
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
		b.forms, b.truth = make([]uint64, MaxFormsPerLine+1), make([]uint64, MaxFormsPerLine+1)
		b.constraints = []int{v.latest}
		for _, g := range v.gens {
			if j < len(heights) && g.height >= heights[j] && !slices.Contains(b.constraints, g.state) {
				b.constraints = append(b.constraints, g.state)
			}
		}
	}
	addCounts(out[0].forms, a.res.FormCounts)
	addCounts(out[0].truth, a.res.TruthCounts)
	move := func(hist map[int32][]uint64, pick func(*bucket) []uint64) {
		for h, c := range hist {
			j := bucketOf(heights, h)
			if j == 0 {
				continue
			}
			subCounts(pick(&out[0]), c)
			addCounts(pick(&out[j]), c)
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
			if matchesAll(a.tl.States[s]) {
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
		if !matchesAll(a.tl.States[s]) {
			return false
		}
	}
	return true
}

// point measures a set and computes the formulas for it.
func (a *analysis) point(step int, v view, st setStage, bks []bucket, res setResult) Point {
	r := v.event.Record
	latest := a.tl.States[v.latest]
	p := Point{
		Step: step, Kind: r.Kind, Label: eventLabel(v.event), Seq: r.Seq, Height: r.Height, Peer: r.Peer,
		Filters: len(bks[0].constraints), EstElements: latest.EstimatedElements(),
		Matched: uint64(len(res.hits)) + res.extra,
	}
	if a.hasTruth {
		p.TruePositives = res.extraTruth
		for _, i := range res.hits {
			if a.res.Hits[i].Truth {
				p.TruePositives++
			}
		}
	}
	members := float64(a.res.Truth())
	if !a.hasTruth {
		members = math.Min(float64(p.Matched), finiteOr(p.EstElements, float64(p.Matched)))
	}
	p.Members = members
	total := float64(a.res.Scanned)
	for j, b := range bks {
		rates := a.groupRates(b.constraints, st.allForms)
		if j == 0 {
			p.FPRate = 1
			for _, gr := range rates {
				p.FPRate *= gr.rate
			}
		}
		p.ExpectedFP += a.expectedFP(rates, b.forms, b.truth, members, total)
	}
	p.ExpectedPrecision = Precision(members, p.ExpectedFP)
	p.ExpectedEntropy = Entropy(members, p.ExpectedFP)
	if a.hasTruth {
		p.FalsePositives = p.Matched - p.TruePositives
		p.Precision = Precision(float64(p.TruePositives), float64(p.FalsePositives))
		p.Recall = Recall(float64(p.TruePositives), members)
		p.Entropy = Entropy(float64(p.TruePositives), float64(p.FalsePositives))
	}
	p.EstElements = finiteOr(p.EstElements, -1)
	return p
}

// eventLabel names an event for tables and charts.
func eventLabel(e Event) string {
	r := e.Record
	s := fmt.Sprintf("%s %s", r.Kind, r.Peer)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	if e.Note != "" {
		s += " [" + e.Note + "]"
	}
	return s
}

// groupKey identifies filters that probe the same bit positions.
type groupKey struct {
	size  int
	k     uint32
	tweak uint32
}

// groupRate is the false-positive rate of one independent group of
// filters, and whether the both-forms test applies to it.
type groupRate struct {
	rate float64
	both bool
}

// groupRates returns the false-positive rate of each independent group of
// constraint filters. Filters with the same size, hash count and tweak
// probe the same bits for every element, so a candidate matches all of
// them exactly when it matches the AND of their bit arrays: such a group
// contributes one rate, (X_and/n)^k, not a product of dependent ones.
// Groups with different parameters are independent and multiply
// (formula 5). The both-forms test applies to a group when allForms is set
// and every filter of the group holds public keys.
func (a *analysis) groupRates(constraints []int, allForms bool) []groupRate {
	type group struct {
		and  []byte
		k    uint32
		both bool
		one  int // the state, while the group has only one
	}
	var order []groupKey
	groups := map[groupKey]*group{}
	for _, s := range constraints {
		f := a.tl.States[s]
		if matchesAll(f) {
			continue
		}
		key := groupKey{f.Size(), f.HashFuncs(), f.Tweak()}
		g, ok := groups[key]
		if !ok {
			groups[key] = &group{k: f.HashFuncs(), both: allForms && a.pubKeysIn[s], one: s}
			order = append(order, key)
			continue
		}
		g.both = g.both && a.pubKeysIn[s]
		if g.and == nil {
			g.and = slices.Clone(a.tl.States[g.one].Bits())
		}
		for i, b := range f.Bits() {
			g.and[i] &= b
		}
	}
	rates := make([]groupRate, 0, len(order))
	for _, key := range order {
		g := groups[key]
		if g.and == nil {
			rates = append(rates, groupRate{rate: a.stateRate[g.one], both: g.both})
			continue
		}
		set := 0
		for _, b := range g.and {
			set += bits.OnesCount8(b)
		}
		r := math.Pow(float64(set)/float64(len(g.and)*bitsPerByte), float64(g.k))
		rates = append(rates, groupRate{rate: r, both: g.both})
	}
	return rates
}

// bitsPerByte converts filter sizes to bits.
const bitsPerByte = 8

// expectedFP returns the formula's false-positive count among candidates
// counted by forms (truth: the wallet's among them) that must survive
// every group: per form count F, non-members times the product over groups
// of f_g^F (both-forms test) or 1-(1-f_g)^F. Without the truth, members is
// spread over the universe of total candidates.
func (a *analysis) expectedFP(rates []groupRate, forms, truth []uint64, members, total float64) float64 {
	var e float64
	for nf := 1; nf < len(forms); nf++ {
		n := float64(forms[nf])
		if n == 0 {
			continue
		}
		nonMembers := n - float64(truth[nf])
		if !a.hasTruth && total > 0 {
			nonMembers = n * math.Max(0, 1-members/total)
		}
		rate := 1.0
		for _, r := range rates {
			if r.both {
				rate *= AllFormsRate(r.rate, nf)
			} else {
				rate *= AnyFormRate(r.rate, nf)
			}
		}
		e += rate * nonMembers
	}
	return e
}
