package experiments

import (
	"math/rand/v2"
	"slices"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/btcsuite/btcd/wire"
)

// Noise from RAPPOR's idea. RAPPOR's permanent
// randomized response memoizes noise per value so repeated reports do not
// average it away; its instantaneous response adds fresh noise per report.
// A BIP37 filter tolerates only added 1-bits (a cleared bit would miss a
// payment) and changes size, so the two become, in BIP37:
//
//   - persisted decoys: elements chosen once and inserted in every filter
//     from then on, which survive resizes and the intersection of filters;
//   - fresh noise: decoys drawn anew for every filter, which the
//     intersection of two filters removes.
//
// One-sided noise of this kind gives no differential-privacy guarantee: a
// wallet element is in every filter with probability 1, so the likelihood
// ratio between "the wallet holds x" and "it does not" is unbounded for
// any x it holds. The experiments measure what the noise buys instead.
//
// Decoys are real on-chain addresses (a light client learns them from the
// transactions it receives), so they cost bandwidth: the peer sends their
// transactions. Graph-near decoys are the wallet's counterparties' keys,
// read from the wallet's own transactions (the payer's inputs and change,
// the payee's output): the transaction graph links them to the wallet as
// closely as the wallet's own keys.

// NoiseKind is a decoy policy.
type NoiseKind int

// The decoy policies.
const (
	// NoisePersistedRandom: Count random on-chain addresses, chosen at
	// the first filter, in every filter after.
	NoisePersistedRandom NoiseKind = iota + 1
	// NoiseFreshRandom: Count random on-chain addresses drawn anew for
	// every filter.
	NoiseFreshRandom
	// NoisePersistedNear: up to Count keys of the wallet's
	// counterparties, taken from its transactions as they come, kept in
	// every filter after.
	NoisePersistedNear
)

// String names the policy.
func (k NoiseKind) String() string {
	switch k {
	case NoisePersistedRandom:
		return "persisted random decoys"
	case NoiseFreshRandom:
		return "fresh random decoys per filter"
	case NoisePersistedNear:
		return "persisted graph-near decoys"
	}
	return "no noise"
}

// noiseStream separates the decoys' random choices.
const noiseStream = 3000

// DecoySource returns a ClientOptions.Decoys function for kind, count
// decoys per wallet, deterministic for seed. Its state (the persisted
// decoys) lives in the closure: use one source per simulation.
func (p *Population) DecoySource(kind NoiseKind, count int, seed uint64) func(w *PopWallet, h int32) [][]byte {
	persisted := map[int][]int32{}
	near := map[int][][]byte{}
	rngs := map[int]*rand.Rand{}
	rng := func(w int) *rand.Rand {
		if rngs[w] == nil {
			rngs[w] = rand.New(rand.NewPCG(seed, noiseStream+uint64(w)))
		}
		return rngs[w]
	}
	txs := p.walletTxRefs()
	return func(w *PopWallet, h int32) [][]byte {
		var ids []int32
		switch kind {
		case NoisePersistedRandom:
			if persisted[w.ID] == nil {
				persisted[w.ID] = p.randomKeys(rng(w.ID), count, h)
			}
			ids = persisted[w.ID]
		case NoiseFreshRandom:
			ids = p.randomKeys(rng(w.ID), count, h)
		case NoisePersistedNear:
			// The client's own chooser (filterpolicy.GraphNear, sync --decoys)
			// over the wallet's transactions up to h.
			var mine []*wire.MsgTx
			for _, ref := range txs[w.ID] {
				if ref.height > h {
					break
				}
				mine = append(mine, p.Chain[ref.height].Transactions[ref.index])
			}
			own := func(push []byte) bool {
				k := p.keyOfPush(push)
				return k >= 0 && p.Keys[k].Owner == int32(w.ID)
			}
			near[w.ID] = filterpolicy.GraphNear(mine, own, near[w.ID], count)
			return near[w.ID]
		}
		out := make([][]byte, len(ids))
		for i, k := range ids {
			out[i] = p.Keys[k].Hash160
		}
		return out
	}
}

// randomKeys draws n distinct background keys first paid at or before h.
func (p *Population) randomKeys(rng *rand.Rand, n int, h int32) []int32 {
	limit := len(p.Keys)
	for limit > 0 && p.Keys[limit-1].FirstSeen > h {
		limit--
	}
	var out []int32
	for tries := 0; len(out) < n && tries < n*decoyTries && limit > 0; tries++ {
		k := int32(rng.IntN(limit))
		if p.Keys[k].Owner < 0 && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// decoyTries bounds the draws per decoy wanted.
const decoyTries = 20

// txRef is a transaction of the chain.
type txRef struct {
	height int32
	index  int
}

// walletTxRefs lists each wallet's transactions in chain order.
func (p *Population) walletTxRefs() [][]txRef {
	if p.txRefs != nil {
		return p.txRefs
	}
	ix := p.indexChain()
	out := make([][]txRef, len(p.Wallets))
	for h, owners := range ix.txOwners {
		for i, ws := range owners {
			for _, w := range ws {
				out[w] = append(out[w], txRef{height: int32(h), index: i})
			}
		}
	}
	p.txRefs = out
	return out
}
