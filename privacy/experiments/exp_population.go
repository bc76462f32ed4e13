package experiments

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// The population experiment (issue 20, items 1 and 2): wallets of three
// kinds on one chain, one transcript per client session, a crawler that
// keeps each session's first filter (as Nick's did), links the sessions
// into wallets by match-set overlap, and runs the multi-input heuristic
// over the linked match sets. Every figure is measured against the
// population's truth and set beside the formula and Nick's published
// figures, which come from another setting (37,585 real filters of 2015's
// bitcoinj and MultiBit users over 60.88 M revealed keys): they are
// compared in form only.
const (
	populationBackground = 300_000
	// nickFilters, nickUniverse and nickLegacy* are Nick's published
	// counts (thesis, 2015): the filters kept, the revealed keys, and the
	// legacy wallets with the public keys they matched.
	nickFilters       = 37_585
	nickUniverse      = 60.88e6
	nickLegacyWallets = 8_124
	nickLegacyMatched = 41_079
	// nickFP is Nick's effective bitcoinj rate 0.0001472 (thesis).
	nickFP = 0.0001472
	// nickWrongMerge is his wrong-merge probability per pair.
	nickWrongMerge = 2.66e-8
	// progress stages
	stageChain   = "chain"
	stageClients = "clients"
	stageCrawl   = "crawl"
)

// Nick's published clustering figures (thesis, Table 5.2 and section
// 5.3): legacy wallets with the multi-input heuristic, and the modern
// wallets' mean corrected recall, baseline and multi-input.
const (
	litModernBaseline   = 0.6627
	litModernMultiInput = 0.6859
	litModernBest       = 0.7094
)

// populationConfig returns the population of a Config.
func populationConfig(cfg Config) PopulationConfig {
	return PopulationConfig{Seed: cfg.Seed, WalletsPerKind: cfg.Wallets, Blocks: cfg.Blocks}
}

// kindStats accumulates one kind's figures.
type kindStats struct {
	sessions, loads, blocks, fpTxs int
	bytes, rate                    float64
	setSize, fp                    float64
	fpExpected                     float64
	sameLinked, samePairs          int
	// Nick-style clustering over linked match sets, and the truth.
	rhoM, precM, base []float64
	sizes             []int
	expFP             []float64
	precTrue, recTrue []float64
	// the adversary's estimate of the wallet: match sets, then clusters
	advPrec, advRec, cluPrec, cluRec []float64
}

