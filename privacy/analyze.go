package privacy

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// Attacks switches the adversary's techniques beyond the single-filter
// test, which always runs.
type Attacks struct {
	// BothForms requires every known form of a candidate (pubkey AND
	// hash160) to match, for universes that carry public keys.
	BothForms bool `json:"both_forms"`
	// Intersection intersects the match sets of every independent filter
	// observed: reloads, restarts, resizes and colluding peers.
	Intersection bool `json:"intersection"`
	// Graph prunes the set to candidates linked by the transaction graph
	// (common-input ownership and change); needs a Chain.
	Graph bool `json:"graph"`
	// Saturation replays the server-side BLOOM_UPDATE_* updates over the
	// chain after each filterload; needs a Chain.
	Saturation bool `json:"saturation"`
}

// AllAttacks returns every technique switched on.
func AllAttacks() Attacks {
	return Attacks{BothForms: true, Intersection: true, Graph: true, Saturation: true}
}

// Analysis defaults.
const (
	// DefaultMaxListed bounds the final set listed in a Report.
	DefaultMaxListed = 1000
	// defaultSaturationEvery is one saturation point per block.
	defaultSaturationEvery = 1
)

// Input is everything the adversary has.
type Input struct {
	// Records is the transcript: every filterload, filteradd and
	// filterclear received, in order.
	Records []Record
	// Universe is the candidates the adversary tests.
	Universe Universe
	// Truth is the wallet's real elements, to score the attack (optional).
	Truth []Candidate
	// TruthOnChain also scans the Truth candidates the universe did not
	// contain, for synthetic universes that cannot contain the wallet.
	TruthOnChain bool
	// Chain is needed by the Graph and Saturation attacks.
	Chain   Chain
	Attacks Attacks
	// Workers bounds the scan's goroutines (0: GOMAXPROCS).
	Workers int
	// MaxHits bounds the candidates kept by the scan (0: DefaultMaxHits).
	MaxHits int
	// SaturationEvery emits a saturation point every this many blocks
	// (0: every block); the last block of each replay always has one.
	SaturationEvery int32
	// MaxListed bounds Report.Final (0: DefaultMaxListed).
	MaxListed int
}

// FilterSummary describes one generation's filter as the adversary saw it
// last.
type FilterSummary struct {
	Generation  int     `json:"generation"`
	Peer        string  `json:"peer"`
	Seq         uint64  `json:"seq"`
	Height      int32   `json:"height"`
	Reason      string  `json:"reason,omitempty"`
	Bytes       int     `json:"bytes"`
	HashFuncs   uint32  `json:"hash_funcs"`
	Tweak       uint32  `json:"tweak"`
	Flags       string  `json:"flags"`
	BitsSet     uint64  `json:"bits_set"`
	EstElements float64 `json:"est_elements"`
	FPRate      float64 `json:"fp_rate"`
	// Matched counts the candidates matching it through any form.
	Matched uint64 `json:"matched"`
}

// Listed is one candidate of the adversary's final set.
type Listed struct {
	Forms []string `json:"forms"`
	// Truth reports a wallet candidate (when the truth is known).
	Truth bool `json:"truth"`
	// Revealed reports a candidate sent in clear by filteradd.
	Revealed bool `json:"revealed"`
}

// Report is the analysis of one transcript.
type Report struct {
	// Universe counts the candidates scanned; MultiForm those with more
	// than one form (the both-forms test's universe).
	Universe  uint64 `json:"universe"`
	MultiForm uint64 `json:"multi_form"`
	// Members counts the wallet's candidates in the universe.
	Members  uint64          `json:"members"`
	HasTruth bool            `json:"has_truth"`
	Attacks  Attacks         `json:"attacks"`
	Events   int             `json:"events"`
	Revealed int             `json:"revealed"`
	Filters  []FilterSummary `json:"filters"`
	Curves   []Curve         `json:"curves"`
	// Final lists the last point's set of the last set stage (single,
	// both-forms, intersection or graph), truncated to MaxListed.
	Final          []Listed `json:"final"`
	FinalTruncated bool     `json:"final_truncated"`
}

