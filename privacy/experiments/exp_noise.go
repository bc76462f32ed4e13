package experiments

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// The noise experiment: decoys in the filter (random
// ones persisted or drawn fresh per filter, and graph-near ones persisted,
// noise.go) beside a looser target rate, one form per key, a persisted
// tweak, per-peer sharding and Tor-style unlinkable sessions, each
// measured on the same population against the single-filter,
// intersection, linking and graph attacks, with the bandwidth it costs.
// (RAPPOR's own responses on BIP37 filters are experiment rappor.) The
// decision rule of the issue: a noise policy is worth offering only if it
// leaves the adversary a lower precision after graph pruning than a
// looser target rate of equal bandwidth does: a paired test per wallet.
const (
	noiseWallets = 25
	noiseBlocks  = 300
	noiseShards  = 2
)

// noiseCounts are the decoy counts of each noise family.
var noiseCounts = []int{3, 10, 30}

// looseRates are the target rates of the looser-rate family (bloomwatch's
// policy; 1e-4 is its default).
var looseRates = []float64{1e-4, 1e-3, 3e-3, 1e-2, 3e-2}

// Families of noise variants.
const (
	familyLoose   = "looser target rate"
	familyBitcoin = "bitcoinj-like"
	familyOther   = "other mitigations"
)

// adversaryView is how much of a wallet's transcripts the adversary holds.
type adversaryView int

const (
	// viewAll: every session, linked (one peer, or colluding peers that
	// link by address or tweak).
	viewAll adversaryView = iota
	// viewOnePeer: the first peer's records only (a sharded wallet's
	// other peers do not collude).
	viewOnePeer
	// viewSession: one session at a time (Tor-style unlinkability: the
	// adversary cannot tell two sessions are one wallet).
	viewSession
)

// noiseVariant is one client policy and adversary view.
type noiseVariant struct {
	name   string
	family string
	kind   WalletKind
	opts   ClientOptions
	noise  NoiseKind
	count  int
	view   adversaryView
}

// walletOutcome is one wallet's figures under one variant: sums and
// counts of its analyses' precisions (one analysis, or one per session
// when sessions are unlinkable).
type walletOutcome struct {
	single, inter, graph, recall [2]float64 // sum, analyses
	linked, pairs                int
	fpTxs, blocks                int
	// rate sums the rates as loaded, (X/n)^k, of the wallet's first
	// filters, one per session.
	rate, sessions float64
	// empty counts the analyses whose stage left an empty set (no
	// precision).
	emptyGraph int
}

// noiseOutcome is one variant's measurements, per wallet.
type noiseOutcome struct {
	wallets []walletOutcome
}

// addPrecision adds a point's precision, or counts an empty set.
func addPrecision(acc *[2]float64, empty *int, p privacy.Point) {
	if p.Matched == 0 {
		if empty != nil {
			*empty++
		}
		return
	}
	acc[0] += p.Precision
	acc[1]++
}

// bandwidth returns the variant's false-positive transactions per 1,000
// blocks, pooled.
func (o noiseOutcome) bandwidth() float64 {
	var fp, blocks int
	for _, w := range o.wallets {
		fp, blocks = fp+w.fpTxs, blocks+w.blocks
	}
	return 1000 * float64(fp) / float64(max(blocks, 1))
}

// perWallet returns, for a stage, each wallet's mean precision and 1 (or
// nothing for a wallet whose analyses all left an empty set).
func (o noiseOutcome) perWallet(get func(walletOutcome) [2]float64) (num, den []float64) {
	for _, w := range o.wallets {
		if v := get(w); v[1] > 0 {
			num, den = append(num, v[0]/v[1]), append(den, 1)
		}
	}
	return num, den
}

// meanOf returns a stage's mean over wallets.
func (o noiseOutcome) meanOf(get func(walletOutcome) [2]float64) float64 {
	num, den := o.perWallet(get)
	return sumOf(num) / math.Max(1, sumOf(den))
}

