package wallet

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/wtxmgr"

	"github.com/bloomwatch/bloomwatch/watch"
)

// ApplyMempoolTx judges one unconfirmed transaction a peer sent and
// commits at once. A wallet transaction joins wtxmgr's unconfirmed set,
// seen now (the wallet clock), until a block confirms it or a conflicting
// transaction, or until MempoolExpiry. An unconfirmed transaction is only
// the relaying peer's word, so it never evicts another: one that spends
// an outpoint a pending wallet transaction spends joins it, both are
// reported as conflicted (Balance.Conflicts, TxSummary.Conflicts) and the
// block that confirms one evicts the other. One that spends a wallet
// output a confirmed transaction already spent can never confirm and is
// dropped (reported not relevant, not counted). Anything else is a false
// positive, counted once per txid. A transaction offered again is
// reported again but counted and stored once. Transactions past
// MempoolExpiry are removed first; the delta reports what they take out
// of the filter too.
func (w *Wallet) ApplyMempoolTx(tx *wire.MsgTx) (watch.MempoolResult, error) {
	if tx == nil || (len(tx.TxIn) == 0 && len(tx.TxOut) == 0) {
		return watch.MempoolResult{}, ErrBadTx
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return watch.MempoolResult{}, err
	}
	var res watch.MempoolResult
	err := w.updateNow(func(bk buckets) error {
		if _, err := w.expireIn(bk); err != nil {
			return err
		}
		var err error
		res, err = w.applyMempoolIn(bk, tx)
		return err
	})
	if err != nil {
		return watch.MempoolResult{}, err
	}
	res.Delta = w.watch.log.Take()
	return res, nil
}

func (w *Wallet) applyMempoolIn(bk buckets, tx *wire.MsgTx) (watch.MempoolResult, error) {
	var res watch.MempoolResult
	txid := tx.TxHash()
	known, err := w.txStore.TxDetails(bk.tm, &txid)
	if err != nil {
		return res, fmt.Errorf("look up %v: %w", txid, err)
	}
	if known != nil {
		return watch.MempoolResult{Relevant: true, Amount: netAmount(known)}, nil
	}
	fps := bk.own.NestedReadWriteBucket(bktMempoolFP)
	wasFP := fps.Get(txid[:]) != nil
	if !w.touches(tx, nil) {
		if wasFP {
			return res, nil
		}
		if err := fps.Put(txid[:], []byte{}); err != nil {
			return res, fmt.Errorf("store mempool false positive: %w", err)
		}
		w.meta.counters.MempoolFalsePositives++
		return res, writeProgress(bk.own, w.meta)
	}
	spent, err := w.spendsConfirmedSpent(bk, tx)
	if err != nil || spent {
		return res, err
	}
	if wasFP {
		// Relevant now through an address derived since.
		if err := fps.Delete(txid[:]); err != nil {
			return res, fmt.Errorf("delete mempool false positive: %w", err)
		}
		w.meta.counters.MempoolFalsePositives--
	}
	for _, out := range tx.TxOut {
		if e := w.watch.lookup(out.PkScript); e != nil {
			if _, err := w.ensureGap(bk.am, e.ref); err != nil {
				return res, err
			}
		}
	}
	before, err := w.unminedSet(bk.tm)
	if err != nil {
		return res, err
	}
	now := w.now()
	if _, _, err := w.storeTx(bk, tx, nil, now); err != nil {
		return res, err
	}
	d, err := w.txStore.TxDetails(bk.tm, &txid)
	if err != nil || d == nil {
		return res, fmt.Errorf("details of %v: %w", txid, errOrMissing(err))
	}
	res.Relevant, res.Amount = true, netAmount(d)
	if err := w.reconcilePending(bk, now); err != nil {
		return res, err
	}
	if _, err := w.refreshPending(bk.tm, before, nil); err != nil {
		return res, err
	}
	w.meta.counters.MempoolRelevant++
	return res, writeProgress(bk.own, w.meta)
}

// spendsConfirmedSpent reports whether tx spends a wallet output that a
// confirmed transaction already spends: such a transaction can never
// confirm, whatever the peer that relayed it says.
func (w *Wallet) spendsConfirmedSpent(bk buckets, tx *wire.MsgTx) (bool, error) {
	for _, in := range tx.TxIn {
		prev := in.PreviousOutPoint
		if _, watched := w.watch.outpoints[prev]; watched {
			continue // unspent on chain as far as the wallet knows
		}
		d, err := w.txStore.TxDetails(bk.tm, &prev.Hash)
		if err != nil {
			return false, fmt.Errorf("look up %v: %w", prev.Hash, err)
		}
		if d == nil || d.Block.Height < 0 {
			continue
		}
		for _, c := range d.Credits {
			if c.Index == prev.Index && c.Spent {
				return true, nil
			}
		}
	}
	return false, nil
}

// removeConflicts removes the unconfirmed wallet transactions that spend
// an output tx spends, with their descendants. Only a confirmed tx may
// evict (evictDoubleSpent): a relayed one is a peer's word.
func (w *Wallet) removeConflicts(bk buckets, tx *wire.MsgTx, txid chainhash.Hash) error {
	spends := make(map[wire.OutPoint]struct{}, len(tx.TxIn))
	for _, in := range tx.TxIn {
		spends[in.PreviousOutPoint] = struct{}{}
	}
	var conflicts []*wtxmgr.TxRecord
	err := w.txStore.RangeTransactions(bk.tm, noHeight, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			if d.Hash == txid {
				continue
			}
			for _, in := range d.MsgTx.TxIn {
				if _, ok := spends[in.PreviousOutPoint]; ok {
					rec := d.TxRecord
					conflicts = append(conflicts, &rec)
					break
				}
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("unconfirmed transactions: %w", err)
	}
	for _, rec := range conflicts {
		// A conflict may already be gone as a descendant of another.
		if d, err := w.txStore.UniqueTxDetails(bk.tm, &rec.Hash, nil); err != nil || d == nil {
			continue
		}
		if err := w.txStore.RemoveUnminedTx(bk.tm, rec); err != nil {
			return fmt.Errorf("remove replaced %v: %w", rec.Hash, err)
		}
	}
	return nil
}
