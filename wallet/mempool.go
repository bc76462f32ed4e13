package wallet

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/btcsuite/btcwallet/wtxmgr"

	"github.com/bloomwatch/bloomwatch/watch"
)

// ApplyMempoolTx judges one unconfirmed transaction a peer sent. A wallet
// transaction joins wtxmgr's unconfirmed set, seen now (the wallet clock),
// stored without its witness (stripWitness), until a block confirms it or
// a conflicting transaction, or until MempoolExpiry. An unconfirmed
// transaction is only the relaying peer's word, so it never evicts
// another: one that spends an outpoint a pending wallet transaction spends
// joins it, both are reported as conflicted (Balance.Conflicts,
// TxSummary.Conflicts) and the block that confirms one evicts the other.
// One that spends a wallet output a confirmed transaction already spent
// can never confirm and is dropped (reported not relevant, not counted).
// Anything else is a false positive, counted once per txid and not stored.
// A transaction offered again is reported again but counted and stored
// once. Transactions past MempoolExpiry are removed first; the delta
// reports what they take out of the filter too.
//
// It refuses, with a *watch.TxRefusal and without changing anything, an
// invalid transaction (ErrInvalidTx: see checkTx) and a wallet
// transaction over a budget (ErrMempoolBudget: MaxPendingTxSize and the
// limits after it). A wallet transaction costs time and memory in
// proportion to its own size, not to the unconfirmed set's.
func (w *Wallet) ApplyMempoolTx(tx *wire.MsgTx) (watch.MempoolResult, error) {
	if tx == nil || (len(tx.TxIn) == 0 && len(tx.TxOut) == 0) {
		return watch.MempoolResult{}, ErrBadTx
	}
	unlock, err := w.enter()
	if err != nil {
		return watch.MempoolResult{}, err
	}
	defer unlock()
	if err := w.checkMempoolTx(tx); err != nil {
		return watch.MempoolResult{}, err
	}
	if w.expiryDue() {
		if err := w.updateNow(func(bk buckets) error {
			_, err := w.expireIn(bk)
			return err
		}); err != nil {
			return watch.MempoolResult{}, err
		}
	}
	res, store, err := w.judgeMempoolTx(tx)
	if err != nil {
		return watch.MempoolResult{}, err
	}
	if store {
		if err := w.updateNow(func(bk buckets) error {
			var err error
			res, err = w.storeMempoolTx(bk, tx)
			return err
		}); err != nil {
			return watch.MempoolResult{}, err
		}
	}
	res.Delta = w.watch.log.Take()
	return res, nil
}

// judgeMempoolTx decides, reading only, what ApplyMempoolTx does with tx:
// report a transaction the wallet holds, count a false positive, drop a
// spend of a spent coin, refuse one over a budget, or store it (store
// set). The caller holds w.mu.
func (w *Wallet) judgeMempoolTx(tx *wire.MsgTx) (res watch.MempoolResult, store bool, err error) {
	txid := tx.TxHash()
	var known *wtxmgr.TxDetails
	err = w.view(func(b readBuckets) error {
		var err error
		if known, err = w.txStore.TxDetails(b.tm, &txid); err != nil {
			return fmt.Errorf("look up %v: %w", txid, err)
		}
		return nil
	})
	if err != nil || known != nil {
		if known != nil {
			res = watch.MempoolResult{Relevant: true, Amount: netAmount(known)}
		}
		return res, false, err
	}
	if !w.touches(tx, nil) {
		if w.mempoolFP.add(txid) {
			// In memory until the next write: an unconfirmed false
			// positive is never stored.
			w.meta.counters.MempoolFalsePositives++
		}
		return res, false, nil
	}
	var spent bool
	if err := w.view(func(b readBuckets) error {
		spent, err = w.spendsConfirmedSpent(b.tm, tx)
		return err
	}); err != nil || spent {
		return res, false, err
	}
	if err := w.checkBudget(tx); err != nil {
		return res, false, err
	}
	return res, true, nil
}

// storeMempoolTx stores an unconfirmed wallet transaction that passed
// judgeMempoolTx, inside a write.
func (w *Wallet) storeMempoolTx(bk buckets, tx *wire.MsgTx) (watch.MempoolResult, error) {
	var res watch.MempoolResult
	txid := tx.TxHash()
	if _, ok := w.mempoolFP[txid]; ok {
		// Relevant now through an address derived since.
		delete(w.mempoolFP, txid)
		w.meta.counters.MempoolFalsePositives--
	}
	for _, out := range tx.TxOut {
		if e := w.watch.lookup(out.PkScript); e != nil {
			if _, err := w.ensureGapOf(bk, e.ref, w.synced.Height); err != nil {
				return res, err
			}
		}
	}
	now := w.now()
	if _, _, err := w.storeTx(bk, tx, txid, nil, now); err != nil {
		return res, err
	}
	d, err := w.txStore.UniqueTxDetails(bk.tm, &txid, nil)
	if err != nil || d == nil {
		return res, fmt.Errorf("details of %v: %w", txid, errOrMissing(err))
	}
	res.Relevant, res.Amount = true, netAmount(d)
	w.watch.addUnconfirmed(tx, txid)
	if err := w.addPending(bk, txid, costOf(d), now); err != nil {
		return res, err
	}
	w.meta.counters.MempoolRelevant++
	return res, writeProgress(bk.own, w.meta)
}

// spendsConfirmedSpent reports whether tx spends a wallet output that a
// confirmed transaction already spends: such a transaction can never
// confirm, whatever the peer that relayed it says. Each wallet transaction
// its inputs name is read once.
func (w *Wallet) spendsConfirmedSpent(tm walletdb.ReadBucket, tx *wire.MsgTx) (bool, error) {
	spentOuts := make(map[chainhash.Hash]map[uint32]bool)
	for _, in := range tx.TxIn {
		prev := in.PreviousOutPoint
		if _, watched := w.watch.outpoints[prev]; watched {
			continue // unspent on chain as far as the wallet knows
		}
		spent, ok := spentOuts[prev.Hash]
		if !ok {
			d, err := w.txStore.TxDetails(tm, &prev.Hash)
			if err != nil {
				return false, fmt.Errorf("look up %v: %w", prev.Hash, err)
			}
			if d != nil && d.Block.Height >= 0 {
				spent = make(map[uint32]bool, len(d.Credits))
				for _, c := range d.Credits {
					spent[c.Index] = c.Spent
				}
			}
			spentOuts[prev.Hash] = spent
		}
		if spent[prev.Index] {
			return true, nil
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

// forgetMempoolFPs empties the record of unconfirmed false positives that
// wallets written before mempoolFPs kept for good (one txid per false
// positive a peer relayed, never deleted). It writes only when there is
// something to delete.
func (w *Wallet) forgetMempoolFPs() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var stored bool
	if err := w.view(func(b readBuckets) error {
		if bkt := b.own.NestedReadBucket(bktMempoolFP); bkt != nil {
			k, _ := bkt.ReadCursor().First()
			stored = k != nil
		}
		return nil
	}); err != nil || !stored {
		return err
	}
	return w.updateNow(func(bk buckets) error {
		if err := bk.own.DeleteNestedBucket(bktMempoolFP); err != nil {
			return fmt.Errorf("forget unconfirmed false positives: %w", err)
		}
		_, err := bk.own.CreateBucket(bktMempoolFP)
		return err
	})
}
