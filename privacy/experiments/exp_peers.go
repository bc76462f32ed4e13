package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/joint"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// The peers experiment: a wallet connected to several
// peers, some of which collude, under three policies: the same filter to
// every peer (one tweak), the same elements under a tweak per peer, and
// the elements sharded over the peers (each peer a filter of its share).
// For c colluding peers that pool and link their filters, the adversary
// takes the intersection of same-element filters and the union of shards.
// Given the filters, candidates match independently: the false positives
// pooled over the trials are a Poisson count, tested against the joint
// model of those filters. bloomwatch sizes a filter for twice its
// elements rounded up to a power of two (filterpolicy.FilterCapacity), so its rate
// as loaded is far below the target: both are printed.
const (
	peersDefault   = 8
	peersKeys      = 50
	peersUniverse  = 2_000_000
	peersTrials    = 10
	peersRate      = 0.01
	peersKeyStream = 4000
	// elementsPerTx is privacy.DefaultElementsPerTx: the elements a
	// server tests per transaction, for the bandwidth formula.
	elementsPerTx = privacy.DefaultElementsPerTx
)

// Sharing policies.
const (
	policySame    = "same filter to every peer (one tweak)"
	policyPerPeer = "same elements, a tweak per peer"
	policySharded = "elements sharded over the peers"
)

// bloomwatchFilter builds bloomwatch's filter (filterpolicy.FilterSize) for the
// elements at rate, with tweak, and k hash functions when k > 0.
func bloomwatchFilter(els [][]byte, rate float64, tweak uint32, k int) (*bip37.Filter, error) {
	size, hk := filterpolicy.FilterSize(len(els), rate)
	if k > 0 {
		hk = uint32(k)
	}
	f, err := bip37.NewFilterFromBits(make([]byte, size), hk, tweak, bip37.UpdateAll)
	if err != nil {
		return nil, err
	}
	for _, e := range els {
		f.Add(e)
	}
	return f, nil
}

// peersSetup is the filters of one trial under each policy.
type peersSetup struct {
	keys    [][]byte
	same    int   // index of the one shared filter
	perPeer []int // indexes of the per-peer filters
	shards  []int // indexes of the shard filters
	shardOf []int // shard of each key
}

