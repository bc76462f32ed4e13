package element

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// The two-form test for outpoints. Under BLOOM_UPDATE_ALL a
// wallet that inserts its scripts' data pushes also inserts the outpoint
// of each of its unspent outputs (bloomwatch does: filterpolicy.BuildFilter), so
// that the spends match. For an address holding a coin at the filter's
// load both forms are then in the filter, and an adversary that knows the
// chain can require both, as it requires a public key and its hash
// (formula 4): a non-member with u unspent outputs survives with
// probability f^(1+u) instead of f.

// OutPointSize is the length of a serialized outpoint as BIP37 inserts
// and tests it: the 32-byte txid, then the output index, little-endian.
const OutPointSize = chainhash.HashSize + 4

// OutPointForm returns op serialized as a BIP37 filter element (what
// bip37.Filter.AddOutPoint inserts).
func OutPointForm(op wire.OutPoint) []byte {
	b := make([]byte, OutPointSize)
	copy(b, op.Hash[:])
	binary.LittleEndian.PutUint32(b[chainhash.HashSize:], op.Index)
	return b
}

// ChainOutpointUniverse returns the candidates of the two-form test for
// outpoints as of height at (the chain's tip when at < 0): every distinct
// script push paid by a single-key or script-hash output (P2PKH, P2WPKH,
// P2SH, P2WSH, P2TR) at heights 0 to at, in order of first appearance,
// whose further forms are the outpoints of its outputs still unspent at
// at, oldest first (at most MaxFormsPerLine - 1 of them: the rest are
// left out). A candidate with no unspent output has its push alone.
// FirstSeen is the height of its first payment. Bare-key and multisig
// outputs, which pay keys rather than one push, are left out.
//
// A filter loaded at height at holds, for each wallet address, its push
// and exactly these outpoints, so this is the universe to test it with;
// an earlier filter lacks the outpoints created after its load.
func ChainOutpointUniverse(ctx context.Context, ch Chain, at int32) (SliceUniverse, error) {
	tip, err := ch.BestHeight()
	if err != nil {
		return nil, fmt.Errorf("%w: best height: %w", ErrChain, err)
	}
	if at < 0 || at > tip {
		at = tip
	}
	type utxo struct {
		cand  int
		order uint64
	}
	var out SliceUniverse
	index := map[string]int{}
	unspent := map[wire.OutPoint]utxo{}
	var order uint64
	err = WalkChain(ctx, ch, 0, at, func(h int32, b *wire.MsgBlock) error {
		for _, tx := range b.Transactions {
			for _, in := range tx.TxIn {
				delete(unspent, in.PreviousOutPoint)
			}
			var txid chainhash.Hash
			hashed := false
			for vout, o := range tx.TxOut {
				cands := OutputCandidates(o.PkScript)
				if len(cands) != 1 || len(cands[0].Forms) != 1 {
					continue
				}
				key := cands[0].Key()
				i, ok := index[key]
				if !ok {
					i = len(out)
					index[key] = i
					out = append(out, Candidate{Forms: [][]byte{append([]byte(nil), cands[0].Forms[0]...)}, FirstSeen: h})
				}
				if !hashed {
					txid, hashed = tx.TxHash(), true
				}
				unspent[wire.OutPoint{Hash: txid, Index: uint32(vout)}] = utxo{cand: i, order: order}
				order++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	type held struct {
		op    wire.OutPoint
		order uint64
	}
	byCand := map[int][]held{}
	for op, u := range unspent {
		byCand[u.cand] = append(byCand[u.cand], held{op, u.order})
	}
	for i, hs := range byCand {
		slices.SortFunc(hs, func(a, b held) int { return cmp.Compare(a.order, b.order) })
		for _, x := range hs {
			if len(out[i].Forms) == MaxFormsPerLine {
				break
			}
			out[i].Forms = append(out[i].Forms, OutPointForm(x.op))
		}
	}
	return out, nil
}
