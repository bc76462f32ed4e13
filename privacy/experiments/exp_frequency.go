package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
)

// The frequency experiment: the seeds' PPRL attack (pprl.go) carried to
// a crawl of BIP37 filters, with a true q-gram analogue. A "value" is a
// watch list of popular scripts (the deposit and hot-wallet scripts of
// common services, as a merchant plug-in or a tracker configures them):
// scripts are shared among watch lists as bigrams are among names, and
// Zipf-popular ones among many. Trackers send a filter of their watch
// list alone; wallets add their own keys, one more at every reload (the
// wallet's elements carried across its reloads and restarts). The public
// list is a second crawl's count of each watch list. The attacker counts
// identical filters, aligns the frequent ones with the public watch
// lists by rank (pprl.go's alignment), learns per bit position the
// scripts that may set it, c[p]+ minus c[p]-, and then claims a popular
// script in every filter of the crawl that has all of the script's
// learned positions set. Without the hash functions: BIP37 sends the
// tweak in clear, so the direct test (every popular script against every
// filter) is measured beside it. Three tweak policies: one tweak shared
// by every client, a random tweak per client kept across its sessions
// (bloomwatch), a fresh tweak per session (bitcoinj's restarts). Every
// filter has one size, as PPRL's encodings do.
const (
	freqScripts      = 300    // popular scripts, Zipf-weighted
	freqLists        = 400    // watch lists, Zipf-popular
	freqClients      = 10_000 // default clients of the crawl
	freqWalletShare  = 0.4    // share of clients with keys of their own
	freqListMin      = 3      // scripts a watch list holds, at least
	freqListSpan     = 4      // and at most freqListMin + freqListSpan - 1
	freqThreshold    = 3      // a filter seen this often is aligned
	freqFilterElems  = rapporKeys + freqListMin + freqListSpan + 4
	freqStream       = 8000
	freqSessionsMean = 1
)

// freqPolicy is a tweak policy.
type freqPolicy int

const (
	freqShared freqPolicy = iota
	freqPerClient
	freqPerSession
)

// String names the policy.
func (p freqPolicy) String() string {
	switch p {
	case freqShared:
		return "one shared tweak"
	case freqPerClient:
		return "a tweak per client, kept"
	}
	return "a fresh tweak per session"
}

// freqClient is one client of the crawl.
type freqClient struct {
	list     int      // its watch list
	own      [][]byte // its own keys' hash160s (none for a tracker)
	sessions int
}

// freqOutcome is one policy's attack outcome.
type freqOutcome struct {
	filters, frequent, pairs, pairsRight int
	plusPairs, candPairs                 int // (position, script) pairs in c[p]+ and in c[p]+ minus c[p]-
	plusTrue, candTrue                   int // of them, true under an aligned filter's tweak
	// Claims of popular scripts in the filters never aligned, with c[p]-
	// and with c[p]+ alone, and the popular scripts they hold.
	claims, right, plusClaims, plusRight, members int
	// The direct test on the same filters.
	dClaims, dRight int
}

