package element

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// WalletTxs tells a wallet's transactions apart, block by block, to score
// a replay of the server's filter against the truth: a transaction is the
// wallet's when it pays one of the wallet's elements or spends an output
// that did. It carries the wallet's outputs from one block to the next, so
// blocks must be fed once each, in chain order. It is not safe for
// concurrent use.
type WalletTxs struct {
	truth *Set
	outs  map[wire.OutPoint]bool
}

// NewWalletTxs returns a WalletTxs for the wallet whose elements (every
// form) are truth. An empty or nil truth marks no transaction.
func NewWalletTxs(truth *Set) *WalletTxs {
	return &WalletTxs{truth: truth, outs: map[wire.OutPoint]bool{}}
}

// Block reports, for each transaction of b, whether it is the wallet's.
func (w *WalletTxs) Block(b *wire.MsgBlock) []bool {
	return walletTxs(b, w.truth, w.outs)
}

// PaysWallet reports whether an output script pays one of the wallet's
// elements: whether any candidate the script pays (as ChainUniverse reads
// it) is in the truth.
func (w *WalletTxs) PaysWallet(pkScript []byte) bool {
	return paysWallet(w.truth, pkScript)
}

// walletTxs reports which transactions of b are the wallet's: those paying
// a truth element or spending an output that did. walletOuts carries the
// wallet's outputs from block to block.
func walletTxs(b *wire.MsgBlock, truth *Set, walletOuts map[wire.OutPoint]bool) []bool {
	out := make([]bool, len(b.Transactions))
	if truth.Len() == 0 {
		return out
	}
	for i, tx := range b.Transactions {
		for _, in := range tx.TxIn {
			if walletOuts[in.PreviousOutPoint] {
				delete(walletOuts, in.PreviousOutPoint)
				out[i] = true
			}
		}
		var txid chainhash.Hash
		hashed := false
		for vout, o := range tx.TxOut {
			if !paysWallet(truth, o.PkScript) {
				continue
			}
			if !hashed {
				txid, hashed = tx.TxHash(), true
			}
			walletOuts[wire.OutPoint{Hash: txid, Index: uint32(vout)}] = true
			out[i] = true
		}
	}
	return out
}

// paysWallet reports whether any candidate pkScript pays is in truth.
func paysWallet(truth *Set, pkScript []byte) bool {
	for _, c := range OutputCandidates(pkScript) {
		if truth.ContainsAny(c) {
			return true
		}
	}
	return false
}
