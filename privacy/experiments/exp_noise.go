package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// The noise experiment (issue 20, item 3): RAPPOR's two kinds of noise as
// BIP37 allows them (noise.go), beside a looser target rate, graph-near
// decoys, one form per key, a persisted tweak, per-peer sharding and
// Tor-style unlinkable sessions, each measured on the same population
// against the single-filter, intersection, linking and graph attacks,
// with the bandwidth it costs. The decision rule of the issue: a noise
// policy is worth offering only if it leaves the adversary a lower
// precision after graph pruning than a looser target rate of equal
// bandwidth does.
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

// noiseOutcome is one variant's measurements, per wallet.
type noiseOutcome struct {
	bandwidth                   float64 // FP txs per 1,000 blocks
	single, inter, graph, recal []float64
	linked, pairs               int
	// emptyX counts the analyses whose stage X left an empty set.
	emptySingle, emptyInter, emptyGraph int
}

// addPrecision appends a point's precision, or counts an empty set.
func addPrecision(vals *[]float64, empty *int, p privacy.Point) {
	if p.Matched == 0 {
		*empty++
		return
	}
	*vals = append(*vals, p.Precision)
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
		Title: "noise (RAPPOR's permanent and instantaneous responses as BIP37 allows them) vs other mitigations, at equal bandwidth",
		Params: []Param{
			param("wallets_per_kind", pc.WalletsPerKind), param("blocks", len(pop.Chain)), param("universe", "the chain's keys"),
			param("candidates", len(universe)), param("noise_rate", rate), param("seed", cfg.Seed),
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
func runNoiseVariant(ctx context.Context, pop *Population, universe privacy.SliceUniverse, v noiseVariant, cfg Config) (noiseOutcome, error) {
	opts := v.opts
	opts.Only = v.kind
	if v.noise != 0 {
		opts.Decoys = pop.DecoySource(v.noise, v.count, cfg.Seed)
	}
	sessions, err := pop.Simulate(opts)
	if err != nil {
		return noiseOutcome{}, err
	}
	var o noiseOutcome
	var fp, blocks int
	byWallet := map[int][]*Session{}
	var order []int
	for _, s := range sessions {
		fp += s.FPTxs
		blocks += s.Blocks
		if byWallet[s.Wallet] == nil {
			order = append(order, s.Wallet)
		}
		byWallet[s.Wallet] = append(byWallet[s.Wallet], s)
	}
	o.bandwidth = 1000 * float64(fp) / float64(max(blocks, 1))
	view, err := Crawl(ctx, pop, sessions, 0, cfg.Seed, cfg.Workers)
	if err != nil {
		return o, err
	}
	groups := view.Link(sessions, view.Overlaps(sessions), LinkSignificant)
	for a := range sessions {
		for b := a + 1; b < len(sessions); b++ {
			if sessions[a].Wallet == sessions[b].Wallet {
				o.pairs++
				if groups[a] == groups[b] {
					o.linked++
				}
			}
		}
	}
	for _, w := range order {
		truth := walletTruth(pop, pop.Wallets[w])
		var views [][]transcript.Record
		switch v.view {
		case viewSession:
			for _, s := range byWallet[w] {
				views = append(views, s.Records)
			}
		default:
			var recs []transcript.Record
			for _, s := range byWallet[w] {
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
				Records: recs, Universe: privacy.Stream(universe), Truth: truth, Chain: pop.Chain, Workers: cfg.Workers,
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
			addPrecision(&o.single, &o.emptySingle, single)
			addPrecision(&o.inter, &o.emptyInter, last(privacy.StageIntersection))
			g := last(privacy.StageGraph)
			addPrecision(&o.graph, &o.emptyGraph, g)
			o.recal = append(o.recal, g.Recall)
		}
	}
	return o, nil
}

// walletTruth returns the wallet's keys paid on chain as candidates.
func walletTruth(pop *Population, w *PopWallet) []privacy.Candidate {
	var out []privacy.Candidate
	for i, id := range w.KeyIDs {
		if id >= 0 {
			out = append(out, privacy.Candidate{Forms: [][]byte{w.Keys[i].Hash160}})
		}
	}
	return out
}

// noiseRows writes each variant's figures and the equal-bandwidth
// comparison with the looser-rate family.
func noiseRows(out *Result, variants []noiseVariant, outcomes []noiseOutcome) {
	for i, v := range variants {
		o := outcomes[i]
		pre := v.name + ": "
		l, h := WilsonInterval(o.linked, o.pairs, Z95)
		out.Rows = append(out.Rows,
			measuredOnly(pre+"bandwidth, false-positive transactions per 1,000 blocks", o.bandwidth, nil, "").
				withNote("decoys' own transactions included"),
			meanRowOf(pre+"precision, latest filter alone", o.single),
			meanRowOf(pre+"precision, intersection of every filter seen", o.inter),
			measuredOnly(pre+"sessions of one wallet linked by significant overlap", ratio(o.linked, o.pairs), nil, "").
				withInterval(l, h).withNote(fmt.Sprintf("%d of %d pairs", o.linked, o.pairs)),
			meanRowOf(pre+"precision after intersection and graph pruning", o.graph).
				withNote(fmt.Sprintf("mean over %d analyses, 95 %% interval of the mean; %d left an empty set (no precision)", len(o.graph), o.emptyGraph)),
			meanRowOf(pre+"recall after intersection and graph pruning", o.recal),
		)
	}
	// The decision: each noise point against the looser-rate family at
	// the same bandwidth (linear interpolation between its points).
	var lb, lp []float64
	for i, v := range variants {
		if v.family == familyLoose {
			m, _, _ := meanInterval(outcomes[i].graph)
			lb, lp = append(lb, outcomes[i].bandwidth), append(lp, m)
		}
	}
	for i, v := range variants {
		if v.noise == 0 {
			continue
		}
		m, lo, hi := meanInterval(outcomes[i].graph)
		ref, ok := interpolate(lb, lp, outcomes[i].bandwidth)
		note := "bandwidth beyond the looser rates measured: no comparison"
		verdict := "no comparison"
		if ok {
			switch {
			case hi < ref:
				verdict = "beats the looser rate"
			case lo > ref:
				verdict = "loses to the looser rate"
			default:
				verdict = "no difference at this size"
			}
			note = fmt.Sprintf("looser rate of equal bandwidth leaves precision %.3g: %s", ref, verdict)
		}
		row := measuredOnly(v.name+": precision after graph pruning vs a looser rate of equal bandwidth", m, nil, "").
			withInterval(lo, hi).withNote(note)
		row.Verdict = verdict
		if ok {
			row.Formula = &ref
			row.Source = "looser rate, interpolated (measured here)"
		}
		out.Rows = append(out.Rows, row)
	}
}

// meanRowOf is meanRow with a note on what was averaged.
func meanRowOf(q string, vals []float64) Comparison {
	m, lo, hi := meanInterval(vals)
	return measuredOnly(q, m, nil, "").withInterval(lo, hi).withNote(fmt.Sprintf("mean over %d analyses, 95 %% interval of the mean", len(vals)))
}

// interpolate returns y at x on the piecewise-linear curve through the
// points (xs sorted or not), and false outside their range.
func interpolate(xs, ys []float64, x float64) (float64, bool) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	for k := 1; k < len(idx); k++ {
		a, b := idx[k-1], idx[k]
		if x >= xs[a] && x <= xs[b] {
			if xs[b] == xs[a] {
				return ys[a], true
			}
			t := (x - xs[a]) / (xs[b] - xs[a])
			return ys[a] + t*(ys[b]-ys[a]), true
		}
	}
	return math.NaN(), false
}

// noiseCharts draws precision after graph pruning against bandwidth, one
// curve per family, and the attacks' precision per variant.
func noiseCharts(variants []noiseVariant, outcomes []noiseOutcome) []privacy.Chart {
	families := []string{familyLoose}
	for _, nk := range []NoiseKind{NoisePersistedRandom, NoiseFreshRandom, NoisePersistedNear} {
		families = append(families, nk.String())
	}
	eq := privacy.Chart{
		LogX:   true,
		Title:  "precision left after intersection and graph pruning vs bandwidth (measured here)",
		XLabel: "false-positive transactions per 1,000 blocks (this chain: 40 background txs per block)",
		YLabel: "adversary's precision", Notes: []string{"lower is better for the wallet; decoy counts 3, 10, 30 per wallet; looser rates 1e-4 to 0.03"},
	}
	for _, fam := range families {
		s := privacy.Series{Name: fam, Points: fam != familyLoose}
		for i, v := range variants {
			if v.family != fam {
				continue
			}
			m, lo, hi := meanInterval(outcomes[i].graph)
			s.X, s.Y = append(s.X, outcomes[i].bandwidth), append(s.Y, m)
			s.YLo, s.YHi = append(s.YLo, lo), append(s.YHi, hi)
		}
		eq.Series = append(eq.Series, s)
	}
	attacks := privacy.Chart{Title: "adversary's precision after each attack, per policy (measured here)", YLabel: "precision"}
	var xs []float64
	for i, v := range variants {
		if v.family == familyLoose && i > 0 {
			continue
		}
		attacks.XTicks = append(attacks.XTicks, privacy.Tick{Value: float64(len(xs)), Label: shortName(v.name)})
		xs = append(xs, float64(i))
	}
	for _, a := range []struct {
		name string
		get  func(noiseOutcome) []float64
	}{
		{"latest filter alone", func(o noiseOutcome) []float64 { return o.single }},
		{"intersection", func(o noiseOutcome) []float64 { return o.inter }},
		{"intersection + graph", func(o noiseOutcome) []float64 { return o.graph }},
	} {
		s := privacy.Series{Name: a.name, Points: true}
		for j, vi := range xs {
			m, lo, hi := meanInterval(a.get(outcomes[int(vi)]))
			s.X, s.Y, s.YLo, s.YHi = append(s.X, float64(j)), append(s.Y, m), append(s.YLo, lo), append(s.YHi, hi)
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
