package wallet

import (
	"fmt"
	"math"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/btcsuite/btcwallet/wtxmgr"
)

// minedTx is what the history (Txs, Holdings) reports of one confirmed
// wallet transaction.
type minedTx struct {
	txid   chainhash.Hash
	height int32
	block  chainhash.Hash
	time   time.Time
	delta  int64
}

// cachedTx is one confirmed transaction of the cache; its block is the
// cache's block of the same height.
type cachedTx struct {
	txid   chainhash.Hash
	delta  int64
	height int32
}

// cachedBlock is a block holding cached transactions.
type cachedBlock struct {
	hash   chainhash.Hash
	time   int64
	height int32
}

// historyCache holds the wallet's confirmed transactions in the order
// wtxmgr's RangeTransactions gives them (by height, then in the order
// they were stored in their block), so reading the history decodes no
// stored transaction. It is complete when it holds every confirmed
// transaction wtxmgr has; an incomplete cache is read whole from wtxmgr
// at the next history read.
//
// It stays complete as blocks are applied: ApplyBlock appends each new
// confirmed transaction with the net amount it reports, in the order it
// stores them; a block is only ever added above every stored one, so the
// order is wtxmgr's. A wtxmgr rollback drops the entries of the heights it
// removes (the net amount of a transaction below never depends on a
// spender above). A block restored whole (its transactions stored again,
// possibly with more credits) and every reload of the in-memory state
// mark it incomplete.
//
// Each block's hash and time are kept once, in blocks (by height, as the
// transactions are), so an entry costs 48 bytes.
type historyCache struct {
	complete bool
	txs      []cachedTx
	blocks   []cachedBlock
}

// invalidate marks the cache incomplete and drops its entries.
func (h *historyCache) invalidate() { *h = historyCache{} }

// truncate drops the entries at height from and above (a wtxmgr rollback
// of those heights).
func (h *historyCache) truncate(from int32) {
	n := len(h.txs)
	for n > 0 && h.txs[n-1].height >= from {
		n--
	}
	h.txs = h.txs[:n]
	n = len(h.blocks)
	for n > 0 && h.blocks[n-1].height >= from {
		n--
	}
	h.blocks = h.blocks[:n]
}

// add appends a transaction just stored above every cached one; an
// incomplete cache stays empty.
func (h *historyCache) add(t minedTx) {
	if !h.complete {
		return
	}
	n := len(h.blocks)
	switch {
	case n > 0 && h.blocks[n-1].height > t.height,
		n > 0 && h.blocks[n-1].height == t.height && h.blocks[n-1].hash != t.block:
		// Not wtxmgr's order: read the history again.
		h.invalidate()
		return
	case n == 0 || h.blocks[n-1].height < t.height:
		h.blocks = append(h.blocks, cachedBlock{hash: t.block, time: t.time.Unix(), height: t.height})
	}
	h.txs = append(h.txs, cachedTx{txid: t.txid, delta: t.delta, height: t.height})
}

// each calls f with every cached transaction, in order.
func (h *historyCache) each(f func(t *minedTx)) {
	var t minedTx
	b := 0
	for i := range h.txs {
		c := &h.txs[i]
		for h.blocks[b].height != c.height {
			b++
		}
		blk := &h.blocks[b]
		t = minedTx{txid: c.txid, height: c.height, block: blk.hash, time: time.Unix(blk.time, 0), delta: c.delta}
		f(&t)
	}
}

// loadHistory starts the cache at a (re)load: complete and empty when
// wtxmgr holds no confirmed transaction (a new wallet, or one whose first
// block is still to come), otherwise incomplete, filled at the first read
// (which reports a store that cannot be read).
func (w *Wallet) loadHistory(tm walletdb.ReadBucket, store *wtxmgr.Store) {
	w.history.invalidate()
	empty := true
	err := store.RangeTransactions(tm, 0, math.MaxInt32, func([]wtxmgr.TxDetails) (bool, error) {
		empty = false
		return true, nil
	})
	w.history.complete = err == nil && empty
}

// minedHistory returns the cache of the confirmed transactions, filled
// from wtxmgr when it was incomplete. The caller holds w.mu.
func (w *Wallet) minedHistory(tm walletdb.ReadBucket) (*historyCache, error) {
	if w.history.complete {
		return &w.history, nil
	}
	h := historyCache{complete: true}
	err := w.txStore.RangeTransactions(tm, 0, math.MaxInt32, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			h.add(minedTx{txid: d.Hash, height: d.Block.Height, block: d.Block.Hash, time: d.Block.Time, delta: netAmount(d)})
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if !h.complete {
		return nil, fmt.Errorf("%w: confirmed transactions out of height order", ErrCorrupt)
	}
	w.history = h
	return &w.history, nil
}

// len returns the number of cached transactions.
func (h *historyCache) len() int { return len(h.txs) }