// Curve returns the curve of stage, or nil.
func (r *Report) Curve(stage string) *Curve {
	for i := range r.Curves {
		if r.Curves[i].Stage == stage {
			return &r.Curves[i]
		}
	}
	return nil
}

// analysis is Analyze's working state.
type analysis struct {
	in       Input
	tl       *Timeline
	finalIdx map[int]int // scanned state index -> filter index in the scan
	// pubKeysIn[s] reports that state s evidently holds public keys: the
	// both-forms test applies to it.
	pubKeysIn []bool
	res       *ScanResult
	hasTruth  bool
	revealed  *ElementSet
	hitRev    []bool // hit is a revealed element
	graph     *linkGraph
}

// setStage describes a stacked set stage.
type setStage struct {
	name      string
	allForms  bool
	intersect bool
	graph     bool
}

// Analyze replays the transcript, scans the universe once against every
// filter state observed, and computes each enabled stage's collapse curve:
// one point per transcript event from the first filterload on (and one per
// block for saturation).
func Analyze(ctx context.Context, in Input) (*Report, error) {
	if in.Universe == nil {
		return nil, fmt.Errorf("%w: no universe", ErrBadConfig)
	}
	if (in.Attacks.Graph || in.Attacks.Saturation) && in.Chain == nil {
		return nil, fmt.Errorf("%w: the graph and saturation attacks need a chain", ErrBadConfig)
	}
	tl, err := Replay(in.Records)
	if err != nil {
		return nil, err
	}
	a := &analysis{in: in, tl: tl, hasTruth: len(in.Truth) > 0}
	if err := a.scan(ctx); err != nil {
		return nil, err
	}
	if a.res.Scanned == 0 {
		return nil, ErrEmptyUniverse
	}
	a.markRevealed()
	if in.Attacks.Graph {
		if a.graph, err = buildLinkGraph(ctx, in.Chain, a.res.Hits); err != nil {
			return nil, err
		}
	}
	rep := &Report{
		Universe:  a.res.Scanned,
		MultiForm: a.res.Scanned - a.res.FormCounts[0] - a.res.FormCounts[1],
		Members:   a.res.Truth(),
		HasTruth:  a.hasTruth,
		Attacks:   in.Attacks,
		Events:    len(tl.Events),
		Revealed:  a.revealed.Len(),
		Filters:   a.filterSummaries(),
	}
	var last []int32
	var lastAll bool
	for _, st := range a.stages() {
		c, set, all := a.curve(st)
		rep.Curves = append(rep.Curves, c)
		last, lastAll = set, all
	}
	rep.Final, rep.FinalTruncated = a.listFinal(last, lastAll)
	if in.Attacks.Saturation {
		c, err := a.saturation(ctx)
		if err != nil {
			return nil, err
		}
		rep.Curves = append(rep.Curves, c)
	}
	return rep, nil
}

// stages returns the enabled set stages, stacked.
func (a *analysis) stages() []setStage {
	at := a.in.Attacks
	out := []setStage{{name: StageSingle}}
	if at.BothForms {
		out = append(out, setStage{name: StageBothForms, allForms: true})
	}
	if at.Intersection {
		out = append(out, setStage{name: StageIntersection, allForms: at.BothForms, intersect: true})
	}
	if at.Graph {
		out = append(out, setStage{name: StageGraph, allForms: at.BothForms, intersect: at.Intersection, graph: true})
	}
	return out
}

