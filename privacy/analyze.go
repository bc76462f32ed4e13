package privacy

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/onpath"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
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
	// Behaviour runs the behaviour attack (behaviour.Analyze): what the
	// client's reload and request timing point at; needs a Chain.
	Behaviour bool `json:"behaviour"`
}

// AllAttacks returns every technique switched on.
func AllAttacks() Attacks {
	return Attacks{BothForms: true, Intersection: true, Graph: true, Saturation: true, Behaviour: true}
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
	Records []transcript.Record
	// Universe is the candidates the adversary tests.
	Universe element.Universe
	// UniverseSource says, in words, where the universe comes from (an
	// element file, a chain read up to a height, a synthetic universe);
	// the report repeats it beside its figures.
	UniverseSource string
	// Truth is the wallet's real elements, to score the attack (optional).
	Truth []element.Candidate
	// TruthOnChain also scans the Truth candidates the universe did not
	// contain, for synthetic universes that cannot contain the wallet.
	TruthOnChain bool
	// ServerRules are the relevance rules the serving peers apply, for
	// the stages that replay a server's filter over the chain
	// (saturation, behaviour): bip37.RulesCore (Bitcoin Core, bcoin,
	// the zero value) or bip37.RulesBtcd.
	ServerRules bip37.Rules
	// Chain is needed by the Graph, Saturation and Behaviour attacks.
	Chain   element.Chain
	Attacks Attacks
	// Workers bounds the scan's goroutines (0: GOMAXPROCS).
	Workers int
	// MaxHits bounds the candidates kept by the scan (0: scan.DefaultMaxHits).
	MaxHits int
	// SaturationEvery emits a saturation point every this many blocks
	// (0: every block); the last block of each replay always has one.
	SaturationEvery int32
	// MaxListed bounds Report.Final (0: DefaultMaxListed).
	MaxListed int
	// FPRate is the client's false-positive target, which the on-path
	// observer is assumed to know (0: filterpolicy.DefaultFPRate).
	FPRate float64
}