// runFrequency runs the crawl under each policy.
func runFrequency(ctx context.Context, cfg Config) (*Result, error) {
	nClients := orDefault(cfg.Wallets, freqClients/100) * 100
	rng := rand.New(rand.NewPCG(cfg.Seed, freqStream))
	scripts := make([][]byte, freqScripts)
	sw := make([]float64, freqScripts)
	for i := range scripts {
		scripts[i] = synthKey(cfg.Seed, freqStream<<32, uint64(i)).Hash160
		sw[i] = 1 / float64(i+1)
	}
	lists := make([][]int, freqLists)
	lw := make([]float64, freqLists)
	for i := range lists {
		n := freqListMin + rng.IntN(freqListSpan)
		for len(lists[i]) < n {
			if s := drawWeighted(rng, sw); !slices.Contains(lists[i], s) {
				lists[i] = append(lists[i], s)
			}
		}
		slices.Sort(lists[i])
		lw[i] = 1 / float64(i+1)
	}
	clients := make([]freqClient, nClients)
	for ci := range clients {
		c := &clients[ci]
		c.list = drawWeighted(rng, lw)
		c.sessions = 1 + poissonDraw(rng, freqSessionsMean)
		if rng.Float64() < freqWalletShare {
			for i := range rapporKeys + c.sessions {
				c.own = append(c.own, synthKey(cfg.Seed, freqStream<<32|uint64(ci+1), uint64(i)).Hash160)
			}
		}
	}
	// The public list: a second crawl's count of each watch list.
	public := make([]float64, freqLists)
	for range nClients {
		public[drawWeighted(rng, lw)]++
	}
	order := make([]int, freqLists)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case public[a] > public[b]:
			return -1
		case public[a] < public[b]:
			return 1
		}
		return 0
	})
	pub := make([]float64, freqLists)
	rank := make([]int, freqLists)
	for r, v := range order {
		pub[r], rank[v] = public[v], r
	}
	size, k := filterpolicy.FilterSize(freqFilterElems, rapporRate)
	out := &Result{
		Name:  "frequency",
		Title: "the PPRL frequency attack on a crawl of BIP37 filters that share popular scripts: what c[p]- removes and buys, per tweak policy, beside the direct test",
		Params: []Param{
			param("clients", nClients), param("wallet_share", freqWalletShare), param("popular_scripts", freqScripts), param("watch_lists", freqLists),
			param("wallet_keys", rapporKeys), param("filter_bytes", size), param("hash_funcs", k), param("threshold", freqThreshold),
		},
	}
	shared := rng.Uint32()
	names := []string{"claims with c[p]-: precision", "claims with c[p]+ alone: precision", "claims with c[p]-: recall", "claims with c[p]+ alone: recall"}
	series := make([]privacy.Series, len(names))
	for i, n := range names {
		series[i] = privacy.Series{Name: n, Points: true, Group: n}
	}
	var ticks []privacy.Tick
	for pi, pol := range []freqPolicy{freqShared, freqPerClient, freqPerSession} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var crawl []freqFilter
		for ci := range clients {
			c := &clients[ci]
			tweak := rng.Uint32()
			for s := range c.sessions {
				t := tweak
				switch pol {
				case freqShared:
					t = shared
				case freqPerSession:
					t = rng.Uint32()
				}
				f, err := bip37.NewFilterFromBits(make([]byte, size), k, t, bip37.UpdateNone)
				if err != nil {
					return nil, fmt.Errorf("frequency: %w", err)
				}
				for _, si := range lists[c.list] {
					f.Add(scripts[si])
				}
				if len(c.own) > 0 {
					for _, e := range c.own[:rapporKeys+s] {
						f.Add(e)
					}
				}
				crawl = append(crawl, freqFilter{client: ci, f: f})
			}
		}
		o := freqAttack(crawl, clients, lists, scripts, pub, rank)
		pre := pol.String() + ": "
		removed := o.plusPairs - o.candPairs
		rows := []Comparison{
			deterministicRow(pre+"filters crawled", float64(o.filters)),
			deterministicRow(pre+fmt.Sprintf("distinct filters seen %d times or more", freqThreshold), float64(o.frequent)),
			binomialRow(pre+"aligned pairs that pair a filter with its own watch list", o.pairsRight, o.pairs).
				withNote(fmt.Sprintf("%d pairs; ranks within %g standard deviations of a neighbour skipped (no pair: the frequencies tie)", o.pairs, pprlTieMargin)),
			deterministicRow(pre+"(position, script) candidates in c[p]+", float64(o.plusPairs)),
			deterministicRow(pre+"of them removed by c[p]-", float64(removed)),
			binomialRow(pre+"candidates in c[p]+ that are true (the script sets the position under an aligned filter's tweak)", o.plusTrue, o.plusPairs),
			binomialRow(pre+"candidates in c[p]+ minus c[p]- that are true", o.candTrue, o.candPairs),
		}
		prec := binomialRow(pre+"claims of popular scripts in never-aligned filters, with c[p]-: precision", o.right, o.claims)
		plusPrec := binomialRow(pre+"the same with c[p]+ alone: precision", o.plusRight, o.plusClaims)
		rec := binomialRow(pre+"claims with c[p]-: recall of the popular scripts those filters hold", o.right, o.members)
		plusRec := binomialRow(pre+"claims with c[p]+ alone: recall", o.plusRight, o.members)
		rows = append(rows, prec, plusPrec, rec, plusRec,
			binomialRow(pre+"direct test (the tweak is in clear), same filters: precision", o.dRight, o.dClaims),
			binomialRow(pre+"direct test: recall", o.dRight, o.members))
		for _, i := range []int{7, 8, 9, 10, 11, 12} {
			rows[i] = rows[i].withNote("units: (filter, script) pairs of one crawl; the filters of one client share its scripts, so the binomial interval understates the spread")
		}
		out.Rows = append(out.Rows, rows...)
		ticks = append(ticks, privacy.Tick{Value: float64(pi), Label: pol.String()})
		for j, r := range []Comparison{prec, plusPrec, rec, plusRec} {
			if r.Interval == nil || r.Measured != r.Measured {
				continue
			}
			s := &series[j]
			s.X, s.Y = append(s.X, float64(pi)+0.08*(float64(j)-1.5)), append(s.Y, r.Measured)
			s.YLo, s.YHi = append(s.YLo, r.Interval[0]), append(s.YHi, r.Interval[1])
		}
	}
	chart := privacy.Chart{Title: "re-identifying popular scripts in filters the alignment never saw (measured here)", XLabel: "tweak policy", YLabel: "share",
		XTicks: ticks, Notes: []string{fmt.Sprintf("%d clients (%.0f %% with %d keys of their own, one more per reload), 1 + Poisson(1) sessions; %d watch lists of %d-%d of %d popular scripts; %d-byte filters, k = %d; 95 %% Clopper-Pearson",
			nClients, 100*freqWalletShare, rapporKeys, freqLists, freqListMin, freqListMin+freqListSpan-1, freqScripts, size, k)}}
	for _, s := range series {
		if len(s.X) > 0 {
			chart.Series = append(chart.Series, s)
		}
	}
	out.Charts = []privacy.Chart{chart}
	return out, nil
}