// noiseVariants lists the variants.
func noiseVariants(rate float64) []noiseVariant {
	var out []noiseVariant
	for _, r := range looseRates {
		out = append(out, noiseVariant{name: fmt.Sprintf("bloomwatch at %g", r), family: familyLoose, kind: KindBloomwatch, opts: ClientOptions{FPRate: r}})
	}
	for _, nk := range []NoiseKind{NoisePersistedRandom, NoiseFreshRandom, NoisePersistedNear} {
		for _, n := range noiseCounts {
			out = append(out, noiseVariant{name: fmt.Sprintf("%s, %d", nk, n), family: nk.String(), kind: KindBloomwatch,
				opts: ClientOptions{FPRate: rate}, noise: nk, count: n})
		}
	}
	out = append(out,
		noiseVariant{name: "bloomwatch sharded over 2 peers, one peer's view", family: familyOther, kind: KindBloomwatch,
			opts: ClientOptions{FPRate: rate, Shards: noiseShards}, view: viewOnePeer},
		noiseVariant{name: "bloomwatch, sessions unlinkable (Tor-style)", family: familyOther, kind: KindBloomwatch,
			opts: ClientOptions{FPRate: rate}, view: viewSession},
		noiseVariant{name: "bitcoinj-like (fresh tweak per start, both forms)", family: familyBitcoin, kind: KindBitcoinj},
		noiseVariant{name: "bitcoinj-like, one form per key", family: familyBitcoin, kind: KindBitcoinj, opts: ClientOptions{OneForm: true}},
		noiseVariant{name: "bitcoinj-like, persisted tweak", family: familyBitcoin, kind: KindBitcoinj, opts: ClientOptions{PersistTweak: true}},
	)
	return out
}

