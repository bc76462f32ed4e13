package privacy

import (
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
)

// The seed's estimators used as an attack: filters of one
// wallet that share a tweak and hash count are linkable by those alone,
// and comparing each reload with the filter before it tells the observer
// how many elements the wallet added (a new address, a received coin)
// and dropped (a spent coin), without testing a single candidate.

// reloadEstimates compares every generation with the most recent earlier
// generation of the same tweak and hash count holding a different filter.
// A generation whose filter an earlier generation already held (the same
// filter sent to another peer) tells nothing new and is skipped.
func (a *analysis) reloadEstimates() []replay.ReloadEstimate {
	var truth [][]byte
	if a.hasTruth {
		truth = element.NewSetFromCandidates(a.in.Truth).Elements()
	}
	out := []replay.ReloadEstimate{}
	for i, g := range a.tl.Generations {
		fb := a.tl.States[g.Latest]
		if replay.MatchesAll(fb) {
			continue
		}
		prev, seen := -1, false
		for j := i - 1; j >= 0; j-- {
			h := a.tl.Generations[j]
			if h.Latest == g.Latest {
				seen = true
				break
			}
			fa := a.tl.States[h.Latest]
			if prev < 0 && !replay.MatchesAll(fa) && fa.Tweak() == fb.Tweak() && fa.HashFuncs() == fb.HashFuncs() {
				prev = j
			}
		}
		if seen || prev < 0 {
			continue
		}
		fa := a.tl.States[a.tl.Generations[prev].Latest]
		r, err := replay.EstimateReload(fa, fb)
		if err != nil {
			continue // unreachable: same tweak and k, neither matches all
		}
		rec := a.tl.Events[g.Load].Record
		r.Generation, r.PrevGeneration = i, prev
		r.PrevSeq = a.tl.Events[a.tl.Generations[prev].Load].Record.Seq
		r.Seq, r.Height, r.Peer, r.Reason = rec.Seq, rec.Height, rec.Peer, rec.Reason
		if a.hasTruth {
			r.TrueAdded, r.TrueDropped = 0, 0
			for _, e := range truth {
				inA, inB := fa.Matches(e), fb.Matches(e)
				switch {
				case inB && !inA:
					r.TrueAdded++
				case inA && !inB:
					r.TrueDropped++
				}
			}
		}
		out = append(out, r)
	}
	return out
}
