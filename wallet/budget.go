package wallet

import (
	"fmt"
	"math"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/watch"
)

// An unconfirmed transaction is only the word of the peer that relayed it:
// an SPV wallet cannot check that its inputs exist. A peer can fabricate
// one paying a wallet address from a made-up input, with any number of
// outputs, and relay as many as it likes. Everything such a transaction
// can add to the wallet is therefore bounded, per transaction and for the
// whole unconfirmed set, before anything is stored (ApplyMempoolTx
// refuses the transaction with a *watch.TxRefusal, changing nothing):
//
//   - MaxPendingTxSize: no standard transaction is larger (Bitcoin Core's
//     and btcd's MAX_STANDARD_TX_WEIGHT of 400,000 weight units holds at
//     most 100,000 bytes outside the witness), so no honest peer relays
//     one on mainnet;
//   - MaxPendingTxElements: the filter elements one transaction makes the
//     wallet watch, its outputs paying the wallet and the inputs it
//     guards against double spends (the payer's, see watchSet.guards);
//   - MaxPendingTxs, MaxPendingBytes, MaxPendingElements: the whole
//     unconfirmed set. A transaction that would take the set past one of
//     them is refused until confirmations or MempoolExpiry make room; it
//     is applied when a block confirms it, like any other.
//
// The first two are the relaying peer's fault (the node scores it); a
// full set is not, since a genuine payment meets it too once another
// peer filled it. With these bounds nothing a peer relays can take the
// filter past MaxPendingElements elements above the wallet's own, nor
// make the wallet store more than MaxPendingBytes of unconfirmed data.
const (
	// MaxPendingTxSize is the largest unconfirmed transaction kept, in
	// bytes without its witness (the form the wallet stores, see
	// stripWitness).
	MaxPendingTxSize = 100_000

	// MaxPendingTxElements is the most filter elements one unconfirmed
	// transaction may add: its outputs paying the wallet plus its inputs
	// that spend no wallet coin. A payment has a few; a transaction
	// paying one wallet address 70,000 times would otherwise have made
	// the filter unbuildable (BIP37 cannot represent that many elements
	// in 36,000 bytes) and the wallet slow to open.
	MaxPendingTxElements = 1_000

	// MaxPendingTxs is the most unconfirmed wallet transactions kept.
	MaxPendingTxs = 1_000

	// MaxPendingBytes bounds the total size of the unconfirmed wallet
	// transactions kept, without witnesses.
	MaxPendingBytes = 4 << 20

	// MaxPendingElements bounds the filter elements the unconfirmed
	// wallet transactions add in all: their outputs paying the wallet
	// and the inputs they guard.
	MaxPendingElements = 10_000

	// maxMempoolFalsePositives bounds the unconfirmed false positives
	// remembered (in memory only) so each is counted once; the set
	// starts afresh when full.
	maxMempoolFalsePositives = 10_000
)

// MempoolLimits are the budgets of unconfirmed transactions (see
// MaxPendingTxSize and the constants after it, the defaults).
type MempoolLimits struct {
	TxSize     int
	TxElements int
	Txs        int
	Bytes      int
	Elements   int
}

// DefaultMempoolLimits returns the default budgets.
func DefaultMempoolLimits() MempoolLimits {
	return MempoolLimits{
		TxSize:     MaxPendingTxSize,
		TxElements: MaxPendingTxElements,
		Txs:        MaxPendingTxs,
		Bytes:      MaxPendingBytes,
		Elements:   MaxPendingElements,
	}
}

// WithMempoolLimits replaces the budgets of unconfirmed transactions; a
// field of zero or less keeps its default.
func WithMempoolLimits(l MempoolLimits) Option {
	return func(o *options) {
		d := &o.mempool
		for _, p := range []struct{ dst, src *int }{
			{&d.TxSize, &l.TxSize}, {&d.TxElements, &l.TxElements}, {&d.Txs, &l.Txs},
			{&d.Bytes, &l.Bytes}, {&d.Elements, &l.Elements},
		} {
			if *p.src > 0 {
				*p.dst = *p.src
			}
		}
	}
}

// checkTx applies the consensus rules a transaction must meet whatever the
// chain holds (btcd's CheckTransactionSanity): at least one input and one
// output, every output value in [0, 21e6 BTC] and their sum too, no input
// twice, at most 1,000,000 bytes without witness, no null previous
// outpoint outside a coinbase. A transaction that fails them is invalid to
// the wallet, confirmed or not: it is never stored, and no sum the wallet
// makes can meet a negative or absurd amount from it.
func checkTx(tx *wire.MsgTx) error {
	if err := blockchain.CheckTransactionSanity(btcutil.NewTx(tx)); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidTx, err)
	}
	return nil
}

// refuse returns the refusal of an unconfirmed transaction.
func refuse(atFault bool, format string, args ...any) error {
	return &watch.TxRefusal{PeerAtFault: atFault, Err: fmt.Errorf(format, args...)}
}

// checkMempoolTx refuses an unconfirmed transaction that is invalid, a
// coinbase (which is never relayed unconfirmed) or larger than
// MaxPendingTxSize: each the relaying peer's fault.
func (w *Wallet) checkMempoolTx(tx *wire.MsgTx) error {
	if err := checkTx(tx); err != nil {
		return &watch.TxRefusal{PeerAtFault: true, Err: err}
	}
	if blockchain.IsCoinBaseTx(tx) {
		return refuse(true, "%w: a coinbase relayed as unconfirmed", ErrInvalidTx)
	}
	if size := tx.SerializeSizeStripped(); size > w.opts.mempool.TxSize {
		return refuse(true, "%w: %d bytes without witness, more than any standard transaction (MaxPendingTxSize %d)",
			ErrMempoolBudget, size, w.opts.mempool.TxSize)
	}
	return nil
}

