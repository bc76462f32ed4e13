package experiments

import (
	"context"
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// The requests experiment: what the serving peer
// learns from the blocks a client asks for, recorded as getdata records
// (transcript version 3). A wallet's first catch-up starts at its
// birthday; bloomwatch, after loading a filter for keys a transaction of
// block h made it derive, fetches block h again (and the blocks in
// flight), so the re-fetch points at a block holding a wallet
// transaction. The mitigations: start the first catch-up at a rounded
// birthday, and re-fetch from the start of an aligned window after a
// random delay.
const (
	requestsWallets = 100
	requestsBlocks  = 360
	// requestsRound is the rounding of the mitigations on this chain:
	// a tenth of it (on mainnet, 2,016 blocks: two weeks).
	requestsRound = 36
	// requestsDelay is the longest random delay of a reload for new
	// keys.
	requestsDelay = 6
	// requestsLooseRate is a rate at which the filter alone leaves
	// cover, so that what the requests add shows.
	requestsLooseRate = 0.02
)

// requestPolicies are the policies compared.
var requestPolicies = []struct {
	name, short string
	rp          RequestPolicy
}{
	{"bloomwatch (exact birthday, re-fetch from the block)", "bloomwatch today", RequestPolicy{InFlight: filterpolicy.DefaultWindow}},
	{"rounded birthday", "rounded birthday", RequestPolicy{InFlight: filterpolicy.DefaultWindow, RoundBirthday: requestsRound}},
	{"aligned re-fetch window and delayed reload", "window + delay", RequestPolicy{InFlight: filterpolicy.DefaultWindow, RefetchWindow: requestsRound, ReloadDelay: requestsDelay}},
	{"both mitigations", "both", RequestPolicy{InFlight: filterpolicy.DefaultWindow, RoundBirthday: requestsRound, RefetchWindow: requestsRound, ReloadDelay: requestsDelay}},
}

// requestOutcome is what the adversary learned under one policy, in all
// and per wallet (the clusters of the intervals).
type requestOutcome struct {
	wallets, firstTxRight   int
	birthdayErr             float64
	sameBirthday            float64
	refetches, refetchHit   int
	pointed, pointedWallet  int
	filterOnly, filterOwned int
	blocksRefetched         int64
	pointedBlocks           int64
	per                     map[int]*requestWallet
	order                   []int
}

// requestWallet is one wallet's share of a requestOutcome.
type requestWallet struct {
	firstTxRight, first     int
	birthdayErr, sharing    float64
	refetches, refetchHit   int
	pointed, pointedWallet  int
	filterOnly, filterOwned int
}

// wallet returns wallet w's tally, made on first use.
func (o *requestOutcome) wallet(w int) *requestWallet {
	if o.per == nil {
		o.per = map[int]*requestWallet{}
	}
	if o.per[w] == nil {
		o.per[w] = &requestWallet{}
		o.order = append(o.order, w)
	}
	return o.per[w]
}

// columns returns a per-wallet pair of columns.
func (o *requestOutcome) columns(get func(*requestWallet) (float64, float64)) (num, den []float64) {
	for _, w := range o.order {
		a, b := get(o.per[w])
		num, den = append(num, a), append(den, b)
	}
	return num, den
}

// runRequests measures each policy at bloomwatch's rate and at a loose
// one.
func runRequests(ctx context.Context, cfg Config) (*Result, error) {
	pc := populationConfig(cfg)
	pc.WalletsPerKind = orDefault(cfg.Wallets, requestsWallets)
	pc.Blocks = orDefault(cfg.Blocks, requestsBlocks)
	pc.Kinds = []WalletKind{KindBloomwatch}
	pop, err := NewPopulation(pc)
	if err != nil {
		return nil, err
	}
	rates := []float64{0, requestsLooseRate}
	if cfg.FPRate != 0 {
		rates = []float64{cfg.FPRate}
	}
	out := &Result{
		Name:  "requests",
		Title: "what the request pattern leaks: the birthday and the re-fetched blocks, with and without mitigations",
		Params: []Param{
			param("wallets", len(pop.Wallets)), param("blocks", len(pop.Chain)), param("rounding_blocks", requestsRound),
			param("reload_delay_max", requestsDelay),
		},
	}
	ix := pop.indexChain()
	var charts, birth []privacy.Series
	step := 0
	for ri, rate := range rates {
		rateName := "bloomwatch's 1e-4"
		if rate != 0 {
			rateName = fmt.Sprint(rate)
		}
		var xs, prec, lo, hi, base, baseLo, baseHi, first, firstLo, firstHi []float64
		for pi, pol := range requestPolicies {
			cfg.progress("policies", step, len(rates)*len(requestPolicies))
			step++
			sessions, err := pop.Simulate(ClientOptions{FPRate: rate, Requests: pol.rp})
			if err != nil {
				return nil, err
			}
			o, err := requestLeak(pop, ix, sessions)
			if err != nil {
				return nil, err
			}
			n := len(out.Rows)
			requestRows(out, fmt.Sprintf("rate %s, %s: ", rateName, pol.name), o, pol.rp.RoundBirthday > 1)
			firstRow, pointRow, baseRow := out.Rows[n+2], out.Rows[n+4], out.Rows[n+5]
			off := 0.1 * float64(ri)
			xs, prec, lo, hi = append(xs, float64(pi)+off), append(prec, pointRow.Measured), append(lo, pointRow.Interval[0]), append(hi, pointRow.Interval[1])
			base, baseLo, baseHi = append(base, baseRow.Measured), append(baseLo, baseRow.Interval[0]), append(baseHi, baseRow.Interval[1])
			first, firstLo, firstHi = append(first, firstRow.Measured), append(firstLo, firstRow.Interval[0]), append(firstHi, firstRow.Interval[1])
		}
		birth = append(birth, privacy.Series{Name: "rate " + rateName, X: xs, Y: first, YLo: firstLo, YHi: firstHi, Points: true})
		charts = append(charts,
			privacy.Series{Name: "rate " + rateName + ": matched txs in the re-fetched blocks", X: xs, Y: prec, YLo: lo, YHi: hi, Points: true, Pair: rateName},
			privacy.Series{Name: "rate " + rateName + ": matched txs, filter alone", X: xs, Y: base, YLo: baseLo, YHi: baseHi, Points: true, Pair: rateName})
	}
	cfg.progress("policies", step, step)
	var ticks []privacy.Tick
	for i, p := range requestPolicies {
		ticks = append(ticks, privacy.Tick{Value: float64(i), Label: p.short})
	}
	note := fmt.Sprintf("rounding and window: %d blocks on this %d-block chain (2,016 on mainnet); reload delay up to %d blocks", requestsRound, len(pop.Chain), requestsDelay)
	out.Charts = []privacy.Chart{
		{
			Title:  "re-fetch: the wallet's share of the matched txs in the blocks it points at (measured here)",
			XLabel: "request policy", YLabel: "precision", XTicks: ticks, Series: charts, Notes: []string{note},
		},
		{
			Title:  "birthday: the first matched tx after the first request is the wallet's first (measured here)",
			XLabel: "request policy", YLabel: "share of wallets", XTicks: ticks, Series: birth,
		},
	}
	return out, nil
}

// requestUnit names the clusters of the requests experiment.
const requestUnit = "wallets"

// requestRows writes one policy's figures: proportions of re-fetches and
// transactions clustered in wallets, and per-wallet means.
func requestRows(out *Result, pre string, o requestOutcome, rounded bool) {
	birth := func(r *requestWallet) (float64, float64) { return r.birthdayErr, float64(r.first) }
	var errRow Comparison
	if rounded {
		num, den := o.columns(birth)
		errRow = clusterMeanRow(pre+"birthday: blocks between the first request and the birthday (mean)", num, den, false, requestUnit)
	} else {
		errRow = deterministicRow(pre+"birthday: blocks between the first request and the birthday", o.birthdayErr/float64(max(o.wallets, 1))).
			withNote("the first request is the birthday by construction")
	}
	shareNum, shareDen := o.columns(func(r *requestWallet) (float64, float64) { return r.sharing, float64(min(r.first, 1)) })
	firstNum, firstDen := o.columns(func(r *requestWallet) (float64, float64) { return float64(r.firstTxRight), float64(r.first) })
	hitNum, hitDen := o.columns(func(r *requestWallet) (float64, float64) { return float64(r.refetchHit), float64(r.refetches) })
	ptNum, ptDen := o.columns(func(r *requestWallet) (float64, float64) { return float64(r.pointedWallet), float64(r.pointed) })
	flNum, flDen := o.columns(func(r *requestWallet) (float64, float64) { return float64(r.filterOwned), float64(r.filterOnly) })
	out.Rows = append(out.Rows,
		errRow,
		clusterMeanRow(pre+"birthday: wallets sharing a wallet's first requested height (mean)", shareNum, shareDen, false, requestUnit).
			withNote("a wallet resampled keeps its count: the interval is over the wallets' values"),
		binomialRow(pre+"birthday: first matched tx after the first request is the wallet's first", int(sumOf(firstNum)), int(sumOf(firstDen))).
			withNote("one guess per wallet: independent trials"),
		clusterPropRow(pre+"re-fetches that point at the block which made the wallet derive keys", hitNum, hitDen, requestUnit).
			withNote(fmt.Sprintf("%d re-fetches; %.3g blocks re-fetched, %.3g pointed at, per re-fetch",
				o.refetches, float64(o.blocksRefetched)/float64(max(o.refetches, 1)), float64(o.pointedBlocks)/float64(max(o.refetches, 1)))),
		clusterPropRow(pre+"precision: wallet txs among the matched txs of the blocks pointed at", ptNum, ptDen, requestUnit),
		clusterPropRow(pre+"precision: wallet txs among all matched txs (the filter alone)", flNum, flDen, requestUnit),
	)
}

// requestLeak plays the serving peer over every session's records: it
// reads the first request of a wallet's first session as its birthday,
// and every request for blocks it already served as a re-fetch, whose
// first block through the filterload before it are the blocks pointed at.
// The truth scores it.
func requestLeak(pop *Population, ix *chainIndex, sessions []*Session) (requestOutcome, error) {
	var o requestOutcome
	firstReq := map[int]int32{}
	heights := map[int32]int{}
	for _, s := range sessions {
		w := pop.Wallets[s.Wallet]
		pw := o.wallet(w.ID)
		var filter *bip37.Filter
		var loadH int32
		served := int32(-1)
		refetch := 0
		firstSeen := false
		for _, r := range s.Records {
			switch r.Kind {
			case transcript.KindFilterLoad:
				f, err := bip37.Deserialize(r.Filter)
				if err != nil {
					return o, err
				}
				filter, loadH = f, r.Height
			case transcript.KindGetData:
				from, to := r.Height, r.Height+int32(r.Count)-1
				if s.Index == 0 && !firstSeen {
					firstSeen = true
					firstReq[w.ID] = from
					heights[from]++
					o.wallets++
					o.birthdayErr += float64(w.Birthday - from)
					pw.first++
					pw.birthdayErr += float64(w.Birthday - from)
					if guessFirstTx(pop, ix, filter, from, w) {
						o.firstTxRight++
						pw.firstTxRight++
					}
				}
				if from <= served && refetch < len(s.Refetches) {
					trig := s.Refetches[refetch].Trigger
					refetch++
					o.refetches++
					pw.refetches++
					o.blocksRefetched += r.Count
					end := max(loadH, from)
					o.pointedBlocks += int64(end - from + 1)
					if trig >= from && trig <= end {
						o.refetchHit++
						pw.refetchHit++
					}
					for h := from; h <= end; h++ {
						n, own := matchedTxs(pop, ix, filter, h, w.ID)
						o.pointed += n
						o.pointedWallet += own
						pw.pointed += n
						pw.pointedWallet += own
					}
				}
				served = max(served, to)
			}
		}
		if f := s.Loads[0].Filter; f != nil {
			for h := s.Start; h <= s.End; h++ {
				n, own := matchedTxs(pop, ix, f, h, w.ID)
				o.filterOnly += n
				o.filterOwned += own
				pw.filterOnly += n
				pw.filterOwned += own
			}
		}
	}
	var share float64
	for w, h := range firstReq {
		share += float64(heights[h])
		o.wallet(w).sharing = float64(heights[h])
	}
	o.sameBirthday = share / float64(max(len(firstReq), 1))
	return o, nil
}

// matchedTxs counts the txs of block h that f matches, and the wallet's
// among them.
func matchedTxs(pop *Population, ix *chainIndex, f *bip37.Filter, h int32, wallet int) (n, own int) {
	if f == nil || h < 0 || int(h) >= len(pop.Chain) {
		return 0, 0
	}
	for i, tx := range pop.Chain[h].Transactions {
		if f.MatchTx(tx) {
			n++
			if containsKey(ix.txOwners[h][i], int32(wallet)) {
				own++
			}
		}
	}
	return n, own
}

// guessFirstTx is the adversary's guess of the wallet's first transaction
// (the first tx the filter matches at or after the first block requested)
// scored against the truth.
func guessFirstTx(pop *Population, ix *chainIndex, f *bip37.Filter, from int32, w *PopWallet) bool {
	if f == nil {
		return false
	}
	first := int32(-1)
	if len(w.FirstUse) > 0 {
		first = w.FirstUse[0]
	}
	for h := max(from, 0); int(h) < len(pop.Chain); h++ {
		for i, tx := range pop.Chain[h].Transactions {
			if f.MatchTx(tx) {
				return h == first && containsKey(ix.txOwners[h][i], int32(w.ID))
			}
		}
	}
	return false
}