// runPopulation runs the population, the crawler, linking and clustering.
func runPopulation(ctx context.Context, cfg Config) (*Result, error) {
	bg := orDefault(cfg.Universe, populationBackground)
	cfg.progress(stageChain, 0, 1)
	pop, err := NewPopulation(populationConfig(cfg))
	if err != nil {
		return nil, err
	}
	cfg.progress(stageChain, 1, 1)
	sessions, err := pop.SimulateProgress(ClientOptions{}, cfg.progress)
	if err != nil {
		return nil, err
	}
	if cfg.Sessions != nil {
		for _, s := range sessions {
			cfg.Sessions(s)
		}
	}
	view, err := CrawlProgress(ctx, pop, sessions, bg, cfg.Seed, cfg.Workers, cfg.progress)
	if err != nil {
		return nil, err
	}
	overlaps := view.Overlaps(sessions)
	out := &Result{
		Name:  PopulationName,
		Title: "a population of wallets of three kinds: the crawler's linking and multi-input clustering",
		Params: []Param{
			param("wallets", len(pop.Wallets)), param("blocks", len(pop.Chain)), param("sessions", len(sessions)),
			param("chain_keys", len(pop.Keys)), param("background_candidates", bg),
			param("universe_2_forms", view.FormCounts[2]), param("universe_1_form", view.FormCounts[1]),
			param("join_share", pop.Config.JoinShare), param("seed", cfg.Seed),
		},
	}
	stats := map[WalletKind]*kindStats{}
	for _, k := range Kinds {
		stats[k] = &kindStats{}
	}
	for j, s := range sessions {
		st := stats[s.Kind]
		st.sessions++
		st.loads += len(s.Loads)
		st.blocks += s.Blocks
		st.fpTxs += s.FPTxs
		st.bytes += float64(view.Filters[j].Size())
		st.rate += view.Filters[j].CurrentFPRate()
		st.setSize += float64(len(view.Sets[j]))
		for _, c := range view.Sets[j] {
			if view.Owner[c] != int32(s.Wallet) {
				st.fp++
			}
		}
		st.fpExpected += view.ExpectedFP(j)
	}
	wrong := linkingRows(out, view, sessions, overlaps, stats)
	clusterRows(out, pop, view, sessions, overlaps, stats, cfg.Seed)
	for _, k := range Kinds {
		st := stats[k]
		n := float64(st.sessions)
		out.Rows = append(out.Rows,
			measuredOnly(k.String()+": sessions (one transcript each)", n, nil, "").
				withNote(fmt.Sprintf("%d filterloads; crawler keeps the first of each session", st.loads)),
			measuredOnly(k.String()+": first filter, mean bytes", st.bytes/n, nil, ""),
			measuredOnly(k.String()+": first filter, mean rate (X/n)^k", st.rate/n, nil, ""),
			measuredOnly(k.String()+": false-positive transactions per 1,000 blocks filtered", 1000*float64(st.fpTxs)/float64(max(1, st.blocks)), nil, "").
				withNote("the serving peer's UPDATE_ALL copy, this chain's "+fmt.Sprint(pop.Config.TxsPerBlock)+" background txs per block"),
			compare(k.String()+": match set, false positives per session", st.fp/n, st.fpExpected/n, nil, srcFormula).
				withInterval(poissonMeanInterval(uint64(st.fp), n)),
		)
	}
	out.Charts = populationCharts(stats, wrong)
	return out, nil
}

// wrongMerges is the linking outcome the charts draw.
type wrongMerges struct {
	measured          int
	nick, own, both   float64
	measuredOwn       int
	sameLinked, pairs int
}