// pendingCost is what one unconfirmed wallet transaction takes of the
// budgets.
type pendingCost struct {
	size int // serialized size as stored (no witness)
	outs int // outputs paying the wallet: watched outpoints
}

// pendingEntry is one unconfirmed wallet transaction as the wallet keeps
// it in memory.
type pendingEntry struct {
	// seen is when it entered the unconfirmed set (bktPendingSeen).
	seen time.Time
	pendingCost
}

// pendingTotals sums the costs of the unconfirmed set. The caller holds
// w.mu.
func (w *Wallet) pendingTotals() (txs, bytes, outs int) {
	return len(w.pending), w.pendingTotal.size, w.pendingTotal.outs
}

// checkBudget refuses an unconfirmed wallet transaction that would take
// more than its share of the budgets: over MaxPendingTxElements (the
// peer's fault), or past a budget of the unconfirmed set (not). txid is
// tx's. The caller holds w.mu.
func (w *Wallet) checkBudget(tx *wire.MsgTx) error {
	lim := w.opts.mempool
	outs, guards := 0, 0
	newGuards := make(map[wire.OutPoint]struct{})
	for _, out := range tx.TxOut {
		if w.watch.lookup(out.PkScript) != nil {
			outs++
		}
	}
	for _, in := range tx.TxIn {
		prev := in.PreviousOutPoint
		if _, coin := w.watch.outpoints[prev]; coin {
			continue
		}
		guards++
		if _, had := w.watch.guards[prev]; !had {
			newGuards[prev] = struct{}{}
		}
	}
	if n := outs + guards; n > lim.TxElements {
		return refuse(true, "%w: it would add %d filter elements (%d outputs paying the wallet, %d inputs to guard), more than MaxPendingTxElements (%d) for one unconfirmed transaction",
			ErrMempoolBudget, n, outs, guards, lim.TxElements)
	}
	txs, bytes, pendOuts := w.pendingTotals()
	size := tx.SerializeSizeStripped()
	switch els := pendOuts + len(w.watch.guards); {
	case txs+1 > lim.Txs:
		return refuse(false, "%w: %d unconfirmed transactions kept, MaxPendingTxs %d", ErrMempoolBudget, txs, lim.Txs)
	case bytes+size > lim.Bytes:
		return refuse(false, "%w: %d bytes of unconfirmed transactions kept, %d more would pass MaxPendingBytes %d",
			ErrMempoolBudget, bytes, size, lim.Bytes)
	case els+outs+len(newGuards) > lim.Elements:
		return refuse(false, "%w: unconfirmed transactions add %d filter elements, %d more would pass MaxPendingElements %d",
			ErrMempoolBudget, els, outs+len(newGuards), lim.Elements)
	}
	return nil
}

// stripWitness returns tx without its witnesses, which is what the wallet
// stores (tx itself when it has none; otherwise a copy sharing the
// outputs). The txid does not cover the witness, so a peer can pad any
// transaction it sends with megabytes of witness without changing its
// identity, and nothing the wallet computes reads one: relevance comes
// from output scripts and previous outpoints, amounts from output values,
// conflicts from previous outpoints. A confirmed transaction's witness is
// no better authenticated: a filtered block proves the txid only, and the
// witness commitment sits in the coinbase, which it does not prove.
func stripWitness(tx *wire.MsgTx) *wire.MsgTx {
	if !tx.HasWitness() {
		return tx
	}
	c := &wire.MsgTx{Version: tx.Version, LockTime: tx.LockTime, TxOut: tx.TxOut,
		TxIn: make([]*wire.TxIn, len(tx.TxIn))}
	for i, in := range tx.TxIn {
		cp := *in
		cp.Witness = nil
		c.TxIn[i] = &cp
	}
	return c
}

// mempoolFPs remembers the unconfirmed false positives seen by this
// process, so each is counted once; it is never stored (an unconfirmed
// false positive that confirms comes again in its block, and is recorded
// there).
type mempoolFPs map[chainhash.Hash]struct{}

// add remembers txid and reports whether it is new; the set starts afresh
// when it holds maxMempoolFalsePositives.
func (s *mempoolFPs) add(txid chainhash.Hash) bool {
	if *s == nil || len(*s) >= maxMempoolFalsePositives {
		*s = make(mempoolFPs)
	}
	if _, ok := (*s)[txid]; ok {
		return false
	}
	(*s)[txid] = struct{}{}
	return true
}

// addSat returns a+b, held at math.MaxInt64 or math.MinInt64 instead of
// wrapping around. The wallet's amounts are each within [0, 21e6 BTC]
// (checkTx), but it cannot check what the inputs of its transactions were
// worth, so enough confirmed payments of a fabricated chain, or debits of
// one transaction, could sum past int64: a sum that wrapped would turn an
// absurd balance into a plausible or negative one.
func addSat(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// subSat returns a-b like addSat.
func subSat(a, b int64) int64 {
	if b == math.MinInt64 {
		return addSat(addSat(a, math.MaxInt64), 1)
	}
	return addSat(a, -b)
}
