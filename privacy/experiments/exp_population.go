package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// The population experiment: wallets of three
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
	// counts (thesis, 2015): the filters kept (p. 14), the |P| = 60e6 his
	// wrong-merge figure was computed with (p. 15; his data set held
	// 60.88 M pubkeys, p. 13), and the legacy wallets with the public
	// keys they matched (Table 5.1, p. 18; p. 20).
	nickFilters       = 37_585
	nickUniverse      = 60e6
	nickLegacyWallets = 8_124
	nickLegacyMatched = 41_079
	// nickFP is Nick's effective bitcoinj rate 0.0001472 (thesis p. 15).
	nickFP = 0.0001472
	// nickWrongMerge is his wrong-merge probability per pair (p. 15).
	nickWrongMerge = 2.66e-8
	// progress stages
	stageChain   = "chain"
	stageClients = "clients"
	stageCrawl   = "crawl"
)

// Nick's published clustering figures: the modern wallets' (bitcoinj
// 0.12 and later, which the bitcoinj-like kind models) mean corrected
// recall, baseline, multi-input and best (Table 5.2, p. 26).
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
	// per wallet: sessions, first-filter bytes and rates, false-positive
	// transactions and blocks, match-set false positives, own-pair links
	wallets                                               map[int]int
	wSessions, wBytes, wRate, wFPTxs, wKBlocks, wFP, wExp []float64
	wSame, wPairs                                         []float64
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
	if cfg.Population != nil {
		cfg.Population(pop)
	}
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
			param("join_share", pop.Config.JoinShare),
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
		var fp float64
		for _, c := range view.Sets[j] {
			if view.Owner[c] != int32(s.Wallet) {
				fp++
			}
		}
		st.fp += fp
		st.fpExpected += view.ExpectedFP(j)
		w := st.walletIndex(s.Wallet)
		st.wSessions[w]++
		st.wBytes[w] += float64(view.Filters[j].Size())
		st.wRate[w] += view.Filters[j].CurrentFPRate()
		st.wFPTxs[w] += float64(s.FPTxs)
		st.wKBlocks[w] += float64(s.Blocks) / 1000
		st.wFP[w] += fp
		st.wExp[w] += view.ExpectedFP(j)
	}
	wrong := linkingRows(out, view, sessions, overlaps, stats)
	clusterRows(out, pop, view, sessions, overlaps, stats, cfg.Seed)
	const unit = "wallets"
	for _, k := range Kinds {
		st := stats[k]
		out.Rows = append(out.Rows,
			deterministicRow(k.String()+": sessions (one transcript each)", float64(st.sessions)).
				withNote(fmt.Sprintf("%d filterloads; crawler keeps the first of each session", st.loads)),
			clusterMeanRow(k.String()+": first filter, mean bytes", st.wBytes, st.wSessions, false, unit),
			clusterMeanRow(k.String()+": first filter, mean rate (X/n)^k", st.wRate, st.wSessions, false, unit),
			clusterMeanRow(k.String()+": false-positive transactions per 1,000 blocks filtered", st.wFPTxs, st.wKBlocks, true, unit).
				withNote("the serving peer's UPDATE_ALL copy, this chain's "+fmt.Sprint(pop.Config.TxsPerBlock)+" background txs per block"),
			clusterMeanRow(k.String()+": match set, false positives per session", st.wFP, st.wSessions, true, unit).
				withFormula(sumOf(st.wExp)/math.Max(1, sumOf(st.wSessions))).withSource(srcFormula).test(altFactor(2)),
		)
	}
	out.Charts = populationCharts(stats, wrong)
	return out, nil
}

// wrongMerges is the linking outcome the charts draw.
type wrongMerges struct {
	measured, measuredOwn Comparison
	nick, own, both       float64
}

// dyadRow is a count over pairs of wallets (count[[a, b]] for a < b, n
// wallets): its interval resamples wallets (each pair counted with both
// wallets' multiplicities, pairs of a wallet with itself left out), since
// pairs that share a wallet or a matching candidate are not independent,
// widened to the Poisson interval of the count.
func dyadRow(q string, count map[[2]int]float64, n int) Comparison {
	var total float64
	type pair struct {
		a, b int
		c    float64
	}
	var pairs []pair
	for k, c := range count {
		total += c
		pairs = append(pairs, pair{k[0], k[1], c})
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		if x.a != y.a {
			return x.a - y.a
		}
		return x.b - y.b
	})
	rng := rand.New(rand.NewPCG(rowSeed(q), uint64(n)))
	mult := make([]float64, n)
	boot := make([]float64, bootstrapResamples)
	for i := range boot {
		clear(mult)
		for range n {
			mult[rng.IntN(n)]++
		}
		var t float64
		for _, p := range pairs {
			t += mult[p.a] * mult[p.b] * p.c
		}
		boot[i] = t
	}
	slices.Sort(boot)
	lo, hi := percentile(boot, Alpha95/2), percentile(boot, 1-Alpha95/2)
	pl, ph := garwood(total, Alpha95)
	return Comparison{Quantity: q, Measured: total, IntervalKind: KindClusterBootstrap,
		ev:   evidence{kind: KindClusterBootstrap, x: total, n: 1, boot: boot, counts: true},
		Note: fmt.Sprintf("%d wallets resampled (pairs of wallets)", n)}.withInterval(math.Min(lo, pl), math.Max(hi, ph))
}