// linkingRows adds the crawler's linking figures.
func linkingRows(out *Result, v *CrawlerView, sessions []*Session, overlaps []Overlap, stats map[WalletKind]*kindStats) wrongMerges {
	var w wrongMerges
	overlapping := map[[2]int]Overlap{}
	for _, o := range overlaps {
		overlapping[[2]int{o.I, o.J}] = o
	}
	for i := range sessions {
		for j := i + 1; j < len(sessions); j++ {
			o, ok := overlapping[[2]int{i, j}]
			if sessions[i].Wallet == sessions[j].Wallet {
				st := stats[sessions[i].Kind]
				st.samePairs++
				if ok {
					st.sameLinked++
				}
				continue
			}
			e := v.Pair(i, j)
			w.nick += e.Nick
			w.own += e.Own
			w.both += e.Both
			if ok {
				w.measured++
				if o.OwnCause > 0 {
					w.measuredOwn++
				}
			}
		}
	}
	lo, hi := PoissonInterval(uint64(w.measured), Z95)
	out.Rows = append(out.Rows,
		compare("wrong merges (sessions of different wallets whose match sets overlap): every term", float64(w.measured), w.both, nil, srcFormula).
			withInterval(lo, hi).withNote(fmt.Sprintf("Nick's term alone expects %.3g; the left-out own-key term %.3g", w.nick, w.own)),
		compare("wrong merges caused by one wallet's own key matching the other's filter", float64(w.measuredOwn), w.own, nil, "term left out of Nick's formula").
			withInterval(PoissonInterval(uint64(w.measuredOwn), Z95)),
	)
	for _, k := range Kinds {
		st := stats[k]
		l, h := WilsonInterval(st.sameLinked, st.samePairs, Z95)
		out.Rows = append(out.Rows, measuredOnly(k.String()+": sessions of one wallet linked by overlap (share of pairs)",
			ratio(st.sameLinked, st.samePairs), nil, "").withInterval(l, h).withNote(fmt.Sprintf("%d of %d pairs", st.sameLinked, st.samePairs)))
		w.sameLinked += st.sameLinked
		w.pairs += st.samePairs
	}
	// Nick's setting, computed from his published counts: the mean
	// legacy match set (41,079 keys over 8,124 wallets) stands for |w|.
	phi := nickFP * nickFP
	mean := float64(nickLegacyMatched) / nickLegacyWallets
	pairs := float64(nickFilters) * (nickFilters - 1) / 2
	pNick := -math.Expm1(-(nickUniverse - 2*mean) * phi * phi)
	pOwn := -math.Expm1(-2 * mean * phi)
	out.Rows = append(out.Rows,
		compare("Nick's setting: wrong-merge probability per pair, his formula", pNick, pNick, literature(nickWrongMerge), srcNick).
			withNote("computed here from |P| = 60.88 M, phi = 0.0001472^2, |w| = 41,079/8,124 matched keys per legacy wallet"),
		measuredOnly("Nick's setting: wrong-merge probability per pair with the own-key term", pNick+pOwn, nil, "").
			withNote(fmt.Sprintf("computed here, not measured: the own-key term %.3g is %.0fx his", pOwn, pOwn/pNick)),
		measuredOnly("Nick's setting: expected wrong merges over all pairs of 37,585 filters, his formula", pairs*pNick, nil, "").
			withNote("computed here"),
		measuredOnly("Nick's setting: expected wrong merges over all pairs, with the own-key term", pairs*(pNick+pOwn), nil, "").
			withNote("computed here; an upper estimate, every filter taken as one wallet's legacy bitcoinj filter"),
	)
	return w
}

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// poissonMeanInterval returns the 95 % interval of a mean over n units of
// a Poisson count c.
func poissonMeanInterval(c uint64, n float64) (float64, float64) {
	lo, hi := PoissonInterval(c, Z95)
	return lo / n, hi / n
}