// runPeers measures each policy for c = 1..P colluding peers.
func runPeers(ctx context.Context, cfg Config) (*Result, error) {
	p := orDefault(cfg.Peers, peersDefault)
	n := orDefault(cfg.Keys, peersKeys)
	u := orDefault(cfg.Universe, peersUniverse)
	trials := orDefault(cfg.Trials, peersTrials)
	rate := orDefault(cfg.FPRate, peersRate)
	if p < 1 || n < p {
		return nil, fmt.Errorf("%w: %d keys over %d peers: want at least one key per peer", ErrBadConfig, n, p)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, peersKeyStream))
	var filters []*bip37.Filter
	var setups []peersSetup
	var truth []element.Candidate
	add := func(f *bip37.Filter) int { filters = append(filters, f); return len(filters) - 1 }
	for t := range trials {
		var st peersSetup
		for i := range n {
			k := synthKey(cfg.Seed, peersKeyStream+uint64(t), uint64(i))
			st.keys = append(st.keys, k.Hash160)
			st.shardOf = append(st.shardOf, i%p)
			truth = append(truth, element.Candidate{Forms: [][]byte{k.Hash160}})
		}
		f, err := bloomwatchFilter(st.keys, rate, rng.Uint32(), cfg.HashFuncs)
		if err != nil {
			return nil, err
		}
		st.same = add(f)
		for range p {
			f, err := bloomwatchFilter(st.keys, rate, rng.Uint32(), cfg.HashFuncs)
			if err != nil {
				return nil, err
			}
			st.perPeer = append(st.perPeer, add(f))
		}
		shardTweak := rng.Uint32()
		for sh := range p {
			var els [][]byte
			for i, k := range st.keys {
				if st.shardOf[i] == sh {
					els = append(els, k)
				}
			}
			f, err := bloomwatchFilter(els, rate, shardTweak, cfg.HashFuncs)
			if err != nil {
				return nil, err
			}
			st.shards = append(st.shards, add(f))
		}
		setups = append(setups, st)
	}
	univ := element.NewConcat(element.SliceUniverse(truth), scan.Synthetic{Seed: cfg.Seed, Count: u})
	hits, err := scanChunks(ctx, univ, scan.Config{Filters: filters, Workers: cfg.Workers}, "scan", cfg.progress)
	if err != nil {
		return nil, err
	}
	member := map[string]int{} // key -> trial
	for t, st := range setups {
		for _, k := range st.keys {
			member[string(k)] = t
		}
	}
	out := &Result{
		Name:  "peers",
		Title: "several peers: the same filter to all, a tweak per peer, or sharded elements, against c colluding peers",
		Params: []Param{
			param("peers", p), param("keys", n), param("target_rate", rate), param("universe", u), param("trials", trials),
		},
	}
	uf := float64(u)
	tf := float64(trials)
	var loaded []float64
	for _, f := range filters {
		loaded = append(loaded, f.CurrentFPRate())
	}
	ones := make([]float64, len(loaded))
	for i := range ones {
		ones[i] = 1
	}
	size, k := filterpolicy.FilterSize(n, rate)
	out.Rows = append(out.Rows,
		clusterPropRow(fmt.Sprintf("rate as loaded (X/n)^k of a %d-key filter (target %g)", n, rate), loaded[:1+p], ones[:1+p], "filters of the first trial").
			withFormula(bip37.FalsePositiveRate(uint64(size)*bitsPerByte, k, float64(n))).
			withNote(fmt.Sprintf("%d bytes, k = %d: sized for capacity %d (filterpolicy.FilterCapacity)", size, k, filterpolicy.FilterCapacity(n))))
	charts := map[string]*privacy.Series{}
	recall := map[string]*privacy.Series{}
	for _, pol := range []string{policySame, policyPerPeer, policySharded} {
		charts[pol] = &privacy.Series{Name: pol + " (measured, 95 % Poisson)", Points: true, Group: pol}
		recall[pol] = &privacy.Series{Name: pol, Points: true}
	}
	formula := map[string]*privacy.Series{
		policySame:    {Name: policySame + " (formula)", Group: policySame},
		policyPerPeer: {Name: policyPerPeer + " (joint model)", Group: policyPerPeer},
		policySharded: {Name: policySharded + " (formula)", Group: policySharded},
	}
	for c := 1; c <= p; c++ {
		for _, pol := range []string{policySame, policyPerPeer, policySharded} {
			var fp, tp, members uint64
			var expect float64
			for t, st := range setups {
				var sets []int
				union := false
				switch pol {
				case policySame:
					sets = []int{st.same}
				case policyPerPeer:
					sets = st.perPeer[:c]
				case policySharded:
					sets, union = st.shards[:c], true
				}
				var fs []*bip37.Filter
				for _, i := range sets {
					fs = append(fs, filters[i])
				}
				if union {
					for _, f := range fs {
						expect += f.CurrentFPRate() * uf
					}
				} else {
					expect += joint.JointRate(fs) * uf
				}
				members += uint64(n)
				for _, h := range hits {
					in := !union
					for _, i := range sets {
						if union {
							in = in || h.Any.Has(i)
						} else {
							in = in && h.Any.Has(i)
						}
					}
					if !in {
						continue
					}
					if owner, ok := member[string(h.Candidate.Forms[0])]; ok {
						if owner == t {
							tp++
						}
						continue
					}
					fp++
				}
			}
			row := poissonRow(fmt.Sprintf("%d of %d peers collude, %s: false positives per wallet", c, p, pol), fp, tf).
				withFormula(expect / tf).withSource(srcFormula + " (joint model of the trials' filters)").test(altFactor(2)).
				withNote(peersBandwidth(pol, filters, setups, c, p))
			rec := float64(tp) / float64(members)
			recRow := deterministicRow(fmt.Sprintf("%d of %d peers collude, %s: recall (the wallet's keys they see)", c, p, pol), rec).
				withNote("fixed by the policy: no false negatives, and shard i holds keys i, i+P, ...")
			out.Rows = append(out.Rows, row, recRow)
			s := charts[pol]
			s.X, s.Y, s.YLo, s.YHi = append(s.X, float64(c)), append(s.Y, row.Measured), append(s.YLo, row.Interval[0]), append(s.YHi, row.Interval[1])
			fs := formula[pol]
			fs.X, fs.Y = append(fs.X, float64(c)), append(fs.Y, expect/tf)
			r := recall[pol]
			r.X, r.Y = append(r.X, float64(c)), append(r.Y, rec)
		}
	}
	fpChart := privacy.Chart{Title: "false positives left to c colluding peers (measured here)", XLabel: "colluding peers c",
		YLabel: "false positives per wallet", LogY: true,
		Notes: []string{fmt.Sprintf("%d keys, target rate %g (as loaded %.2g), %d synthetic candidates, %d wallets; intersection for same-element filters, union for shards",
			n, rate, loaded[0], u, trials)}}
	recChart := privacy.Chart{Title: "share of the wallet's keys the colluding peers see", XLabel: "colluding peers c", YLabel: "recall",
		Notes: []string{"fixed by each policy, not measured"}}
	for _, pol := range []string{policySame, policyPerPeer, policySharded} {
		fpChart.Series = append(fpChart.Series, *formula[pol], *charts[pol])
		recChart.Series = append(recChart.Series, *recall[pol])
	}
	out.Charts = []privacy.Chart{fpChart, recChart}
	return out, nil
}

// peersBandwidth describes a policy's cost for the wallet: the
// merkleblocks it needs per block and the false-positive transactions
// expected per 1,000 transactions, summed over the peers that filter
// every block (elementsPerTx elements tested per transaction).
func peersBandwidth(pol string, filters []*bip37.Filter, setups []peersSetup, c, p int) string {
	st := setups[0]
	var rate float64
	blocksFrom := 1
	switch pol {
	case policySame:
		rate = stats.AnyFormRate(filters[st.same].CurrentFPRate(), elementsPerTx)
	case policyPerPeer:
		rate = stats.AnyFormRate(filters[st.perPeer[0]].CurrentFPRate(), elementsPerTx)
	case policySharded:
		blocksFrom = p
		for _, i := range st.shards {
			rate += stats.AnyFormRate(filters[i].CurrentFPRate(), elementsPerTx)
		}
	}
	return fmt.Sprintf("bandwidth: every block from %d peer(s), %.3g false-positive txs per 1,000 txs (formula)", blocksFrom, 1000*rate)
}