// freqFilter is one filter the crawler recorded.
type freqFilter struct {
	client int
	f      *bip37.Filter
}

// freqAttack runs the alignment attack and the direct test on a crawl.
func freqAttack(crawl []freqFilter, clients []freqClient, lists [][]int, scripts [][]byte, pub []float64, rank []int) freqOutcome {
	o := freqOutcome{filters: len(crawl)}
	if len(crawl) == 0 {
		return o
	}
	l := int(crawl[0].f.NumBits())
	counts := map[string]int{}
	bfs := map[string]bitvec{}
	truth := map[string]int{}
	first := map[string]int{}
	for i, c := range crawl {
		bv := newBitvec(l)
		for p := range l {
			if c.f.Bits()[p/bitsPerByte]&(1<<(p%bitsPerByte)) != 0 {
				bv.set(p)
			}
		}
		key := bv.key()
		if counts[key] == 0 {
			first[key] = i
			bfs[key] = bv
			truth[key] = -1
			if cl := clients[c.client]; len(cl.own) == 0 {
				truth[key] = rank[cl.list]
			}
		}
		counts[key]++
	}
	for _, c := range counts {
		if c >= freqThreshold {
			o.frequent++
		}
	}
	pairs := alignByFrequency(counts, bfs, truth, pub, freqThreshold, false)
	byRank := make([]int, len(rank))
	for v, r := range rank {
		byRank[r] = v
	}
	gramsOf := func(r int) []string {
		var g []string
		for _, si := range lists[byRank[r]] {
			g = append(g, string(scripts[si]))
		}
		return g
	}
	alignedKey := map[string]bool{}
	// The true positions of each script under the tweaks of the aligned
	// filters that hold it.
	truePos := map[string]map[int]bool{}
	for _, p := range pairs {
		o.pairs++
		if p.right {
			o.pairsRight++
		}
		key := p.bf.key()
		alignedKey[key] = true
		f := crawl[first[key]].f
		for _, g := range gramsOf(p.value) {
			if truePos[g] == nil {
				truePos[g] = map[int]bool{}
			}
			for _, q := range f.BitPositions([]byte(g)) {
				truePos[g][int(q)] = true
			}
		}
	}
	lr := learn(pairs, gramsOf, l)
	learnedMinus, learnedPlus := map[string][]int{}, map[string][]int{}
	for p := range l {
		for g := range lr.plus[p] {
			o.plusPairs++
			learnedPlus[g] = append(learnedPlus[g], p)
			if truePos[g][p] {
				o.plusTrue++
			}
		}
		for g := range lr.cand[p] {
			o.candPairs++
			learnedMinus[g] = append(learnedMinus[g], p)
			if truePos[g][p] {
				o.candTrue++
			}
		}
	}
	// Claims in every filter never aligned: a learned script whose
	// learned positions are all set.
	claim := func(bv bitvec, ps []int) bool {
		if len(ps) == 0 {
			return false
		}
		for _, p := range ps {
			if !bv.has(p) {
				return false
			}
		}
		return true
	}
	for _, c := range crawl {
		bv := newBitvec(l)
		for p := range l {
			if c.f.Bits()[p/bitsPerByte]&(1<<(p%bitsPerByte)) != 0 {
				bv.set(p)
			}
		}
		if alignedKey[bv.key()] {
			continue
		}
		held := map[string]bool{}
		for _, si := range lists[clients[c.client].list] {
			held[string(scripts[si])] = true
		}
		o.members += len(held)
		for g, ps := range learnedMinus {
			if claim(bv, ps) {
				o.claims++
				if held[g] {
					o.right++
				}
			}
		}
		for g, ps := range learnedPlus {
			if claim(bv, ps) {
				o.plusClaims++
				if held[g] {
					o.plusRight++
				}
			}
		}
		for _, s := range scripts {
			if c.f.Matches(s) {
				o.dClaims++
				if held[string(s)] {
					o.dRight++
				}
			}
		}
	}
	return o
}