// clusterRows links the sessions by Nick's rule and scores the
// multi-input clusters of each linked wallet.
func clusterRows(out *Result, pop *Population, v *CrawlerView, sessions []*Session, overlaps []Overlap, stats map[WalletKind]*kindStats, seed uint64) {
	groups := v.Link(sessions, overlaps, LinkAnyOverlap)
	members := map[int][]int{}
	for j, g := range groups {
		members[g] = append(members[g], j)
	}
	roots := make([]int, 0, len(members))
	for g := range members {
		roots = append(roots, g)
	}
	slices.Sort(roots)
	cl := MultiInputClusters(pop)
	owners := cl.OwnerCounts(pop)
	walletKeys := make([]int, len(pop.Wallets))
	for _, k := range pop.Keys {
		if k.Owner >= 0 {
			walletKeys[k.Owner]++
		}
	}
	for _, g := range roots {
		js := members[g]
		wallet := majorityWallet(sessions, js)
		st := stats[sessions[js[0]].Kind]
		var m []int32
		var expFP float64
		for _, j := range js {
			m = append(m, v.Sets[j]...)
			expFP += v.ExpectedFP(j)
		}
		slices.Sort(m)
		m = slices.Compact(m)
		var truth []int32
		for _, c := range m {
			if v.Owner[c] == int32(wallet) {
				truth = append(truth, c)
			}
		}
		if len(m) == 0 {
			continue
		}
		sm := cl.Score(v, m, nil, 0)
		st.rhoM = append(st.rhoM, sm.Recall)
		st.precM = append(st.precM, sm.Precision)
		st.base = append(st.base, sm.Baseline)
		st.sizes = append(st.sizes, len(m))
		st.expFP = append(st.expFP, expFP)
		st.advPrec = append(st.advPrec, float64(len(truth))/float64(len(m)))
		st.advRec = append(st.advRec, float64(len(truth))/float64(max(1, walletKeys[wallet])))
		if len(truth) > 0 {
			sw := cl.Score(v, truth, owners, int32(wallet))
			st.precTrue = append(st.precTrue, sw.Precision)
			st.recTrue = append(st.recTrue, sw.Recall)
		}
		// The adversary's wallet after clustering: every cluster that
		// holds a member of m.
		var clustered, own int
		seen := map[int32]bool{}
		for _, c := range m {
			k := v.KeyID[c]
			if k < 0 {
				clustered++
				continue
			}
			root := cl.find(k)
			if seen[root] {
				continue
			}
			seen[root] = true
			clustered += cl.Size(k)
			own += owners[[2]int32{root, int32(wallet)}]
		}
		st.cluPrec = append(st.cluPrec, float64(own)/float64(max(1, clustered)))
		st.cluRec = append(st.cluRec, float64(own)/float64(max(1, walletKeys[wallet])))
	}
	for ki, k := range Kinds {
		st := stats[k]
		var precLit, recLit, baseLit *float64
		src := ""
		if k == KindBitcoinj {
			precLit, recLit, baseLit = literature(litClusterPrecision), literature(litClusterRecall), literature(litModernBaseline)
			src = srcNick + " (37,585 real filters; compare in form only)"
		}
		corr, lo, hi := ClusterCorrection(seed+uint64(ki), st.rhoM, st.sizes, st.expFP)
		out.Rows = append(out.Rows,
			meanRow(k.String()+": multi-input precision on linked match sets (Nick's method)", st.precM, precLit, src),
			meanRow(k.String()+": multi-input recall on linked match sets, uncorrected", st.rhoM, recLit, src),
			measuredOnly(k.String()+": multi-input recall, Nick's false-positive correction", corr, nil, "").
				withInterval(lo, hi).withNote("99 % range of 1,000 Monte Carlo draws, as Nick"),
			meanRow(k.String()+": multi-input recall against the truth", st.recTrue, nil, ""),
			meanRow(k.String()+": multi-input precision against the truth (every key of the wallet)", st.precTrue, nil, ""),
			meanRow(k.String()+": baseline recall 1/|m|", st.base, baseLit, src),
			meanRow(k.String()+": adversary's wallet = linked match sets: precision", st.advPrec, nil, ""),
			meanRow(k.String()+": adversary's wallet = linked match sets: recall of the wallet's keys on chain", st.advRec, nil, ""),
			meanRow(k.String()+": adversary's wallet = their multi-input clusters: precision", st.cluPrec, nil, ""),
			meanRow(k.String()+": adversary's wallet = their multi-input clusters: recall", st.cluRec, nil, ""),
		)
	}
}

// majorityWallet returns the wallet most sessions of js belong to.
func majorityWallet(sessions []*Session, js []int) int {
	count := map[int]int{}
	best, bestN := sessions[js[0]].Wallet, 0
	for _, j := range js {
		w := sessions[j].Wallet
		count[w]++
		if count[w] > bestN || (count[w] == bestN && w < best) {
			best, bestN = w, count[w]
		}
	}
	return best
}

// meanRow is the mean of per-wallet values with its 95 % normal interval.
func meanRow(q string, vals []float64, lit *float64, src string) Comparison {
	m, lo, hi := meanInterval(vals)
	c := measuredOnly(q, m, lit, src).withInterval(lo, hi).withNote(fmt.Sprintf("mean over %d linked wallets, 95 %% interval of the mean", len(vals)))
	if lit != nil {
		c = c.formOnly()
	}
	return c
}

// meanInterval returns the mean of vals and its 95 % normal interval.
func meanInterval(vals []float64) (mean, lo, hi float64) {
	if len(vals) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	var ss float64
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	half := 0.0
	if len(vals) > 1 {
		half = Z95 * math.Sqrt(ss/float64(len(vals)-1)/float64(len(vals)))
	}
	return mean, mean - half, mean + half
}

