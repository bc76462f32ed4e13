package privacy

import (
	"context"
	"slices"

	"github.com/bloomwatch/bloomwatch/internal/unionfind"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/btcsuite/btcd/wire"
)

// The transaction-graph attack (docs/PRIVACY-MODEL.md, formula 7). A false positive is an
// address unrelated to the wallet, so it is linked to another matched
// address by a transaction only by chance (probability about f per link
// tested), while the wallet's own addresses are linked by its spending:
// common-input ownership (a transaction spending from two matched
// addresses) and change (a transaction spending from a matched address and
// paying another). C linked matches are all false with probability about
// f^C, so the adversary keeps the linked candidates and drops isolated
// ones, trading recall (the wallet's addresses that were never spent from
// or paid as change) for precision. The links are taken from the whole
// chain the adversary holds: the analysis is retrospective.

// linkGraph holds the links between hits found on chain.
type linkGraph struct {
	edges [][2]int32
	// kinds holds, per edge, the kinds of link that made it
	// (linkCoSpend, linkChange).
	kinds []uint8
}

// Kinds of link between two hits.
const (
	// linkCoSpend: a transaction spends from both (common-input
	// ownership).
	linkCoSpend = 1 << iota
	// linkChange: a transaction spends from one and pays the other.
	linkChange
)

// buildLinkGraph walks the whole chain and records every co-spend and
// change link between two hits. Only outputs paying a hit are indexed, so
// memory grows with the hits' outputs, not with the chain.
func buildLinkGraph(ctx context.Context, ch element.Chain, hits []scan.Hit) (*linkGraph, error) {
	formIndex := map[string]int32{}
	for i, h := range hits {
		for _, f := range h.Candidate.Forms {
			formIndex[string(f)] = int32(i)
		}
	}
	tip, err := ch.BestHeight()
	if err != nil {
		return nil, err
	}
	owner := map[wire.OutPoint]int32{}
	seen := map[[2]int32]int{}
	g := &linkGraph{}
	link := func(x, y int32, kind uint8) {
		if x == y {
			return
		}
		e := [2]int32{min(x, y), max(x, y)}
		if i, ok := seen[e]; ok {
			g.kinds[i] |= kind
			return
		}
		seen[e] = len(g.edges)
		g.edges = append(g.edges, e)
		g.kinds = append(g.kinds, kind)
	}
	err = element.WalkChain(ctx, ch, 0, tip, func(_ int32, b *wire.MsgBlock) error {
		for _, tx := range b.Transactions {
			var owners []int32
			for _, in := range tx.TxIn {
				if o, ok := owner[in.PreviousOutPoint]; ok {
					delete(owner, in.PreviousOutPoint)
					if !slices.Contains(owners, o) {
						owners = append(owners, o)
					}
				}
			}
			txid := tx.TxHash()
			for vout, out := range tx.TxOut {
				payee := int32(-1)
				for _, c := range element.OutputCandidates(out.PkScript) {
					for _, f := range c.Forms {
						if i, ok := formIndex[string(f)]; ok {
							payee = i
						}
					}
				}
				if payee < 0 {
					continue
				}
				owner[wire.OutPoint{Hash: txid, Index: uint32(vout)}] = payee
				if len(owners) > 0 {
					link(owners[0], payee, linkChange)
				}
			}
			for _, o := range owners[min(1, len(owners)):] {
				link(owners[0], o, linkCoSpend)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// prune returns the members of set linked to another member of set, plus
// those keep marks (elements revealed in clear), in set's order.
func (g *linkGraph) prune(set []int32, keep []bool) []int32 {
	pos := make(map[int32]int32, len(set))
	for p, i := range set {
		pos[i] = int32(p)
	}
	sets := unionfind.New(len(set))
	for _, e := range g.edges {
		px, okx := pos[e[0]]
		py, oky := pos[e[1]]
		if okx && oky {
			sets.Union(int(px), int(py))
		}
	}
	var out []int32
	for p, i := range set {
		if sets.Size(p) > 1 || keep[i] {
			out = append(out, i)
		}
	}
	return out
}
