package privacy

import (
	"context"
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/joint"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
)

// The saturation replay (docs/PRIVACY-MODEL.md, formula 6): under BLOOM_UPDATE_ALL (and
// P2PUBKEY_ONLY for key outputs) the serving node inserts the outpoint of
// every output that matched, false positives included, so its copy of the
// filter fills block after block and its false-positive rate climbs. The
// replay does exactly what the node did, with bip37.FilterBlock
// (MatchTxAndUpdate), over the blocks each filter served: from the height
// of its filterload to the peer's next filterload or filterclear (or the
// tip), applying the peer's filteradds as they came.

// satGen is one generation's server-side filter during the replay.
type satGen struct {
	gen      replay.Generation
	seq      uint64 // its filterload's transcript record number
	filter   *bip37.Filter
	from     int32 // first block filtered
	to       int32 // last block filtered
	adds     []replay.Event
	matched  uint64
	wallet   uint64
	lastEmit int32
}

// saturation replays every generation over its blocks.
func (a *analysis) saturation(ctx context.Context) (Curve, error) {
	c := Curve{Stage: StageSaturation}
	tip, err := a.in.Chain.BestHeight()
	if err != nil {
		return c, fmt.Errorf("%w: best height: %w", element.ErrChain, err)
	}
	gens, err := a.saturationGens(tip)
	if err != nil {
		return c, err
	}
	every := a.in.SaturationEvery
	if every <= 0 {
		every = defaultSaturationEvery
	}
	walletTxs := element.NewWalletTxs(element.NewSetFromCandidates(a.in.Truth))
	err = element.WalkChain(ctx, a.in.Chain, 0, tip, func(h int32, b *wire.MsgBlock) error {
		wallet := walletTxs.Block(b)
		for _, g := range gens {
			if h < g.from || h > g.to {
				continue
			}
			g.applyAdds(h)
			_, idx := bip37.FilterBlock(g.filter, b)
			g.matched += uint64(len(idx))
			for _, i := range idx {
				if wallet[i] {
					g.wallet++
				}
			}
			if (h-g.from+1)%every == 0 || h == g.to {
				c.Points = append(c.Points, a.saturationPoint(len(c.Points), h, g))
			}
		}
		return nil
	})
	return c, err
}

// saturationGens returns each generation with its block window and the
// filteradds that reached it, in order.
func (a *analysis) saturationGens(tip int32) ([]*satGen, error) {
	var out []*satGen
	for _, g := range a.tl.Generations {
		load := a.tl.Events[g.Load]
		f, err := bip37.Deserialize(load.Record.Filter)
		if err != nil {
			return nil, fmt.Errorf("%w: filter #%d: %w", replay.ErrBadFilterRecord, load.Record.Seq, err)
		}
		f.SetRules(a.in.ServerRules)
		sg := &satGen{gen: g, seq: load.Record.Seq, filter: f, from: load.Record.Height + 1, to: tip}
		for _, e := range a.tl.Events[g.Load+1:] {
			if e.Record.Peer != g.Peer {
				continue
			}
			if e.Record.Kind != transcript.KindFilterAdd {
				sg.to = min(sg.to, e.Record.Height)
				break
			}
			if e.State >= 0 {
				sg.adds = append(sg.adds, e)
			}
		}
		out = append(out, sg)
	}
	return out, nil
}

// applyAdds inserts the filteradds sent before block h.
func (g *satGen) applyAdds(h int32) {
	for len(g.adds) > 0 && g.adds[0].Record.Height < h {
		g.filter.Add(g.adds[0].Record.Data)
		g.adds = g.adds[1:]
	}
}

// saturationPoint reports one generation's server filter after block h.
// The wallet's transactions (TxWallet) and the precision and entropy
// need the truth (Point.Scored).
func (a *analysis) saturationPoint(step int, h int32, g *satGen) Point {
	f := g.filter
	rate := f.CurrentFPRate()
	p := Point{
		Step: step, Kind: KindBlock, Height: h, Peer: g.gen.Peer, Filters: 1,
		Label:       fmt.Sprintf("block %d (filter #%d, %s)", h, g.seq, g.gen.Peer),
		EstElements: f.EstimatedElements(), EstElementsCI: estElementsInterval(f), FPRate: rate,
		Fill:      float64(f.BitsSet()) / float64(max(f.NumBits(), 1)),
		TxMatched: g.matched, TxWallet: g.wallet,
	}
	je := &jointEval{joint: joint.NewJoint(), everyForm: []bool{false}, single: []float64{rate}, rate: rate, forms: map[int]joint.RateBounds{}}
	je.joint.Add(f)
	e := a.expectedFP(je, a.res.FormCounts, a.res.TruthCounts)
	p.ExpectedFP, p.ExpectedFPLower, p.IndependentFP = e.upper, e.lower, e.independent
	if a.hasTruth {
		members := float64(a.res.Truth())
		p.Scored, p.Members = true, members
		p.ExpectedPrecision = stats.ExpectedPrecision(members, 0, p.ExpectedFP)
		p.ExpectedEntropy = stats.ExpectedEntropy(members, 0, p.ExpectedFP)
	}
	p.EstElements = finiteOr(p.EstElements, -1)
	return p
}
