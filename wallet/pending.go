package wallet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/btcsuite/btcwallet/wtxmgr"
)

// Unconfirmed wallet transactions are the word of whichever peer relayed
// them: an SPV node cannot check that their inputs exist or are unspent,
// so a peer can relay a transaction that will never confirm (a fabricated
// spend of a wallet coin, a payment that was never broadcast). The wallet
// therefore
//
//   - never lets them change the confirmed balance (see Balance),
//   - keeps every pending transaction a peer relays, even when it
//     conflicts with another pending one (wtxmgr keeps a list of unmined
//     spenders per outpoint, so both are stored; see pendingConflicts),
//     and lets only a block decide: the confirmed one evicts the others,
//   - forgets them after MempoolExpiry, as a full node's mempool does.
//
// The time each unconfirmed transaction entered the unconfirmed set is kept
// in bktPendingSeen (txid -> Unix nanoseconds): wtxmgr's receive time is
// the block time for a transaction that a reorg returned to the set, while
// the expiry counts from its return, as Bitcoin Core's mempool does.

// MempoolExpiry is how long an unconfirmed wallet transaction stays in the
// wallet without confirming: Bitcoin Core's -mempoolexpiry default (336
// hours, two weeks). After it the transaction and its unconfirmed
// descendants are removed, the coins it spent count as unspent again, and
// its outputs and guards leave the filter. The wallet checks at Open, at
// every ApplyBlock and ApplyMempoolTx, with the wallet's clock (WithClock).
const MempoolExpiry = 336 * time.Hour

// bktPendingSeen holds, inside ownNS, when each unconfirmed wallet
// transaction entered the unconfirmed set. Wallets written before it existed
// lack it; it is created at the first write that needs it.
var bktPendingSeen = []byte("pending-seen")

// pendingTimeSize is the encoded size of a pending-seen time.
const pendingTimeSize = 8

// encodePendingTime encodes t as Unix nanoseconds.
func encodePendingTime(t time.Time) []byte {
	b := make([]byte, pendingTimeSize)
	binary.BigEndian.PutUint64(b, uint64(t.UnixNano()))
	return b
}

// decodePendingTime decodes a pending-seen value.
func decodePendingTime(b []byte) (time.Time, error) {
	if len(b) != pendingTimeSize {
		return time.Time{}, fmt.Errorf("%w: pending-seen record of %d bytes", ErrCorrupt, len(b))
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))), nil
}

// loadPending reads when each unconfirmed transaction was first seen. A
// transaction without a record (a wallet written before the records
// existed) counts from now: wtxmgr's receive time would be a block's time
// for a transaction a reorg returned to the set, and expire it at once.
// It reports whether the records differ from the unconfirmed set, so the
// caller writes them.
func loadPending(tm, own walletdb.ReadBucket, store *wtxmgr.Store, now time.Time) (map[chainhash.Hash]pendingEntry, bool, error) {
	seen := make(map[chainhash.Hash]pendingEntry)
	dirty := false
	bkt := own.NestedReadBucket(bktPendingSeen)
	recs := 0
	if bkt != nil {
		if err := bkt.ForEach(func(k, v []byte) error {
			recs++
			return nil
		}); err != nil {
			return nil, false, fmt.Errorf("pending-seen records: %w", err)
		}
	}
	err := store.RangeTransactions(tm, noHeight, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			var v []byte
			if bkt != nil {
				v = bkt.Get(d.Hash[:])
			}
			cost := costOf(d)
			if v == nil {
				seen[d.Hash], dirty = pendingEntry{seen: now, pendingCost: cost}, true
				continue
			}
			t, err := decodePendingTime(v)
			if err != nil {
				return false, err
			}
			seen[d.Hash] = pendingEntry{seen: t, pendingCost: cost}
		}
		return false, nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("unconfirmed transactions: %w", err)
	}
	if recs != len(seen) {
		dirty = true
	}
	return seen, dirty, nil
}

// reconcilePending makes the pending-seen records match wtxmgr's
// unconfirmed set: records of transactions that left it (mined, evicted,
// expired) are deleted, and a transaction that entered it without a record
// (returned by a rollback) is recorded as seen at. Inside a write; the
// caller holds w.mu.
func (w *Wallet) reconcilePending(bk buckets, at time.Time) error {
	hashes, err := w.txStore.UnminedTxHashes(bk.tm)
	if err != nil {
		return fmt.Errorf("unconfirmed transactions: %w", err)
	}
	if len(hashes) == 0 && len(w.pending) == 0 && !w.pendingDirty {
		return nil
	}
	bkt, err := bk.own.CreateBucketIfNotExists(bktPendingSeen)
	if err != nil {
		return fmt.Errorf("pending-seen records: %w", err)
	}
	live := make(map[chainhash.Hash]struct{}, len(hashes))
	for _, h := range hashes {
		live[*h] = struct{}{}
		e, ok := w.pending[*h]
		if !ok {
			d, err := w.txStore.UniqueTxDetails(bk.tm, h, nil)
			if err != nil || d == nil {
				return fmt.Errorf("unconfirmed transaction %v: %w", h, errOrMissing(err))
			}
			e = pendingEntry{seen: at, pendingCost: costOf(d)}
			w.pending[*h] = e
		}
		if bkt.Get(h[:]) == nil {
			if err := bkt.Put(h[:], encodePendingTime(e.seen)); err != nil {
				return fmt.Errorf("store pending-seen record: %w", err)
			}
		}
	}
	for h := range w.pending {
		if _, ok := live[h]; !ok {
			delete(w.pending, h)
		}
	}
	w.recountPending()
	// Delete after the walk: deleting under a bbolt cursor skips keys.
	var stale [][]byte
	if err := bkt.ForEach(func(k, _ []byte) error {
		var h chainhash.Hash
		copy(h[:], k)
		if _, ok := live[h]; !ok || len(k) != chainhash.HashSize {
			stale = append(stale, append([]byte(nil), k...))
		}
		return nil
	}); err != nil {
		return fmt.Errorf("pending-seen records: %w", err)
	}
	for _, k := range stale {
		if err := bkt.Delete(k); err != nil {
			return fmt.Errorf("delete pending-seen record: %w", err)
		}
	}
	w.pendingDirty = false
	return nil
}