// linkingRows adds the crawler's linking figures.
func linkingRows(out *Result, v *CrawlerView, sessions []*Session, overlaps []Overlap, stats map[WalletKind]*kindStats) wrongMerges {
	var w wrongMerges
	overlapping := map[[2]int]Overlap{}
	for _, o := range overlaps {
		overlapping[[2]int{o.I, o.J}] = o
	}
	wrong, wrongOwn := map[[2]int]float64{}, map[[2]int]float64{}
	nWallets := 0
	for _, s := range sessions {
		nWallets = max(nWallets, s.Wallet+1)
	}
	for i := range sessions {
		for j := i + 1; j < len(sessions); j++ {
			o, ok := overlapping[[2]int{i, j}]
			if a, b := sessions[i].Wallet, sessions[j].Wallet; a == b {
				st := stats[sessions[i].Kind]
				k := st.walletIndex(a)
				st.samePairs++
				st.wPairs[k]++
				if ok {
					st.sameLinked++
					st.wSame[k]++
				}
				continue
			}
			e := v.Pair(i, j)
			w.nick += e.Nick
			w.own += e.Own
			w.both += e.Both
			if ok {
				key := [2]int{min(sessions[i].Wallet, sessions[j].Wallet), max(sessions[i].Wallet, sessions[j].Wallet)}
				wrong[key]++
				if o.OwnCause > 0 {
					wrongOwn[key]++
				}
			}
		}
	}
	w.measured = dyadRow("wrong merges (sessions of different wallets whose match sets overlap)", wrong, nWallets).
		withFormula(w.both).withSource("expectation, every term").test(altFactor(2)).
		withNote(fmt.Sprintf("Nick's term alone expects %.3g; the left-out own-key term %.3g", w.nick, w.own))
	w.measuredOwn = dyadRow("wrong merges caused by one wallet's own key matching the other's filter", wrongOwn, nWallets).
		withFormula(w.own).withSource("the term Nick's formula leaves out").test(altFactor(2))
	out.Rows = append(out.Rows, w.measured, w.measuredOwn)
	for _, k := range Kinds {
		st := stats[k]
		out.Rows = append(out.Rows, clusterPropRow(k.String()+": sessions of one wallet linked by overlap (share of pairs)",
			st.wSame, st.wPairs, "wallets"))
	}
	// Nick's setting, computed from his published counts: the mean
	// legacy match set (41,079 keys over 8,124 wallets) stands for |w|.
	// His formula does not give his 2.66e-8 under either reading of phi.
	f2 := nickFP * nickFP
	mean := float64(nickLegacyMatched) / nickLegacyWallets
	pairs := float64(nickFilters) * (nickFilters - 1) / 2
	rest := nickUniverse - 2*mean
	pPrinted := -math.Expm1(rest * math.Log1p(-nickFP*nickFP))
	pNick := -math.Expm1(rest * math.Log1p(-f2*f2))
	pOwn := -math.Expm1(-2 * mean * f2)
	notRepro := srcNickPage("p. 15") + ": 2.66e-8 for |P| about 60e6 and phi = 0.0001472, reproduced by neither reading"
	out.Rows = append(out.Rows,
		computedRow("Nick's setting: his formula as printed, phi = 0.0001472 (one form), |P| = 60e6", pPrinted).
			withPublished(nickWrongMerge, notRepro),
		computedRow("Nick's setting: his formula with phi = 0.0001472^2 (both forms), |P| = 60e6", pNick).
			withPublished(nickWrongMerge, notRepro).
			withNote(fmt.Sprintf("%.3g at his data set's 60.88 M pubkeys (p. 13); |w| = 41,079/8,124 matched keys per legacy wallet (p. 20)",
				-math.Expm1((60.88e6-2*mean)*math.Log1p(-f2*f2)))),
		computedRow("Nick's 2.66e-8 read as |P| phi^4: the |P| it implies", nickImpliedUniverse()).
			withNote("a reading to list, not his statement: 2.66e-8 / 0.0001472^4, near the blog's 56 M pubkeys"),
		computedRow("Nick's setting: wrong-merge probability per pair with the own-key term", pNick+pOwn).
			withNote(fmt.Sprintf("computed here, not measured: the own-key term %.3g is %.0fx his", pOwn, pOwn/pNick)),
		computedRow("Nick's setting: expected wrong merges over all pairs of 37,585 filters, his formula", pairs*pNick),
		computedRow("Nick's setting: expected wrong merges over all pairs, with the own-key term", pairs*(pNick+pOwn)).
			withNote("an upper estimate, every filter taken as one wallet's legacy bitcoinj filter"),
	)
	return w
}