// runNoise measures every variant.
func runNoise(ctx context.Context, cfg Config) (*Result, error) {
	rate := orDefault(cfg.FPRate, looseRates[0])
	pc := populationConfig(cfg)
	pc.WalletsPerKind = orDefault(cfg.Wallets, noiseWallets)
	pc.Blocks = orDefault(cfg.Blocks, noiseBlocks)
	pc.Kinds = []WalletKind{KindBloomwatch, KindBitcoinj}
	pop, err := NewPopulation(pc)
	if err != nil {
		return nil, err
	}
	universe := pop.OnChainCandidates()
	variants := noiseVariants(rate)
	out := &Result{
		Name:  "noise",
		Title: "decoy noise (persisted and fresh) vs a looser rate of equal bandwidth and other mitigations",
		Params: []Param{
			param("wallets_per_kind", pc.WalletsPerKind), param("blocks", len(pop.Chain)), param("universe", "the chain's keys"),
			param("candidates", len(universe)), param("noise_rate", rate),
		},
	}
	outcomes := make([]noiseOutcome, len(variants))
	for i, v := range variants {
		cfg.progress("variants", i, len(variants))
		o, err := runNoiseVariant(ctx, pop, universe, v, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		outcomes[i] = o
	}
	cfg.progress("variants", len(variants), len(variants))
	noiseRows(out, variants, outcomes)
	out.Charts = noiseCharts(variants, outcomes)
	return out, nil
}

// runNoiseVariant simulates the variant's clients and attacks each wallet.
func runNoiseVariant(ctx context.Context, pop *Population, universe element.SliceUniverse, v noiseVariant, cfg Config) (noiseOutcome, error) {
	opts := v.opts
	opts.Only = v.kind
	if v.noise != 0 {
		opts.Decoys = pop.DecoySource(v.noise, v.count, cfg.Seed)
	}
	sessions, err := pop.Simulate(opts)
	if err != nil {
		return noiseOutcome{}, err
	}
	byWallet := map[int][]*Session{}
	var order []int
	for _, s := range sessions {
		if byWallet[s.Wallet] == nil {
			order = append(order, s.Wallet)
		}
		byWallet[s.Wallet] = append(byWallet[s.Wallet], s)
	}
	view, err := Crawl(ctx, pop, sessions, 0, cfg.Seed, cfg.Workers)
	if err != nil {
		return noiseOutcome{}, err
	}
	groups := view.Link(sessions, view.Overlaps(sessions), LinkSignificant)
	index := map[*Session]int{}
	for i, s := range sessions {
		index[s] = i
	}
	var o noiseOutcome
	for _, w := range order {
		var wo walletOutcome
		ss := byWallet[w]
		for a := range ss {
			wo.fpTxs += ss[a].FPTxs
			wo.blocks += ss[a].Blocks
			if len(ss[a].Loads) > 0 {
				wo.rate += ss[a].Loads[0].Filter.CurrentFPRate()
				wo.sessions++
			}
			for b := a + 1; b < len(ss); b++ {
				wo.pairs++
				if groups[index[ss[a]]] == groups[index[ss[b]]] {
					wo.linked++
				}
			}
		}
		truth := walletTruth(pop, pop.Wallets[w])
		var views [][]transcript.Record
		switch v.view {
		case viewSession:
			for _, s := range ss {
				views = append(views, s.Records)
			}
		default:
			var recs []transcript.Record
			for _, s := range ss {
				for _, r := range s.Records {
					if v.view == viewOnePeer && r.Peer != popPeer {
						continue
					}
					r.Seq = uint64(len(recs))
					recs = append(recs, r)
				}
			}
			views = [][]transcript.Record{recs}
		}
		for _, recs := range views {
			rep, err := privacy.Analyze(ctx, privacy.Input{
				Records: recs, Universe: element.Stream(universe), Truth: truth, Chain: pop.Chain, Workers: cfg.Workers,
				Attacks: privacy.Attacks{BothForms: v.kind == KindBitcoinj, Intersection: true, Graph: true},
			})
			if err != nil {
				return o, err
			}
			last := func(stage string) privacy.Point {
				c := rep.Curve(stage)
				return c.Points[len(c.Points)-1]
			}
			single := last(privacy.StageSingle)
			if v.kind == KindBitcoinj {
				single = last(privacy.StageBothForms)
			}
			// A stage that leaves an empty set has no precision: it
			// is counted apart, not averaged as 0.
			addPrecision(&wo.single, nil, single)
			addPrecision(&wo.inter, nil, last(privacy.StageIntersection))
			g := last(privacy.StageGraph)
			addPrecision(&wo.graph, &wo.emptyGraph, g)
			wo.recall[0] += g.Recall
			wo.recall[1]++
		}
		o.wallets = append(o.wallets, wo)
	}
	return o, nil
}

// walletTruth returns the wallet's keys paid on chain as candidates.
func walletTruth(pop *Population, w *PopWallet) []element.Candidate {
	var out []element.Candidate
	for i, id := range w.KeyIDs {
		if id >= 0 {
			out = append(out, element.Candidate{Forms: [][]byte{w.Keys[i].Hash160}})
		}
	}
	return out
}

// Stage getters of a wallet's outcome.
var (
	getSingle = func(w walletOutcome) [2]float64 { return w.single }
	getInter  = func(w walletOutcome) [2]float64 { return w.inter }
	getGraph  = func(w walletOutcome) [2]float64 { return w.graph }
	getRecall = func(w walletOutcome) [2]float64 { return w.recall }
)

// noiseUnit names the clusters of the noise experiment's intervals.
const noiseUnit = "wallets"

// noiseRows writes each variant's figures and the equal-bandwidth
// comparison with the looser-rate family.
func noiseRows(out *Result, variants []noiseVariant, outcomes []noiseOutcome) {
	for i, v := range variants {
		o := outcomes[i]
		pre := v.name + ": "
		var fp, kblocks, linked, pairs, rate, sessions []float64
		emptyGraph := 0
		for _, w := range o.wallets {
			rate, sessions = append(rate, w.rate), append(sessions, w.sessions)
			fp, kblocks = append(fp, float64(w.fpTxs)), append(kblocks, float64(w.blocks)/1000)
			linked, pairs = append(linked, float64(w.linked)), append(pairs, float64(w.pairs))
			emptyGraph += w.emptyGraph
		}
		stage := func(q string, get func(walletOutcome) [2]float64) Comparison {
			num, den := o.perWallet(get)
			return clusterPropRow(pre+q, num, den, noiseUnit)
		}
		out.Rows = append(out.Rows,
			clusterMeanRow(pre+"rate as loaded (X/n)^k of each session's first filter (mean)", rate, sessions, false, noiseUnit).
				withNote("beside the policy's target: bloomwatch sizes for twice its elements, rounded up to a power of two"),
			clusterMeanRow(pre+"bandwidth, false-positive transactions per 1,000 blocks", fp, kblocks, true, noiseUnit).
				withNote("decoys' own transactions included"),
			stage("precision, latest filter alone (mean over wallets)", getSingle),
			stage("precision, intersection of every filter seen (mean over wallets)", getInter),
			clusterPropRow(pre+"sessions of one wallet linked by significant overlap", linked, pairs, noiseUnit),
			stage("precision after intersection and graph pruning (mean over wallets)", getGraph).
				withNote(fmt.Sprintf("%d analyses left an empty set (no precision)", emptyGraph)),
			stage("recall after intersection and graph pruning (mean over wallets)", getRecall),
		)
	}
	// The decision: each noise point against the looser-rate family at
	// the same bandwidth (linear interpolation between its two nearest
	// points), wallet by wallet (the same wallets play every variant).
	var loose []int
	var lb []float64
	for i, v := range variants {
		if v.family == familyLoose {
			loose, lb = append(loose, i), append(lb, outcomes[i].bandwidth())
		}
	}
	for i, v := range variants {
		if v.noise == 0 {
			continue
		}
		bw := outcomes[i].bandwidth()
		a, b, t, ok := bracket(lb, bw)
		q := v.name + ": precision after graph pruning minus a looser rate's of equal bandwidth (paired by wallet)"
		if !ok {
			out.Rows = append(out.Rows, Comparison{Quantity: q, Measured: math.NaN(), IntervalKind: KindComputed,
				Display: "no looser rate measured at this bandwidth"})
			continue
		}
		oa, ob := outcomes[loose[a]], outcomes[loose[b]]
		var pn, pl []float64
		var ref float64
		for w := range outcomes[i].wallets {
			p, pa, pb := outcomes[i].wallets[w].graph, oa.wallets[w].graph, ob.wallets[w].graph
			if p[1] == 0 || pa[1] == 0 || pb[1] == 0 {
				continue
			}
			l := (1-t)*pa[0]/pa[1] + t*pb[0]/pb[1]
			pn, pl = append(pn, p[0]/p[1]), append(pl, l)
			ref += l
		}
		ref /= math.Max(1, float64(len(pl)))
		row := diffRow(q, pn, pl, noiseUnit).withFormula(0).
			testLabeled("a looser rate of equal bandwidth", altDiff(0.1)).
			withNote(fmt.Sprintf("bandwidth %.3g; the looser rate interpolated between %s and %s leaves %.3g; negative: the noise leaves the adversary less",
				bw, variants[loose[a]].name, variants[loose[b]].name, ref))
		out.Rows = append(out.Rows, row)
	}
}

// bracket finds the two points of xs (any order) around x: indexes a and
// b (xs[a] <= x <= xs[b]) and x's position t between them, false when x
// is outside their range.
func bracket(xs []float64, x float64) (a, b int, t float64, ok bool) {
	a, b = -1, -1
	for i, v := range xs {
		if v <= x && (a < 0 || v > xs[a]) {
			a = i
		}
		if v >= x && (b < 0 || v < xs[b]) {
			b = i
		}
	}
	if a < 0 || b < 0 {
		return 0, 0, 0, false
	}
	if xs[b] > xs[a] {
		t = (x - xs[a]) / (xs[b] - xs[a])
	}
	return a, b, t, true
}

// noiseCharts draws precision after graph pruning against bandwidth, one
// colour per family, and the attacks' precision per variant.
func noiseCharts(variants []noiseVariant, outcomes []noiseOutcome) []privacy.Chart {
	families := []string{familyLoose}
	for _, nk := range []NoiseKind{NoisePersistedRandom, NoiseFreshRandom, NoisePersistedNear} {
		families = append(families, nk.String())
	}
	eq := privacy.Chart{
		LogX:   true,
		Title:  "precision left after intersection and graph pruning vs bandwidth (measured here)",
		XLabel: "false-positive transactions per 1,000 blocks (this chain: 40 background txs per block)",
		YLabel: "adversary's precision", Notes: []string{"lower is better for the wallet; decoy counts 3, 10, 30 per wallet; looser rates 1e-4 to 0.03; 95 % intervals over wallets"},
	}
	for _, fam := range families {
		s := privacy.Series{Name: fam, Points: true, Group: fam}
		for i, v := range variants {
			if v.family != fam {
				continue
			}
			num, den := outcomes[i].perWallet(getGraph)
			r := clusterPropRow(v.name, num, den, noiseUnit)
			if r.Interval == nil {
				continue
			}
			s.X, s.Y = append(s.X, outcomes[i].bandwidth()), append(s.Y, r.Measured)
			s.YLo, s.YHi = append(s.YLo, r.Interval[0]), append(s.YHi, r.Interval[1])
		}
		eq.Series = append(eq.Series, s)
	}
	attacks := privacy.Chart{Title: "adversary's precision after each attack, per policy (measured here)", YLabel: "precision"}
	var xs []int
	for i, v := range variants {
		if v.family == familyLoose && i > 0 {
			continue
		}
		attacks.XTicks = append(attacks.XTicks, privacy.Tick{Value: float64(len(xs)), Label: shortName(v.name)})
		xs = append(xs, i)
	}
	for k, a := range []struct {
		name string
		get  func(walletOutcome) [2]float64
	}{
		{"latest filter alone", getSingle},
		{"intersection", getInter},
		{"intersection + graph", getGraph},
	} {
		s := privacy.Series{Name: a.name, Points: true}
		for j, vi := range xs {
			num, den := outcomes[vi].perWallet(a.get)
			r := clusterPropRow(a.name, num, den, noiseUnit)
			if r.Interval == nil {
				continue
			}
			s.X, s.Y = append(s.X, float64(j)+0.15*float64(k-1)), append(s.Y, r.Measured)
			s.YLo, s.YHi = append(s.YLo, r.Interval[0]), append(s.YHi, r.Interval[1])
		}
		attacks.Series = append(attacks.Series, s)
	}
	return []privacy.Chart{eq, attacks}
}

// shortName abbreviates a variant name for an axis label.
func shortName(s string) string {
	r := strings.NewReplacer("persisted random decoys", "persist. random", "fresh random decoys per filter", "fresh random",
		"persisted graph-near decoys", "graph-near", "bloomwatch sharded over 2 peers, one peer's view", "sharded, 1 of 2 peers",
		"bloomwatch, sessions unlinkable (Tor-style)", "unlinkable sessions", "bitcoinj-like (fresh tweak per start, both forms)", "bitcoinj-like",
		"bitcoinj-like, one form per key", "bitcoinj 1 form", "bitcoinj-like, persisted tweak", "bitcoinj persist. tweak",
		"bloomwatch at 0.0001", "bloomwatch 1e-4")
	return r.Replace(s)
}
