package wallet

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcwallet/waddrmgr"

	"github.com/bloomwatch/bloomwatch/watch"
)

// Rollback removes every block above height, for a reorg whose fork point
// is height, and commits at once (with any open batch).
//
// It follows wtxmgr.Rollback: the wallet's transactions from removed
// blocks go back to the unconfirmed set (coinbases are dropped, with any
// unconfirmed spend of their outputs), where they stay until they confirm
// again on the new chain, or until a conflicting transaction confirms and
// wtxmgr evicts them as double spends, or until MempoolExpiry, counted
// from the rollback, passes. Their outputs stay watched, so the node still
// matches them. The match records and counters of the removed
// blocks are removed too: the statistics describe the current chain.
//
// A height below the first applied block resets the wallet to "nothing
// applied" (SyncedTo height -1). A height at or above the sync point is a
// no-op. A fork point older than the block hashes waddrmgr keeps
// (waddrmgr.MaxReorgDepth) gives ErrReorgTooDeep.
//
// It returns how the filter elements changed: coins the removed blocks
// spent are watched again, coins they created are not.
func (w *Wallet) Rollback(height int32) (watch.ElementDelta, error) {
	unlock, err := w.enter()
	if err != nil {
		return watch.ElementDelta{}, err
	}
	defer unlock()
	if w.meta.firstApplied == noHeight || w.meta.rescanPending || height >= w.synced.Height {
		// With a rescan pending the node was told nothing is applied
		// (SyncedTo): there is nothing of its chain to roll back.
		return watch.ElementDelta{}, nil
	}
	if err := w.updateNow(func(b buckets) error { return w.rollbackIn(b, height, false) }); err != nil {
		return watch.ElementDelta{}, err
	}
	return w.watch.log.Take(), nil
}

// rollbackIn removes the blocks above height inside a write. With forget
// set (a rescan, see beginRescanIn) the transactions of the removed blocks
// are deleted instead of returned to the unconfirmed set: the blocks are
// still on the chain and the rescan applies them again, so they are
// neither unconfirmed nor conflicted, only not re-read yet.
func (w *Wallet) rollbackIn(b buckets, height int32, forget bool) error {
	if w.meta.firstApplied == noHeight || height >= w.synced.Height {
		return nil
	}
	var (
		forkHash chainhash.Hash
		reset    = height < w.meta.firstApplied
	)
	if !reset {
		h, err := w.addrMgr.BlockHash(b.am, height)
		if err != nil {
			if waddrmgr.IsError(err, waddrmgr.ErrBlockNotFound) {
				return fmt.Errorf("%w: no hash kept for height %d", ErrReorgTooDeep, height)
			}
			return fmt.Errorf("block hash at %d: %w", height, err)
		}
		forkHash = *h
	}
	removeFrom := height + 1
	if reset {
		removeFrom = w.meta.firstApplied
	}
	var unmined map[chainhash.Hash]struct{}
	if forget {
		var err error
		if unmined, err = w.unminedSet(b.tm); err != nil {
			return err
		}
	}
	w.coins.reset()
	w.history.truncate(removeFrom)
	if err := w.txStore.Rollback(b.tm, removeFrom); err != nil {
		return fmt.Errorf("transaction store rollback to %d: %w", height, err)
	}
	if forget {
		if err := w.forgetReturned(b, unmined); err != nil {
			return err
		}
	}
	if err := w.dropBlockRecords(b, removeFrom); err != nil {
		return err
	}
	if reset {
		w.meta.firstApplied = noHeight
		w.meta.rescanPending = false
		if err := w.addrMgr.SetSyncedTo(b.am, nil); err != nil {
			return fmt.Errorf("reset sync point: %w", err)
		}
		w.synced = watch.SyncPoint{Height: noHeight}
	} else {
		if err := w.addrMgr.SetSyncedTo(b.am, blockStamp(height, forkHash, nil)); err != nil {
			return fmt.Errorf("set sync point %d: %w", height, err)
		}
		w.synced = watch.SyncPoint{Height: height, Hash: forkHash}
	}
	if err := writeProgress(b.own, w.meta); err != nil {
		return err
	}
	// Transactions returned to the unconfirmed set count their expiry
	// from now, as in a full node's mempool after a reorg.
	if err := w.reconcilePending(b, w.now()); err != nil {
		return err
	}
	_, err := w.refreshOutpoints(b.tm)
	return err
}

// dropBlockRecords deletes the match records from height from on and takes
// their transactions out of the counters.
func (w *Wallet) dropBlockRecords(b buckets, from int32) error {
	bkt := b.own.NestedReadWriteBucket(bktBlocks)
	var keys [][]byte
	c := bkt.ReadCursor()
	for k, v := c.Seek(heightKey(from)); k != nil; k, v = c.Next() {
		r, err := decodeBlockRecord(v)
		if err != nil {
			return err
		}
		w.meta.counters.Relevant -= r.count(verdictRelevant)
		w.meta.counters.FalsePositives -= r.count(verdictFalsePositive)
		keys = append(keys, append([]byte(nil), k...))
	}
	// Delete after the walk: deleting under a bbolt cursor skips keys.
	for _, k := range keys {
		if err := bkt.Delete(k); err != nil {
			return fmt.Errorf("delete block record: %w", err)
		}
	}
	return nil
}

// forgetReturned deletes from wtxmgr the unconfirmed transactions that are
// not in before: those its Rollback just returned from removed blocks.
// wtxmgr removes with each one the unconfirmed transactions that spend its
// outputs; a pending spend of a coin from a removed block goes with it and
// comes back from a peer's mempool once the rescan has found the coin again.
func (w *Wallet) forgetReturned(b buckets, before map[chainhash.Hash]struct{}) error {
	hashes, err := w.txStore.UnminedTxHashes(b.tm)
	if err != nil {
		return fmt.Errorf("unconfirmed transactions: %w", err)
	}
	for _, h := range hashes {
		if _, ok := before[*h]; ok {
			continue
		}
		d, err := w.txStore.UniqueTxDetails(b.tm, h, nil)
		if err != nil {
			return fmt.Errorf("details of %v: %w", h, err)
		}
		if d == nil {
			continue // removed with a transaction it spends
		}
		if err := w.txStore.RemoveUnminedTx(b.tm, &d.TxRecord); err != nil {
			return fmt.Errorf("forget %v: %w", h, err)
		}
	}
	return nil
}

// beginRescanIn starts a pending rescan inside the write of the rescan's
// first block: everything the wallet applied is removed (its transactions
// forgotten, see rollbackIn) and the block is then applied as the first.
// From here the wallet is an ordinary wallet syncing up again: its history
// reaches as far as the rescan has, with no transaction shown unconfirmed
// that a block confirmed.
func (w *Wallet) beginRescanIn(b buckets) error {
	return w.rollbackIn(b, noHeight, true)
}