// expiryDue reports whether an unconfirmed transaction has reached
// MempoolExpiry, or the pending-seen records need writing. The caller
// holds w.mu.
func (w *Wallet) expiryDue() bool {
	if w.pendingDirty {
		return true
	}
	return len(w.pending) > 0 && w.now().Sub(w.pendingOldest) >= MempoolExpiry
}

// recountPending recomputes the sums the budgets and the expiry check
// read (pendingTotal, pendingOldest) from w.pending, after entries left
// it. The caller holds w.mu.
func (w *Wallet) recountPending() {
	w.pendingTotal, w.pendingOldest = pendingCost{}, time.Time{}
	for _, e := range w.pending {
		w.notePending(e)
	}
}

// notePending adds one entry of w.pending to its sums. The caller holds
// w.mu.
func (w *Wallet) notePending(e pendingEntry) {
	w.pendingTotal.size += e.size
	w.pendingTotal.outs += e.outs
	if w.pendingOldest.IsZero() || e.seen.Before(w.pendingOldest) {
		w.pendingOldest = e.seen
	}
}

// costOf is what a stored unconfirmed transaction takes of the budgets.
func costOf(d *wtxmgr.TxDetails) pendingCost {
	return pendingCost{size: d.MsgTx.SerializeSize(), outs: len(d.Credits)}
}

// addPending records, inside a write, that the unconfirmed transaction
// txid (cost) entered the unconfirmed set at t. The caller holds w.mu.
func (w *Wallet) addPending(bk buckets, txid chainhash.Hash, cost pendingCost, t time.Time) error {
	bkt, err := bk.own.CreateBucketIfNotExists(bktPendingSeen)
	if err != nil {
		return fmt.Errorf("pending-seen records: %w", err)
	}
	if err := bkt.Put(txid[:], encodePendingTime(t)); err != nil {
		return fmt.Errorf("store pending-seen record: %w", err)
	}
	e := pendingEntry{seen: t, pendingCost: cost}
	w.pending[txid] = e
	w.notePending(e)
	return nil
}

// expireIn removes, inside a write, every unconfirmed wallet transaction
// first seen MempoolExpiry or longer ago, with its unconfirmed
// descendants, and updates the outpoint set (the delta log records what
// leaves the filter). It returns the txids it removed itself (descendants
// are not listed). The caller holds w.mu.
func (w *Wallet) expireIn(bk buckets) ([]chainhash.Hash, error) {
	if !w.expiryDue() {
		return nil, nil
	}
	now := w.now()
	var due []chainhash.Hash
	for h, e := range w.pending {
		if now.Sub(e.seen) >= MempoolExpiry {
			due = append(due, h)
		}
	}
	sort.Slice(due, func(i, j int) bool { return bytes.Compare(due[i][:], due[j][:]) < 0 })
	before, err := w.unminedSet(bk.tm)
	if err != nil {
		return nil, err
	}
	var removed []chainhash.Hash
	for i := range due {
		// An earlier removal may have taken it as a descendant.
		d, err := w.txStore.UniqueTxDetails(bk.tm, &due[i], nil)
		if err != nil {
			return nil, fmt.Errorf("look up %v: %w", due[i], err)
		}
		if d == nil {
			continue
		}
		if err := w.txStore.RemoveUnminedTx(bk.tm, &d.TxRecord); err != nil {
			return nil, fmt.Errorf("expire %v: %w", due[i], err)
		}
		removed = append(removed, due[i])
	}
	if err := w.reconcilePending(bk, now); err != nil {
		return nil, err
	}
	if len(removed) > 0 {
		if _, err := w.refreshPending(bk.tm, before, nil); err != nil {
			return nil, err
		}
	}
	return removed, nil
}

// expireAtOpen runs the expiry check right after Open loaded the wallet
// and commits, so a wallet reopened after MempoolExpiry never shows (or
// watches) transactions that expired while it was closed.
func (w *Wallet) expireAtOpen() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.expiryDue() {
		return nil
	}
	if err := w.updateNow(func(bk buckets) error {
		_, err := w.expireIn(bk)
		return err
	}); err != nil {
		return fmt.Errorf("expire unconfirmed transactions: %w", err)
	}
	// The node reads the element set afresh with FilterElements.
	w.watch.log.Reset()
	return nil
}