// populationCharts draws precision and recall per kind, with Nick's
// figures as reference markers, and the wrong merges.
func populationCharts(stats map[WalletKind]*kindStats, w wrongMerges) []privacy.Chart {
	var ticks []privacy.Tick
	for i, k := range Kinds {
		ticks = append(ticks, privacy.Tick{Value: float64(i), Label: k.String()})
	}
	metric := func(name string, get func(*kindStats) []float64, offset float64) privacy.Series {
		s := privacy.Series{Name: name, Points: true}
		for i, k := range Kinds {
			m, lo, hi := meanInterval(get(stats[k]))
			s.X, s.Y = append(s.X, float64(i)+offset), append(s.Y, m)
			s.YLo, s.YHi = append(s.YLo, lo), append(s.YHi, hi)
		}
		return s
	}
	const off = 0.08
	clus := privacy.Chart{
		Title: "multi-input clustering over the crawler's linked match sets (measured here)", XLabel: "wallet kind",
		YLabel: "mean over wallets", XTicks: ticks,
		Series: []privacy.Series{
			metric("precision (Nick's method)", func(s *kindStats) []float64 { return s.precM }, -2*off),
			metric("recall (Nick's method, uncorrected)", func(s *kindStats) []float64 { return s.rhoM }, -off),
			metric("recall against the truth", func(s *kindStats) []float64 { return s.recTrue }, 0),
			metric("precision against the truth", func(s *kindStats) []float64 { return s.precTrue }, off),
			metric("baseline recall 1/|m|", func(s *kindStats) []float64 { return s.base }, 2*off),
			{Name: "legacy precision 90.79 %", X: []float64{-2 * off}, Y: []float64{litClusterPrecision}, Reference: true, Source: srcNick},
			{Name: "legacy recall 79.76 %", X: []float64{-off}, Y: []float64{litClusterRecall}, Reference: true, Source: srcNick},
			{Name: "modern recall 66.27 % (baseline) to 70.94 %", X: []float64{2 * off, 0}, Y: []float64{litModernBaseline, litModernBest}, Reference: true, Source: srcNick},
		},
		Notes: []string{"Nick's figures: 37,585 real 2015 filters; these: a synthetic chain with 5 % of wallet spends joined by another party's input. Compare in form only."},
	}
	adv := privacy.Chart{
		Title: "what the crawler learns of each wallet (measured here)", XLabel: "wallet kind", YLabel: "mean over wallets",
		XTicks: ticks,
		Series: []privacy.Series{
			metric("match sets: precision", func(s *kindStats) []float64 { return s.advPrec }, -off),
			metric("match sets: recall of keys on chain", func(s *kindStats) []float64 { return s.advRec }, -off/2),
			metric("+ multi-input clusters: precision", func(s *kindStats) []float64 { return s.cluPrec }, off/2),
			metric("+ multi-input clusters: recall", func(s *kindStats) []float64 { return s.cluRec }, off),
		},
	}
	lo, hi := PoissonInterval(uint64(w.measured), Z95)
	merges := privacy.Chart{
		Title: "wrong merges among all pairs of sessions of different wallets", XLabel: "", YLabel: "pairs", LogY: true,
		XTicks: []privacy.Tick{{Value: 0, Label: "Nick's formula"}, {Value: 1, Label: "own-key term"}, {Value: 2, Label: "every term"}, {Value: 3, Label: "measured"}},
		Series: []privacy.Series{
			{Name: "expected", X: []float64{0, 1, 2}, Y: []float64{w.nick, w.own, w.both}, Points: true},
			{Name: "measured (95 % Poisson interval)", X: []float64{3}, Y: []float64{float64(w.measured)}, YLo: []float64{lo}, YHi: []float64{hi}, Points: true},
		},
	}
	return []privacy.Chart{clus, adv, merges}
}