// scan runs the universe (and the off-chain truth) through the filters.
//
// Only the final state of each generation is scanned: within a generation
// filteradd only sets bits, and a candidate that misses a filter misses
// every filter whose bits are a subset of it, so a candidate missing every
// final state misses every state. The hits, few by construction, are then
// tested against every state, and their masks are re-indexed by state.
func (a *analysis) scan(ctx context.Context) error {
	var filters []*bip37.Filter
	a.finalIdx = map[int]int{}
	for _, g := range a.tl.Generations {
		s := g.Latest
		if _, ok := a.finalIdx[s]; ok || matchesAll(a.tl.States[s]) {
			continue
		}
		a.finalIdx[s] = len(filters)
		filters = append(filters, a.tl.States[s])
	}
	cfg := ScanConfig{Filters: filters, Workers: a.in.Workers, MaxHits: a.in.MaxHits}
	if a.hasTruth {
		cfg.Truth = NewElementSetFromCandidates(a.in.Truth)
	}
	res, err := Scan(ctx, a.in.Universe, cfg)
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	if a.hasTruth && a.in.TruthOnChain {
		seen := map[string]bool{}
		for _, h := range res.Hits {
			if h.Truth {
				seen[h.Candidate.Key()] = true
			}
		}
		var extra SliceUniverse
		for _, c := range a.in.Truth {
			if len(c.Forms) > 0 && !seen[c.Key()] {
				seen[c.Key()] = true
				extra = append(extra, c)
			}
		}
		more, err := Scan(ctx, Stream(extra), cfg)
		if err != nil {
			return fmt.Errorf("scan truth: %w", err)
		}
		res = mergeResults(res, more)
	}
	a.res = res
	a.remask()
	a.detectPubKeys()
	return nil
}

// pubKeyEvidenceSigmas is how far above chance the number of candidates
// matching a filter through every form must be before the adversary
// concludes the filter holds public keys as well as hashes.
const pubKeyEvidenceSigmas = 5

// detectPubKeys decides, for each state, whether the both-forms test
// applies. Requiring a candidate's public key to match as well as its
// hash160 only helps against a wallet that inserts both; against one that
// inserts hashes only it would drop the wallet's own spent-from addresses.
// The adversary tells them apart from the filter alone: by chance,
// sum_F f^F * count(F forms) multi-form candidates match through every
// form; a wallet that inserts both forms adds its own spent-from keys on
// top. The test applies when the observed count exceeds chance by
// pubKeyEvidenceSigmas Poisson deviations plus one.
func (a *analysis) detectPubKeys() {
	a.pubKeysIn = make([]bool, len(a.tl.States))
	for s, f := range a.tl.States {
		rate := f.CurrentFPRate()
		var chance float64
		for forms := 2; forms < len(a.res.FormCounts); forms++ {
			chance += AllFormsRate(rate, forms) * float64(a.res.FormCounts[forms])
		}
		var observed float64
		for _, h := range a.res.Hits {
			if len(h.Candidate.Forms) > 1 && h.All.Has(s) {
				observed++
			}
		}
		a.pubKeysIn[s] = observed > chance+pubKeyEvidenceSigmas*math.Sqrt(chance)+1
	}
}

// remask replaces every hit's masks, indexed by scanned filter, with masks
// indexed by state, testing each hit against every state.
func (a *analysis) remask() {
	n := len(a.tl.States)
	for i := range a.res.Hits {
		h := &a.res.Hits[i]
		h.Any, h.All = NewBitset(n), NewBitset(n)
		for s, f := range a.tl.States {
			matchedAny, matchedAll := false, len(h.Candidate.Forms) > 0
			for _, form := range h.Candidate.Forms {
				if f.Matches(form) {
					matchedAny = true
				} else {
					matchedAll = false
				}
			}
			if matchedAny {
				h.Any.Set(s)
			}
			if matchedAll {
				h.All.Set(s)
			}
		}
	}
}

// mergeResults adds b's counts and hits to a.
func mergeResults(a, b *ScanResult) *ScanResult {
	a.Scanned += b.Scanned
	addCounts(a.FormCounts, b.FormCounts)
	addCounts(a.TruthCounts, b.TruthCounts)
	addCounts(a.AnyCounts, b.AnyCounts)
	addCounts(a.AllCounts, b.AllCounts)
	a.Hits = append(a.Hits, b.Hits...)
	slices.SortFunc(a.Hits, func(x, y Hit) int {
		return compareStrings(x.Candidate.Key(), y.Candidate.Key())
	})
	return a
}

