package wallet

import (
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
type historyCache struct {
	complete bool
	txs      []minedTx
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
	clear(h.txs[n:])
	h.txs = h.txs[:n]
}

// add appends a transaction just stored above every cached one; an
// incomplete cache stays empty.
func (h *historyCache) add(t minedTx) {
	if !h.complete {
		return
	}
	if n := len(h.txs); n > 0 && h.txs[n-1].height > t.height {
		// Not wtxmgr's order: read the history again.
		h.invalidate()
		return
	}
	h.txs = append(h.txs, t)
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

// minedHistory returns the confirmed transactions, filling the cache from
// wtxmgr when it is incomplete. The caller holds w.mu; the slice is the
// cache's own.
func (w *Wallet) minedHistory(tm walletdb.ReadBucket) ([]minedTx, error) {
	if w.history.complete {
		return w.history.txs, nil
	}
	var txs []minedTx
	err := w.txStore.RangeTransactions(tm, 0, math.MaxInt32, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			txs = append(txs, minedTx{txid: d.Hash, height: d.Block.Height, block: d.Block.Hash,
				time: d.Block.Time, delta: netAmount(d)})
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	w.history = historyCache{complete: true, txs: txs}
	return txs, nil
}
