package wallet

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/btcsuite/btcwallet/wtxmgr"
)

// pendingTx is one unconfirmed wallet transaction and what it conflicts
// with.
type pendingTx struct {
	details *wtxmgr.TxDetails
	// conflicts are the other unconfirmed wallet transactions that spend
	// an outpoint this one spends, by txid.
	conflicts []chainhash.Hash
	// conflicted is set when conflicts is not empty or an unconfirmed
	// ancestor is conflicted: whether the transaction can confirm
	// depends on which of the conflicting ones a block picks.
	conflicted bool
}

// pendingSet is the wallet's unconfirmed set, read from wtxmgr.
type pendingSet struct {
	txs map[chainhash.Hash]*pendingTx
	// spenders lists, for each outpoint an unconfirmed wallet
	// transaction spends, every such transaction, sorted.
	spenders map[wire.OutPoint][]chainhash.Hash
}

// readPending reads the unconfirmed wallet transactions and finds their
// conflicts. wtxmgr stores any number of unconfirmed spends of one
// outpoint (its unmined-inputs record is a list of txids), so two
// transactions relayed by different peers both stay until a block
// confirms one (insertMinedTx then removes the others) or they expire.
func (w *Wallet) readPending(tm walletdb.ReadBucket) (*pendingSet, error) {
	ps := &pendingSet{
		txs:      make(map[chainhash.Hash]*pendingTx),
		spenders: make(map[wire.OutPoint][]chainhash.Hash),
	}
	err := w.txStore.RangeTransactions(tm, noHeight, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := details[i]
			ps.txs[d.Hash] = &pendingTx{details: &d}
			for _, in := range d.MsgTx.TxIn {
				ps.spenders[in.PreviousOutPoint] = append(ps.spenders[in.PreviousOutPoint], d.Hash)
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("unconfirmed transactions: %w", err)
	}
	for op, s := range ps.spenders {
		sortHashes(s)
		ps.spenders[op] = s
	}
	for h, p := range ps.txs {
		seen := make(map[chainhash.Hash]struct{})
		for _, in := range p.details.MsgTx.TxIn {
			for _, other := range ps.spenders[in.PreviousOutPoint] {
				if other == h {
					continue
				}
				if _, dup := seen[other]; !dup {
					seen[other] = struct{}{}
					p.conflicts = append(p.conflicts, other)
				}
			}
		}
		sortHashes(p.conflicts)
		p.conflicted = len(p.conflicts) > 0
	}
	// A descendant of a conflicted transaction is conflicted too.
	for changed := true; changed; {
		changed = false
		for _, p := range ps.txs {
			if p.conflicted {
				continue
			}
			for _, in := range p.details.MsgTx.TxIn {
				if parent, ok := ps.txs[in.PreviousOutPoint.Hash]; ok && parent.conflicted {
					p.conflicted, changed = true, true
					break
				}
			}
		}
	}
	return ps, nil
}

// sortHashes sorts txids by their bytes.
func sortHashes(s []chainhash.Hash) {
	sort.Slice(s, func(i, j int) bool { return bytes.Compare(s[i][:], s[j][:]) < 0 })
}

// coin is one wallet output no confirmed transaction spends.
type coin struct {
	op       wire.OutPoint
	amount   btcutil.Amount
	height   int32 // -1 when unconfirmed
	pkScript []byte
	coinbase bool
	// spentBy are the unconfirmed wallet transactions spending it.
	spentBy []chainhash.Hash
	// conflicted marks an output of a conflicted unconfirmed
	// transaction.
	conflicted bool
}

// readCoins returns every wallet output no confirmed transaction spends:
// the outpoint set (watchSet.outpoints: wtxmgr's unspent outputs, mined
// and unmined, and those an unconfirmed transaction spends, which wtxmgr's
// UnspentOutputs leaves out since that spend is only a peer's word until
// it confirms). Each transaction holding such outputs is read once, so the
// cost is linear in the outputs and the size of those transactions:
// wtxmgr's UnspentOutputs decodes the whole transaction again for every
// output, which grew with the square of the outputs of one transaction
// (10,000 outputs of one payment: 3.8 s and 6 GiB per call). A coin whose
// amount is outside [0, 21e6 BTC] (stored by an earlier version from an
// invalid transaction, see checkTx) is left out. The order is undefined.
func (w *Wallet) readCoins(tm walletdb.ReadBucket, ps *pendingSet) ([]coin, error) {
	byTx := make(map[chainhash.Hash][]uint32)
	for op := range w.watch.outpoints {
		byTx[op.Hash] = append(byTx[op.Hash], op.Index)
	}
	w.coins.prune(len(w.watch.outpoints))
	out := make([]coin, 0, len(w.watch.outpoints))
	for hash, idxs := range byTx {
		if p, ok := ps.txs[hash]; ok {
			var err error
			if out, err = appendCoins(out, hash, idxs, &p.details.MsgTx, noHeight, p.conflicted, ps, nil); err != nil {
				return nil, err
			}
			continue
		}
		if cached, ok := w.coins.lookup(hash, idxs, ps, out); ok {
			out = cached
			continue
		}
		d, err := w.txStore.TxDetails(tm, &hash)
		if err != nil || d == nil || d.Block.Height < 0 {
			return nil, fmt.Errorf("%w: transaction %v of %d wallet outputs: %v", ErrCorrupt, hash, len(idxs), errOrMissing(err))
		}
		if out, err = appendCoins(out, hash, idxs, &d.MsgTx, d.Block.Height, false, ps, &w.coins); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendCoins appends the outputs idxs of msg, a wallet transaction at
// height (noHeight when unconfirmed), to out, leaving out an amount outside
// [0, 21e6 BTC]; with cache set it also records each output there.
func appendCoins(out []coin, hash chainhash.Hash, idxs []uint32, msg *wire.MsgTx, height int32, conflicted bool, ps *pendingSet, cache *coinCache) ([]coin, error) {
	coinbase := height >= 0 && blockchain.IsCoinBaseTx(msg)
	for _, i := range idxs {
		if int(i) >= len(msg.TxOut) {
			return nil, fmt.Errorf("%w: wallet output %v:%d past the %d outputs", ErrCorrupt, hash, i, len(msg.TxOut))
		}
		txOut := msg.TxOut[i]
		op := wire.OutPoint{Hash: hash, Index: i}
		valid := txOut.Value >= 0 && txOut.Value <= btcutil.MaxSatoshi
		if cache != nil {
			cache.put(op, coinFact{amount: btcutil.Amount(txOut.Value), height: height,
				pkScript: bytes.Clone(txOut.PkScript), coinbase: coinbase, invalid: !valid})
		}
		if !valid {
			continue
		}
		out = append(out, coin{
			op: op, amount: btcutil.Amount(txOut.Value), height: height,
			pkScript: txOut.PkScript, coinbase: coinbase,
			spentBy: ps.spenders[op], conflicted: conflicted,
		})
	}
	return out, nil
}

// coinFact is what a confirmed wallet output's transaction says of it.
type coinFact struct {
	amount   btcutil.Amount
	height   int32
	pkScript []byte
	coinbase bool
	// invalid marks an amount outside [0, 21e6 BTC]: never a coin.
	invalid bool
}

// coinCache holds the facts readCoins read of confirmed wallet outputs,
// by outpoint. A confirmed output's amount, script and coinbase flag never
// change, and its height changes only when its block leaves the chain:
// every wtxmgr rollback and every reload of the in-memory state (a
// discarded batch) clears the cache (reset). The facts of outputs no
// longer in the outpoint set are dropped once they outnumber the set.
type coinCache struct {
	facts map[wire.OutPoint]coinFact
}

// reset empties the cache.
func (c *coinCache) reset() { c.facts = nil }

// put records one output's facts.
func (c *coinCache) put(op wire.OutPoint, f coinFact) {
	if c.facts == nil {
		c.facts = make(map[wire.OutPoint]coinFact)
	}
	c.facts[op] = f
}

// prune empties the cache when it holds more than twice live entries
// (the outpoint set's size) plus a margin: spent outputs' facts go, and
// the live ones are read again once.
func (c *coinCache) prune(live int) {
	if len(c.facts) > 2*live+256 {
		c.facts = nil
	}
}

// lookup appends the coins idxs of the transaction hash from the cache to
// out and reports true, or returns out unchanged and false when any of
// them is missing.
func (c *coinCache) lookup(hash chainhash.Hash, idxs []uint32, ps *pendingSet, out []coin) ([]coin, bool) {
	if c.facts == nil {
		return out, false
	}
	for _, i := range idxs {
		if _, ok := c.facts[wire.OutPoint{Hash: hash, Index: i}]; !ok {
			return out, false
		}
	}
	for _, i := range idxs {
		op := wire.OutPoint{Hash: hash, Index: i}
		f := c.facts[op]
		if f.invalid {
			continue
		}
		out = append(out, coin{op: op, amount: f.amount, height: f.height, pkScript: f.pkScript,
			coinbase: f.coinbase, spentBy: ps.spenders[op]})
	}
	return out, true
}