// compareStrings orders strings bytewise.
func compareStrings(x, y string) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// markRevealed collects the filteradd elements and flags the hits among
// them.
func (a *analysis) markRevealed() {
	var rev [][]byte
	for _, e := range a.tl.Events {
		if e.Revealed != nil {
			rev = append(rev, e.Revealed)
		}
	}
	a.revealed = NewElementSet(rev)
	a.hitRev = make([]bool, len(a.res.Hits))
	for i, h := range a.res.Hits {
		a.hitRev[i] = a.revealed.ContainsAny(h.Candidate)
	}
}

// filterSummaries describes each generation's last state.
func (a *analysis) filterSummaries() []FilterSummary {
	out := make([]FilterSummary, len(a.tl.Generations))
	for i, g := range a.tl.Generations {
		f := a.tl.States[g.Latest]
		r := a.tl.Events[g.Load].Record
		fs := FilterSummary{
			Generation: i, Peer: g.Peer, Seq: r.Seq, Height: r.Height, Reason: r.Reason,
			Bytes: f.Size(), HashFuncs: f.HashFuncs(), Tweak: f.Tweak(), Flags: f.Flags().String(),
			BitsSet: f.BitsSet(), EstElements: f.EstimatedElements(), FPRate: f.CurrentFPRate(),
			Matched: a.res.Scanned,
		}
		if j, ok := a.finalIdx[g.Latest]; ok {
			fs.Matched = a.res.AnyCounts[j]
		}
		if math.IsInf(fs.EstElements, 0) || math.IsNaN(fs.EstElements) {
			fs.EstElements = -1
		}
		out[i] = fs
	}
	return out
}

// view is the adversary's knowledge after one event: the latest filter
// state and the latest state of every generation so far.
type view struct {
	event  Event
	latest int
	gens   []int // distinct states, in order of first appearance
}

// views returns the view after every event from the first filter state on.
func (a *analysis) views() []view {
	var out []view
	latest := -1
	var genLatest []int
	for _, e := range a.tl.Events {
		if e.Generation >= len(genLatest) {
			genLatest = append(genLatest, make([]int, e.Generation+1-len(genLatest))...)
		}
		if e.State >= 0 {
			latest = e.State
			if e.Generation >= 0 {
				genLatest[e.Generation] = e.State
			}
		}
		if latest < 0 {
			continue
		}
		var gens []int
		for _, s := range genLatest {
			if !slices.Contains(gens, s) {
				gens = append(gens, s)
			}
		}
		out = append(out, view{event: e, latest: latest, gens: gens})
	}
	return out
}

// curve computes one set stage's points and returns its final set (hit
// indexes) and whether that set is the whole universe.
func (a *analysis) curve(st setStage) (Curve, []int32, bool) {
	c := Curve{Stage: st.name}
	var set []int32
	var all bool
	revealedSoFar := map[string]bool{}
	for step, v := range a.views() {
		if v.event.Revealed != nil {
			revealedSoFar[string(v.event.Revealed)] = true
		}
		constraints := []int{v.latest}
		if st.intersect {
			constraints = v.gens
		}
		set, all = a.evaluate(constraints, st.allForms)
		if st.graph && !all {
			set = a.graph.prune(set, a.hitRev)
		}
		p := a.point(step, v, constraints, st.allForms, set, all)
		p.Revealed = len(revealedSoFar)
		c.Points = append(c.Points, p)
	}
	return c, set, all
}

// evaluate returns the hits that match every constraint state (through
// every form when allForms and the state holds public keys). all is true when no constraint excludes
// anything (every state matches everything): the set is the universe.
func (a *analysis) evaluate(constraints []int, allForms bool) (set []int32, all bool) {
	var idx []int
	for _, s := range constraints {
		if !matchesAll(a.tl.States[s]) {
			idx = append(idx, s)
		}
	}
	if len(idx) == 0 {
		return nil, true
	}
	for i, h := range a.res.Hits {
		ok := true
		for _, j := range idx {
			mask := h.Any
			if allForms && a.pubKeysIn[j] {
				mask = h.All
			}
			if !mask.Has(j) {
				ok = false
				break
			}
		}
		if ok {
			set = append(set, int32(i))
		}
	}
	return set, false
}