// nickImpliedUniverse returns the universe |P| for which |P| phi^4 is
// Nick's published wrong-merge probability (phi = nickFP).
func nickImpliedUniverse() float64 {
	return nickWrongMerge / math.Pow(nickFP, 4)
}

// walletIndex returns wallet w's index in the kind's per-wallet columns.
func (st *kindStats) walletIndex(w int) int {
	if st.wallets == nil {
		st.wallets = map[int]int{}
	}
	i, ok := st.wallets[w]
	if !ok {
		i = len(st.wSessions)
		st.wallets[w] = i
		st.wSessions, st.wBytes, st.wRate = append(st.wSessions, 0), append(st.wBytes, 0), append(st.wRate, 0)
		st.wFPTxs, st.wKBlocks, st.wFP, st.wExp = append(st.wFPTxs, 0), append(st.wKBlocks, 0), append(st.wFP, 0), append(st.wExp, 0)
		st.wSame, st.wPairs = append(st.wSame, 0), append(st.wPairs, 0)
	}
	return i
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
	const unit = "linked wallets"
	for _, k := range Kinds {
		st := stats[k]
		ones := make([]float64, len(st.rhoM))
		corrected := make([]float64, len(st.rhoM))
		for i := range ones {
			ones[i] = 1
			c := CorrectedRecall(st.rhoM[i], st.sizes[i], min(int(math.Round(st.expFP[i])), st.sizes[i]-1))
			if math.IsNaN(c) {
				c = st.rhoM[i]
			}
			corrected[i] = math.Max(0, math.Min(1, c))
		}
		mc, mcLo, mcHi := ClusterCorrection(seed+uint64(k), st.rhoM, st.sizes, st.expFP)
		prop := func(q string, vals []float64) Comparison {
			o := make([]float64, len(vals))
			for i := range o {
				o[i] = 1
			}
			return clusterPropRow(k.String()+": "+q, vals, o, unit)
		}
		prec := prop("multi-input precision on linked match sets (Nick's method)", st.precM)
		recU := prop("multi-input recall on linked match sets, uncorrected", st.rhoM)
		recC := prop("multi-input recall, Nick's false-positive correction", corrected).
			withNote(fmt.Sprintf("each wallet corrected at its expected false positives; Nick's Monte Carlo (1,000 draws): %.3g, 99 %% range [%.3g, %.3g]", mc, mcLo, mcHi))
		base := prop("baseline recall 1/|m|", st.base)
		if k == KindBitcoinj {
			prec = prec.withPublished(litClusterPrecision, srcNickPage("p. 20")+": legacy wallets (bitcoinj < 0.12); no precision is published for modern ones").formOnly()
			recC = recC.withPublished(litModernMultiInput, srcNickPage("Table 5.2, p. 26")+": modern wallets, multi-input, 99 % CI [68.17, 69.05] %").formOnly()
			base = base.withPublished(litModernBaseline, srcNickPage("Table 5.2, p. 26")+": modern wallets, 1/(wallet size), 99 % CI [65.83, 66.80] %").formOnly()
		}
		out.Rows = append(out.Rows, prec, recU, recC,
			prop("multi-input recall against the truth", st.recTrue),
			prop("multi-input precision against the truth (every key of the wallet)", st.precTrue),
			base,
			prop("adversary's wallet = linked match sets: precision", st.advPrec),
			prop("adversary's wallet = linked match sets: recall of the wallet's keys on chain", st.advRec),
			prop("adversary's wallet = their multi-input clusters: precision", st.cluPrec),
			prop("adversary's wallet = their multi-input clusters: recall", st.cluRec),
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

// populationCharts draws precision and recall per kind, Nick's published
// figures in categories of their own (his wallets are not these), and the
// wrong merges.
func populationCharts(stats map[WalletKind]*kindStats, w wrongMerges) []privacy.Chart {
	var ticks []privacy.Tick
	for i, k := range Kinds {
		ticks = append(ticks, privacy.Tick{Value: float64(i), Label: k.String()})
	}
	legacyX, modernX := float64(len(Kinds)), float64(len(Kinds)+1)
	ticks = append(ticks, privacy.Tick{Value: legacyX, Label: "Nick 2015: legacy"}, privacy.Tick{Value: modernX, Label: "Nick 2015: modern"})
	metric := func(name, group string, get func(*kindStats) []float64, offset float64) privacy.Series {
		s := privacy.Series{Name: name, Points: true, Group: group}
		for i, k := range Kinds {
			vals := get(stats[k])
			ones := make([]float64, len(vals))
			for j := range ones {
				ones[j] = 1
			}
			r := clusterPropRow(name, vals, ones, "wallets")
			if r.Interval == nil {
				continue
			}
			s.X, s.Y = append(s.X, float64(i)+offset), append(s.Y, r.Measured)
			s.YLo, s.YHi = append(s.YLo, r.Interval[0]), append(s.YHi, r.Interval[1])
		}
		return s
	}
	const off = 0.1
	clus := privacy.Chart{
		Title: "multi-input clustering over the crawler's linked match sets (measured here)", XLabel: "wallet kind",
		YLabel: "mean over wallets", XTicks: ticks,
		Series: []privacy.Series{
			metric("precision (Nick's method)", "prec", func(s *kindStats) []float64 { return s.precM }, -2*off),
			metric("recall (Nick's method, uncorrected)", "rec", func(s *kindStats) []float64 { return s.rhoM }, -off),
			metric("recall against the truth", "truth", func(s *kindStats) []float64 { return s.recTrue }, 0),
			metric("precision against the truth", "ptruth", func(s *kindStats) []float64 { return s.precTrue }, off),
			metric("baseline recall 1/|m|", "base", func(s *kindStats) []float64 { return s.base }, 2*off),
			{Name: "legacy precision 90.79 % (p. 20)", X: []float64{legacyX - 2*off}, Y: []float64{litClusterPrecision}, Reference: true, Group: "prec", Source: "Nick 2015"},
			{Name: "legacy recall 79.76 % (p. 20)", X: []float64{legacyX - off}, Y: []float64{litClusterRecall}, Reference: true, Group: "rec", Source: "Nick 2015"},
			{Name: "modern multi-input recall 68.59 % (Table 5.2)", X: []float64{modernX - off}, Y: []float64{litModernMultiInput}, Reference: true, Group: "rec", Source: "Nick 2015"},
			{Name: "modern baseline 66.27 % (Table 5.2)", X: []float64{modernX + 2*off}, Y: []float64{litModernBaseline}, Reference: true, Group: "base", Source: "Nick 2015"},
		},
		Notes: []string{"Nick's figures: 37,585 real 2015 filters, legacy = bitcoinj before 0.12, modern = 0.12 and later (the bitcoinj-like kind models modern ones); these: a synthetic chain with 5 % of wallet spends joined by another party's input. Compare in form only."},
	}
	adv := privacy.Chart{
		Title: "what the crawler learns of each wallet (measured here)", XLabel: "wallet kind", YLabel: "mean over wallets",
		XTicks: ticks[:len(Kinds)],
		Series: []privacy.Series{
			metric("match sets: precision", "a", func(s *kindStats) []float64 { return s.advPrec }, -1.5*off),
			metric("match sets: recall of keys on chain", "b", func(s *kindStats) []float64 { return s.advRec }, -off/2),
			metric("+ multi-input clusters: precision", "c", func(s *kindStats) []float64 { return s.cluPrec }, off/2),
			metric("+ multi-input clusters: recall", "d", func(s *kindStats) []float64 { return s.cluRec }, 1.5*off),
		},
	}
	m := w.measured
	merges := privacy.Chart{
		Title: "wrong merges among all pairs of sessions of different wallets", XLabel: "", YLabel: "pairs", LogY: true,
		XTicks: []privacy.Tick{{Value: 0, Label: "Nick's formula"}, {Value: 1, Label: "own-key term"}, {Value: 2, Label: "every term"}, {Value: 3, Label: "measured"}},
		Series: []privacy.Series{
			{Name: "expected", X: []float64{0, 1, 2}, Y: []float64{w.nick, w.own, w.both}, Points: true},
			{Name: "measured (95 % wallet bootstrap and Poisson)", X: []float64{3}, Y: []float64{m.Measured}, YLo: []float64{m.Interval[0]}, YHi: []float64{m.Interval[1]}, Points: true},
		},
	}
	return []privacy.Chart{clus, adv, merges}
}
