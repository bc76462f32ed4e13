package element

import (
	"context"
	"fmt"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Chain is the adversary's copy of the block chain, for the attacks that
// need transactions (saturation replay, transaction-graph pruning) and for
// building a universe from what is on chain. Implementations: MemChain
// here, and btcdrpc.Chain (package privacy/btcdrpc) over a btcd node's
// JSON-RPC.
type Chain interface {
	// BestHeight returns the height of the chain's tip.
	BestHeight() (int32, error)
	// BlockAt returns the block at height (0 <= height <= BestHeight) on
	// the best chain.
	BlockAt(height int32) (*wire.MsgBlock, error)
}

// MemChain is an in-memory chain: block i is at height i.
type MemChain []*wire.MsgBlock

// BestHeight implements Chain; an empty chain has height -1.
func (c MemChain) BestHeight() (int32, error) { return int32(len(c)) - 1, nil }

// BlockAt implements Chain.
func (c MemChain) BlockAt(height int32) (*wire.MsgBlock, error) {
	if height < 0 || int(height) >= len(c) {
		return nil, fmt.Errorf("%w: no block at height %d (tip %d)", ErrChain, height, len(c)-1)
	}
	return c[height], nil
}

var _ Chain = MemChain(nil)

// WalkChain calls fn for every block from height from to to inclusive,
// stopping at the first error or when ctx ends.
func WalkChain(ctx context.Context, ch Chain, from, to int32, fn func(height int32, b *wire.MsgBlock) error) error {
	for h := max(from, 0); h <= to; h++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := ch.BlockAt(h)
		if err != nil {
			return fmt.Errorf("%w: block %d: %w", ErrChain, h, err)
		}
		if err := fn(h, b); err != nil {
			return err
		}
	}
	return nil
}

// Sizes of public keys as pushed in scripts.
// OutputCandidates returns the candidates an output script pays, as
// ChainUniverse reads them: the data push of a hash-based script (P2PKH,
// P2WPKH, P2SH, P2WSH, P2TR), and [hash160(key), key] for each key of a
// bare pubkey or multisig script. Null-data and non-standard scripts pay
// no one and yield nothing.
func OutputCandidates(pkScript []byte) []Candidate {
	switch txscript.GetScriptClass(pkScript) {
	case txscript.PubKeyHashTy, txscript.WitnessV0PubKeyHashTy, txscript.ScriptHashTy,
		txscript.WitnessV0ScriptHashTy, txscript.WitnessV1TaprootTy:
		pushes, err := txscript.PushedData(pkScript)
		if err != nil || len(pushes) == 0 {
			return nil
		}
		return []Candidate{{Forms: [][]byte{pushes[len(pushes)-1]}}}
	case txscript.PubKeyTy, txscript.MultiSigTy:
		pushes, err := txscript.PushedData(pkScript)
		if err != nil {
			return nil
		}
		var out []Candidate
		for _, p := range pushes {
			if filterpolicy.IsPubKey(p) {
				out = append(out, Candidate{Forms: [][]byte{btcutil.Hash160(p), p}})
			}
		}
		return out
	}
	return nil
}

// ChainUniverse returns every distinct candidate paid on chain at heights
// 0 to upTo (the chain's tip when upTo < 0), in order of first appearance,
// with the height of that appearance (FirstSeen): see OutputCandidates. A public key revealed by a spend is added as the
// second form of its hash160 candidate, so the both-forms test can use it.
// The universe is held in memory: it suits test, regtest and simnet
// chains; a mainnet-sized universe should be exported once to an element
// file and streamed.
func ChainUniverse(ctx context.Context, ch Chain, upTo int32) (SliceUniverse, error) {
	tip, err := ch.BestHeight()
	if err != nil {
		return nil, fmt.Errorf("%w: best height: %w", ErrChain, err)
	}
	if upTo < 0 || upTo > tip {
		upTo = tip
	}
	var out SliceUniverse
	index := map[string]int{}
	add := func(c Candidate) {
		key := c.Key()
		i, ok := index[key]
		if !ok {
			index[key] = len(out)
			out = append(out, c.Clone())
			return
		}
		// Merge a form learned later (a P2PK output of a key first seen
		// as a hash).
		for _, f := range c.Forms[1:] {
			out[i] = withForm(out[i], f)
		}
	}
	err = WalkChain(ctx, ch, 0, upTo, func(h int32, b *wire.MsgBlock) error {
		for _, tx := range b.Transactions {
			for _, in := range tx.TxIn {
				pk := filterpolicy.RevealedPubKey(in)
				if pk == nil {
					continue
				}
				if i, ok := index[string(btcutil.Hash160(pk))]; ok {
					out[i] = withForm(out[i], pk)
				}
			}
			for _, o := range tx.TxOut {
				for _, c := range OutputCandidates(o.PkScript) {
					c.FirstSeen = h
					add(c)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// withForm returns c with form appended unless c already has it.
func withForm(c Candidate, form []byte) Candidate {
	for _, f := range c.Forms {
		if string(f) == string(form) {
			return c
		}
	}
	if len(c.Forms) >= MaxFormsPerLine {
		return c
	}
	c.Forms = append(c.Forms, append([]byte(nil), form...))
	return c
}