// point measures a set and computes the formulas for it.
func (a *analysis) point(step int, v view, constraints []int, allForms bool, set []int32, all bool) Point {
	r := v.event.Record
	latest := a.tl.States[v.latest]
	p := Point{
		Step: step, Kind: r.Kind, Label: eventLabel(v.event), Seq: r.Seq, Height: r.Height, Peer: r.Peer,
		Filters: len(constraints), EstElements: latest.EstimatedElements(),
	}
	if all {
		p.Matched = a.res.Scanned
		p.TruePositives = a.res.Truth()
	} else {
		p.Matched = uint64(len(set))
		for _, i := range set {
			if a.res.Hits[i].Truth {
				p.TruePositives++
			}
		}
	}
	if !a.hasTruth {
		p.TruePositives = 0
	}
	members := float64(a.res.Truth())
	if !a.hasTruth {
		members = math.Min(float64(p.Matched), p.EstElements)
		if math.IsNaN(members) {
			members = float64(p.Matched)
		}
	}
	p.Members = members
	rates := a.groupRates(constraints, allForms)
	p.FPRate = 1
	for _, r := range rates {
		p.FPRate *= r.rate
	}
	p.ExpectedFP = a.expectedFP(rates, members)
	p.ExpectedPrecision = Precision(members, p.ExpectedFP)
	p.ExpectedEntropy = Entropy(members, p.ExpectedFP)
	if a.hasTruth {
		p.FalsePositives = p.Matched - p.TruePositives
		p.Precision = Precision(float64(p.TruePositives), float64(p.FalsePositives))
		p.Recall = Recall(float64(p.TruePositives), members)
		p.Entropy = Entropy(float64(p.TruePositives), float64(p.FalsePositives))
	}
	if math.IsInf(p.EstElements, 0) || math.IsNaN(p.EstElements) {
		p.EstElements = -1
	}
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
			groups[key] = &group{and: slices.Clone(f.Bits()), k: f.HashFuncs(), both: allForms && a.pubKeysIn[s]}
			order = append(order, key)
			continue
		}
		g.both = g.both && a.pubKeysIn[s]
		for i, b := range f.Bits() {
			g.and[i] &= b
		}
	}
	rates := make([]groupRate, 0, len(order))
	for _, key := range order {
		g := groups[key]
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

// expectedFP returns the formula's false-positive count for candidates
// surviving every group: per form count F, non-members times the product
// over groups of f_g^F (both-forms test) or 1-(1-f_g)^F.
func (a *analysis) expectedFP(rates []groupRate, members float64) float64 {
	total := float64(a.res.Scanned)
	var e float64
	for forms := 1; forms < len(a.res.FormCounts); forms++ {
		n := float64(a.res.FormCounts[forms])
		if n == 0 {
			continue
		}
		nonMembers := n - float64(a.res.TruthCounts[forms])
		if !a.hasTruth && total > 0 {
			nonMembers = n * math.Max(0, 1-members/total)
		}
		rate := 1.0
		for _, r := range rates {
			if r.both {
				rate *= AllFormsRate(r.rate, forms)
			} else {
				rate *= AnyFormRate(r.rate, forms)
			}
		}
		e += rate * nonMembers
	}
	return e
}

// listFinal lists a final set, truncated.
func (a *analysis) listFinal(set []int32, all bool) ([]Listed, bool) {
	limit := a.in.MaxListed
	if limit <= 0 {
		limit = DefaultMaxListed
	}
	if all {
		return nil, true
	}
	var out []Listed
	for _, i := range set {
		if len(out) == limit {
			return out, true
		}
		h := a.res.Hits[i]
		l := Listed{Truth: h.Truth, Revealed: a.hitRev[i]}
		for _, f := range h.Candidate.Forms {
			l.Forms = append(l.Forms, hex.EncodeToString(f))
		}
		out = append(out, l)
	}
	return out, false
}