// FilterSummary describes one generation's filter as the adversary saw it
// last. Seq, its filterload's transcript record number, is the number a
// filter has everywhere (the table, the dashboard's "Filter #", the log,
// transcript.jsonl); Generation is its index in Report.Filters.
type FilterSummary struct {
	Generation  int     `json:"-"`
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
	// EstElementsCI is the 95 % interval of EstElements (normal, from its
	// standard error; nil when every bit is set).
	EstElementsCI *stats.Interval `json:"est_elements_ci,omitempty"`
	// FPRate is the filter's exact rate (X/n)^k: deterministic given
	// its bits.
	FPRate float64 `json:"fp_rate"`
	// Matched counts the candidates matching it through any form: a
	// count over the whole universe, deterministic given it.
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
	// UniverseSource is Input.UniverseSource: every expected figure of
	// the report assumes this universe (the candidates scanned).
	UniverseSource string `json:"universe_source,omitempty"`
	// Members counts the wallet's candidates in the universe.
	Members  uint64          `json:"members"`
	HasTruth bool            `json:"has_truth"`
	Attacks  Attacks         `json:"attacks"`
	Events   int             `json:"events"`
	Revealed int             `json:"revealed"`
	Filters  []FilterSummary `json:"filters"`
	// Reloads is the estimator attack: for every reload of one tweak
	// and hash count, the elements the observer estimates it added and
	// dropped (see ReloadEstimate).
	Reloads []replay.ReloadEstimate `json:"reloads"`
	Curves  []Curve                 `json:"curves"`
	// Final lists the last point's set of the last set stage (single,
	// both-forms, intersection or graph), truncated to MaxListed.
	Final          []Listed `json:"final"`
	FinalTruncated bool     `json:"final_truncated"`
	// Requests is what the getdata records show the serving peers (nil
	// for a transcript without them).
	Requests *RequestSummary `json:"requests,omitempty"`
	// OnPath is what an observer on the path of every connection read
	// from the same records (onPathOf): the filters sent over v1, the
	// sizes of those sent over v2.
	OnPath *onpath.Reading `json:"on_path,omitempty"`
	// Behaviour is the behaviour attack (Attacks.Behaviour), nil when
	// not run.
	Behaviour *behaviour.Report `json:"behaviour,omitempty"`
	// BIP158 is the leak of a BIP158 sync of the same wallet
	// (AnalyzeBlockRequests), set by the caller; nil without one.
	BIP158 *BlockRequestReport `json:"bip158,omitempty"`
	// Verdicts is how the report's verdicts were decided: every curve
	// point's comparison and every behaviour score, one family, each
	// with a power check, Holm-corrected together.
	Verdicts stats.Family `json:"verdicts"`
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
	tl       *replay.Timeline
	finalIdx map[int]int // scanned state index -> filter index in the scan
	// pubKeysIn[s] reports that state s evidently holds public keys: the
	// both-forms test applies to it.
	pubKeysIn []bool
	// stateRate[s] is state s's exact rate (X/n)^k.
	stateRate []float64
	res       *scan.Result
	hasTruth  bool
	revealed  *element.Set
	hitRev    []bool // hit is a revealed element
	graph     *linkGraph
	// joints caches the joint model of each set of constraint states.
	joints map[string]*jointEval
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
	if (in.Attacks.Graph || in.Attacks.Saturation || in.Attacks.Behaviour) && in.Chain == nil {
		return nil, fmt.Errorf("%w: the graph, saturation and behaviour attacks need a chain", ErrBadConfig)
	}
	tl, err := replay.Replay(in.Records)
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
		Universe:       a.res.Scanned,
		UniverseSource: in.UniverseSource,
		MultiForm:      a.res.Scanned - a.res.FormCounts[0] - a.res.FormCounts[1],
		Members:        a.res.Truth(),
		HasTruth:       a.hasTruth,
		Attacks:        in.Attacks,
		Events:         len(tl.Events),
		Requests:       SummarizeRequests(tl.Requests),
		Revealed:       a.revealed.Len(),
		Filters:        a.filterSummaries(),
		Reloads:        a.reloadEstimates(),
	}
	rep.OnPath = onPathOf(in, rep)
	var last setResult
	for _, st := range a.stages() {
		var c Curve
		c, last = a.curve(st)
		rep.Curves = append(rep.Curves, c)
	}
	rep.Final, rep.FinalTruncated = a.listFinal(last.hits, last.extra)
	if in.Attacks.Saturation {
		c, err := a.saturation(ctx)
		if err != nil {
			return nil, err
		}
		rep.Curves = append(rep.Curves, c)
	}
	if in.Attacks.Behaviour {
		opts := behaviour.Options{Rules: in.ServerRules, Limit: in.MaxListed}
		if rep.Behaviour, err = behaviour.Analyze(ctx, in.Records, in.Chain, in.Truth, opts); err != nil {
			return nil, err
		}
	}
	// Every comparison the report prints is one family: a power check
	// first, then Holm over those printed.
	tests := comparisonTests(rep.Curves)
	if rep.Behaviour != nil {
		tests = append(tests, behaviour.Tests(&rep.Behaviour.Reading)...)
	}
	rep.Verdicts = stats.DecideFamily(tests)
	if rep.Behaviour != nil {
		rep.Behaviour.Verdicts = rep.Verdicts
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
		if _, ok := a.finalIdx[s]; ok || replay.MatchesAll(a.tl.States[s]) {
			continue
		}
		a.finalIdx[s] = len(filters)
		filters = append(filters, a.tl.States[s])
	}
	cfg := scan.Config{Filters: filters, Workers: a.in.Workers, MaxHits: a.in.MaxHits}
	if a.hasTruth {
		cfg.Truth = element.NewSetFromCandidates(a.in.Truth)
	}
	res, err := scan.Run(ctx, a.in.Universe, cfg)
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
		var extra element.SliceUniverse
		for _, c := range a.in.Truth {
			if len(c.Forms) > 0 && !seen[c.Key()] {
				seen[c.Key()] = true
				extra = append(extra, c)
			}
		}
		more, err := scan.Run(ctx, element.Stream(extra), cfg)
		if err != nil {
			return fmt.Errorf("scan truth: %w", err)
		}
		res = res.Merge(more)
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
	a.stateRate = make([]float64, len(a.tl.States))
	for s, f := range a.tl.States {
		rate := f.CurrentFPRate()
		a.stateRate[s] = rate
		var chance float64
		for forms := 2; forms < len(a.res.FormCounts); forms++ {
			chance += stats.AllFormsRate(rate, forms) * float64(a.res.FormCounts[forms])
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
		h.Any, h.All = scan.NewBitset(n), scan.NewBitset(n)
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

// markRevealed collects the filteradd elements and flags the hits among
// them.
func (a *analysis) markRevealed() {
	var rev [][]byte
	for _, e := range a.tl.Events {
		if e.Revealed != nil {
			rev = append(rev, e.Revealed)
		}
	}
	a.revealed = element.NewSet(rev)
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
			BitsSet: f.BitsSet(), EstElements: f.EstimatedElements(), EstElementsCI: estElementsInterval(f),
			FPRate: f.CurrentFPRate(), Matched: a.res.Scanned,
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

// listFinal lists a final set, truncated. A set with members outside the
// hits (candidates no filter constrains) cannot be listed and is reported
// truncated.
func (a *analysis) listFinal(set []int32, extra uint64) ([]Listed, bool) {
	limit := a.in.MaxListed
	if limit <= 0 {
		limit = DefaultMaxListed
	}
	if extra > 0 {
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

// onPathOf runs the on-path observer over a report's records; the wallet
// size is the truth's when there is one.
func onPathOf(in Input, rep *Report) *onpath.Reading {
	o := onpath.NewObserver(in.FPRate)
	for _, r := range in.Records {
		o.Observe(r)
	}
	rd := o.Reading(rep.Universe, rep.HasTruth, int(rep.Members), 0)
	return &rd
}

// comparisonTests returns the family tests of the curves' points that
// ask for a comparison (Point.score with compare).
func comparisonTests(curves []Curve) []stats.Test {
	var out []stats.Test
	for c := range curves {
		for i := range curves[c].Points {
			p := &curves[c].Points[i]
			if !p.compare {
				continue
			}
			expected := p.ExpectedFP
			out = append(out, stats.Test{
				P:        p.ComparisonP,
				Power:    func(level float64) float64 { return stats.ComparisonPower(expected, 1-level) },
				MinPower: stats.MinComparisonPower,
				Decide: func(power float64, adj *float64) {
					p.ComparisonPower = power
					if adj == nil {
						p.Comparison = stats.ComparisonNoVerdict
						return
					}
					p.ComparisonPHolm = adj
					p.Comparison = stats.ComparisonInside
					if *adj < stats.FamilyAlpha {
						p.Comparison = stats.ComparisonOutside
					}
				},
			})
		}
	}
	return out
}
