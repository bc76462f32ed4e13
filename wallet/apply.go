package wallet

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wtxmgr"

	"github.com/bloomwatch/bloomwatch/watch"
)

// checkBlock rejects a FilteredBlock that contradicts itself. A peer's
// data is untrusted: this runs before anything is written.
func checkBlock(b *watch.FilteredBlock) error {
	if b == nil {
		return fmt.Errorf("%w: nil block", ErrBadBlock)
	}
	if b.Height < 0 {
		return fmt.Errorf("%w: negative height %d", ErrBadBlock, b.Height)
	}
	if h := b.Header.BlockHash(); h != b.Hash {
		return fmt.Errorf("%w: hash %v does not match header (%v)", ErrBadBlock, b.Hash, h)
	}
	if len(b.Txs) != len(b.TxIndexes) {
		return fmt.Errorf("%w: %d transactions but %d indexes", ErrBadBlock, len(b.Txs), len(b.TxIndexes))
	}
	for i, tx := range b.Txs {
		if tx == nil {
			return fmt.Errorf("%w: nil transaction at %d", ErrBadBlock, i)
		}
		if b.TxIndexes[i] >= b.TotalTxs {
			return fmt.Errorf("%w: transaction index %d of %d", ErrBadBlock, b.TxIndexes[i], b.TotalTxs)
		}
		if i > 0 && b.TxIndexes[i] <= b.TxIndexes[i-1] {
			return fmt.Errorf("%w: transaction indexes not increasing", ErrBadBlock)
		}
	}
	return nil
}

// ApplyBlock applies one filtered block on top of SyncedTo: the wallet's
// transactions go to wtxmgr, the others are counted as false positives,
// addresses are derived as payments use them, and the sync point moves,
// all in the open batch (committed every few blocks, see WithBatch).
//
// The same block may arrive again after ElementsChanged: then only what is
// new is applied and reported, and a transaction first judged a false
// positive that now pays a newly derived address becomes relevant (and
// leaves the false-positive count).
//
// Unconfirmed wallet transactions past MempoolExpiry (by the wallet's
// clock) are removed after the block is applied; Delta includes what they
// take out of the filter.
//
// If an error is returned, nothing of this block was applied; a storage
// error also discards the uncommitted batch, and SyncedTo then reports the
// last committed block, from which the caller resumes.
func (w *Wallet) ApplyBlock(b *watch.FilteredBlock) (watch.BlockResult, error) {
	if err := checkBlock(b); err != nil {
		return watch.BlockResult{}, err
	}
	unlock, err := w.enter()
	if err != nil {
		return watch.BlockResult{}, err
	}
	defer unlock()
	// A pending rescan starts with this block: the node syncs from the
	// birthday, since SyncedTo reported nothing applied.
	rescan := w.meta.rescanPending
	reapply := !rescan && w.meta.firstApplied != noHeight && w.synced.Height == b.Height && w.synced.Hash == b.Hash
	if !reapply && !rescan && w.meta.firstApplied != noHeight {
		if b.Height != w.synced.Height+1 || b.Header.PrevBlock != w.synced.Hash {
			return watch.BlockResult{}, fmt.Errorf("%w: block %d (%v, parent %v) on sync point %d (%v)",
				ErrNotNext, b.Height, b.Hash, b.Header.PrevBlock, w.synced.Height, w.synced.Hash)
		}
	}
	var res watch.BlockResult
	err = w.update(func(bk buckets) error {
		if rescan {
			if err := w.beginRescanIn(bk); err != nil {
				return err
			}
		}
		var err error
		if res, err = w.applyBlockIn(bk, b, reapply); err != nil {
			return err
		}
		if len(w.pending) > 0 {
			// Confirmed or evicted transactions leave the set.
			if err := w.reconcilePending(bk, w.now()); err != nil {
				return err
			}
		}
		_, err = w.expireIn(bk)
		return err
	})
	if err != nil {
		return watch.BlockResult{}, err
	}
	if !reapply {
		w.batch.blocks++
	}
	if w.batchDue() {
		if err := w.commitLocked(); err != nil {
			return watch.BlockResult{}, err
		}
	}
	res.Delta = w.watch.log.Take()
	return res, nil
}

// candidate is one transaction of the block under judgement.
type candidate struct {
	pos       uint32
	txid      chainhash.Hash
	tx        *wire.MsgTx
	delivered bool
}

// applyBlockIn does ApplyBlock's work inside a write.
func (w *Wallet) applyBlockIn(bk buckets, b *watch.FilteredBlock, reapply bool) (watch.BlockResult, error) {
	blockID := wtxmgr.Block{Hash: b.Hash, Height: b.Height}
	blocks := bk.own.NestedReadWriteBucket(bktBlocks)
	prev := &blockRecord{hash: b.Hash}
	if reapply {
		if v := blocks.Get(heightKey(b.Height)); v != nil {
			r, err := decodeBlockRecord(v)
			if err != nil {
				return watch.BlockResult{}, err
			}
			prev = r
		}
	}
	cands, err := w.candidates(bk, b, prev, &blockID)
	if err != nil {
		return watch.BlockResult{}, err
	}
	prevVerdict := make(map[chainhash.Hash]verdict, len(prev.entries))
	for _, e := range prev.entries {
		prevVerdict[e.txid] = e.verdict
	}

	relevant, _, err := w.judge(bk, cands, prevVerdict, b.Height)
	if err != nil {
		return watch.BlockResult{}, err
	}
	var res watch.BlockResult

	// Store the newly relevant transactions in block order. If one of
	// them comes before a transaction stored by an earlier pass over
	// this block, the block is rolled back in wtxmgr and stored again
	// whole, so every spend is recorded after the output it spends.
	var newRel []*candidate
	var lastStored uint32
	anyStored := false
	for _, c := range cands {
		if !relevant[c.txid] {
			continue
		}
		if prevVerdict[c.txid] == verdictRelevant {
			anyStored, lastStored = true, c.pos
			continue
		}
		newRel = append(newRel, c)
	}
	// The unconfirmed set before the block: the outpoint set is updated
	// from it and the stored transactions (refreshPending), or, with no
	// unconfirmed wallet transaction (nothing to confirm or evict), from
	// the stored transactions alone.
	before, err := w.unminedSet(bk.tm)
	if err != nil {
		return res, err
	}
	var toStore []*candidate
	full := false // the block was restored whole: read the set back
	if len(newRel) > 0 {
		toStore = newRel
		if anyStored && newRel[0].pos < lastStored {
			full = true
			w.coins.reset()
			w.history.invalidate()
			if err := w.txStore.Rollback(bk.tm, b.Height); err != nil {
				return res, fmt.Errorf("restore block %d: %w", b.Height, err)
			}
			toStore = toStore[:0:0]
			for _, c := range cands {
				if relevant[c.txid] {
					toStore = append(toStore, c)
				}
			}
		}
		bm := &wtxmgr.BlockMeta{Block: blockID, Time: b.Header.Timestamp}
		// The net amount of a new transaction that spends no wallet
		// output is what storeTx credited. With no unconfirmed wallet
		// transaction in wtxmgr, one that spends wallet outputs whose
		// facts the coin cache holds has those amounts as its debits
		// (cachedDebits). The others' are read back from wtxmgr, which
		// found their debits (as is every one of a block restored
		// whole, or one wtxmgr already held, confirmed or not).
		known := make(map[chainhash.Hash]int64, len(toStore))
		stored := make(map[chainhash.Hash]struct{}, len(toStore))
		spent := make(map[wire.OutPoint]struct{})
		for _, c := range toStore {
			spendsNone := !full && w.spendsNothing(c.tx, stored)
			var debits []int64
			debitsKnown := false
			if !full && !spendsNone && len(before) == 0 {
				debits, debitsKnown = w.cachedDebits(c.tx, stored, spent)
			}
			_, wasPending := before[c.txid]
			credited, existed, err := w.storeTx(bk, c.tx, c.txid, bm, b.Header.Timestamp)
			if err != nil {
				return res, err
			}
			stored[c.txid] = struct{}{}
			for _, in := range c.tx.TxIn {
				spent[in.PreviousOutPoint] = struct{}{}
			}
			switch {
			case existed || wasPending:
			case spendsNone:
				known[c.txid] = credited
			case debitsKnown:
				n := credited
				for _, d := range debits {
					n = subSat(n, d)
				}
				known[c.txid] = n
			}
		}
		res.Amounts = make(map[chainhash.Hash]int64, len(newRel))
		for _, c := range newRel {
			if n, ok := known[c.txid]; ok {
				res.Relevant = append(res.Relevant, c.txid)
				res.Amounts[c.txid] = n
				continue
			}
			d, err := w.txStore.UniqueTxDetails(bk.tm, &c.txid, &blockID)
			if err != nil || d == nil {
				return res, fmt.Errorf("details of %v: %w", c.txid, errOrMissing(err))
			}
			res.Relevant = append(res.Relevant, c.txid)
			res.Amounts[c.txid] = netAmount(d)
		}
		if !full {
			// newRel is in the order storeTx stored it, after
			// every transaction stored before.
			t := time.Unix(b.Header.Timestamp.Unix(), 0)
			for _, c := range newRel {
				w.history.add(minedTx{txid: c.txid, height: b.Height, block: b.Hash, time: t, delta: res.Amounts[c.txid]})
			}
		}
	}
	evicted, err := w.evictDoubleSpent(bk, cands, relevant)
	if err != nil {
		return res, err
	}
	switch {
	case full:
		if _, err := w.refreshOutpoints(bk.tm); err != nil {
			return res, err
		}
	case len(before) == 0:
		for _, c := range toStore {
			w.watch.spendAndCredit(c.tx, c.txid)
		}
	case len(toStore) > 0 || evicted:
		if _, err := w.refreshPending(bk.tm, before, toStore); err != nil {
			return res, err
		}
	}

	// The new match record: every transaction ever sent for this block,
	// with its current verdict.
	rec := &blockRecord{hash: b.Hash}
	for _, c := range cands {
		switch {
		case relevant[c.txid]:
			rec.entries = append(rec.entries, matchEntry{pos: c.pos, txid: c.txid, verdict: verdictRelevant})
		case c.delivered || prevVerdict[c.txid] == verdictFalsePositive:
			rec.entries = append(rec.entries, matchEntry{pos: c.pos, txid: c.txid, verdict: verdictFalsePositive})
			if _, seen := prevVerdict[c.txid]; !seen {
				res.FalsePositives = append(res.FalsePositives, c.txid)
			}
		}
	}
	w.meta.counters.Relevant += rec.count(verdictRelevant) - prev.count(verdictRelevant)
	w.meta.counters.FalsePositives = w.meta.counters.FalsePositives + rec.count(verdictFalsePositive) - prev.count(verdictFalsePositive)
	if len(rec.entries) > 0 {
		if err := blocks.Put(heightKey(b.Height), rec.encode()); err != nil {
			return res, fmt.Errorf("store block record: %w", err)
		}
	}
	if !reapply {
		if err := w.addrMgr.SetSyncedTo(bk.am, blockStamp(b.Height, b.Hash, &b.Header)); err != nil {
			return res, fmt.Errorf("set sync point %d: %w", b.Height, err)
		}
		if w.meta.firstApplied == noHeight {
			w.meta.firstApplied = b.Height
		}
		w.synced = watch.SyncPoint{Height: b.Height, Hash: b.Hash}
	}
	if err := writeProgress(bk.own, w.meta); err != nil {
		return res, err
	}
	return res, nil
}

// candidates merges the delivered transactions (without their content
// when they are invalid, see checkTx) with those an earlier pass over the
// same block stored (which the new filter may not match again:
// their watched outpoints are spent), in block order, each txid once.
// False positives of earlier passes are not stored, so they are not
// candidates unless delivered again; their records are kept by the caller.
func (w *Wallet) candidates(bk buckets, b *watch.FilteredBlock, prev *blockRecord, blockID *wtxmgr.Block) ([]*candidate, error) {
	byID := make(map[chainhash.Hash]*candidate, len(b.Txs)+len(prev.entries))
	var out []*candidate
	for i, tx := range b.Txs {
		txid := tx.TxHash()
		if _, dup := byID[txid]; dup {
			continue
		}
		c := &candidate{pos: b.TxIndexes[i], txid: txid, tx: tx, delivered: true}
		if checkTx(tx) != nil {
			// Invalid (checkTx): never the wallet's, stored or
			// evicting anything; recorded as sent, a false positive.
			c.tx = nil
		}
		byID[txid] = c
		out = append(out, c)
	}
	for _, e := range prev.entries {
		if _, ok := byID[e.txid]; ok {
			continue
		}
		c := &candidate{pos: e.pos, txid: e.txid}
		if e.verdict == verdictRelevant {
			d, err := w.txStore.UniqueTxDetails(bk.tm, &e.txid, blockID)
			if err != nil || d == nil {
				return nil, fmt.Errorf("%w: stored transaction %v of block %d: %v", ErrCorrupt, e.txid, blockID.Height, errOrMissing(err))
			}
			tx := d.MsgTx
			c.tx = &tx
		}
		byID[e.txid] = c
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pos < out[j].pos })
	return out, nil
}

// judge finds the wallet's transactions among the candidates: those that
// pay a watched script or spend a watched outpoint, including outputs of
// earlier wallet transactions of the same block. Addresses are derived as
// payments use them, and the block is scanned again until nothing changes,
// so a transaction paying an address that a later one in the block made
// watched counts too (height is the block's, for the reserve's pace). It
// reports whether the element set grew.
func (w *Wallet) judge(bk buckets, cands []*candidate, prev map[chainhash.Hash]verdict, height int32) (map[chainhash.Hash]bool, bool, error) {
	relevant := make(map[chainhash.Hash]bool, len(cands))
	for txid, v := range prev {
		if v == verdictRelevant {
			relevant[txid] = true
		}
	}
	created := make(map[wire.OutPoint]struct{})
	grew := false
	for progress := true; progress; {
		progress = false
		for _, c := range cands {
			if c.tx == nil {
				continue
			}
			if !relevant[c.txid] {
				if !w.touches(c.tx, created) {
					continue
				}
				relevant[c.txid] = true
				progress = true
			}
			for i, out := range c.tx.TxOut {
				e := w.watch.lookup(out.PkScript)
				if e == nil {
					continue
				}
				op := wire.OutPoint{Hash: c.txid, Index: uint32(i)}
				if _, ok := created[op]; !ok {
					created[op] = struct{}{}
					progress = true
				}
				added, err := w.ensureGapOf(bk, e.ref, height)
				if err != nil {
					return nil, false, err
				}
				if added {
					grew, progress = true, true
				}
			}
		}
	}
	return relevant, grew, nil
}

// touches reports whether tx pays a watched script or spends a watched
// outpoint (or one in extra).
func (w *Wallet) touches(tx *wire.MsgTx, extra map[wire.OutPoint]struct{}) bool {
	for _, out := range tx.TxOut {
		if w.watch.lookup(out.PkScript) != nil {
			return true
		}
	}
	for _, in := range tx.TxIn {
		if _, ok := w.watch.outpoints[in.PreviousOutPoint]; ok {
			return true
		}
		if _, ok := extra[in.PreviousOutPoint]; ok {
			return true
		}
	}
	return false
}

// storeTx records a wallet transaction, txid, in wtxmgr (mined when bm is set),
// without its witness (see stripWitness),
// marks each output paying a watched script as a credit (change when it
// pays the internal branch), flags those addresses used, and records each
// mined credit in the coin cache (what readCoins would read back for it).
// wtxmgr finds the debits itself from its unspent outputs. It returns the sum of the
// outputs it credited and whether wtxmgr already held the transaction
// (then its credits may include earlier ones).
func (w *Wallet) storeTx(bk buckets, tx *wire.MsgTx, txid chainhash.Hash, bm *wtxmgr.BlockMeta, received time.Time) (credited int64, existed bool, err error) {
	// txid is tx's, which the witness does not change; wtxmgr serializes
	// a record without SerializedTx itself, once, as it writes it.
	rec := &wtxmgr.TxRecord{MsgTx: *stripWitness(tx), Hash: txid, Received: received}
	existed, err = w.txStore.InsertTxCheckIfExists(bk.tm, rec, bm)
	if err != nil {
		return 0, false, fmt.Errorf("insert %v: %w", rec.Hash, err)
	}
	coinbase := bm != nil && blockchain.IsCoinBaseTx(tx)
	for i, out := range tx.TxOut {
		e := w.watch.lookup(out.PkScript)
		if e == nil {
			continue
		}
		change := !e.ref.imported && e.ref.branch == waddrmgr.InternalBranch
		if err := w.txStore.AddCredit(bk.tm, rec, bm, uint32(i), change); err != nil {
			return 0, false, fmt.Errorf("credit %v:%d: %w", rec.Hash, i, err)
		}
		credited = addSat(credited, out.Value)
		if err := w.markUsed(bk, e); err != nil {
			return 0, false, err
		}
		if bm != nil {
			// The watch entry's script is the output's, and never
			// modified: the cache shares it.
			w.coins.put(wire.OutPoint{Hash: rec.Hash, Index: uint32(i)}, coinFact{
				amount: btcutil.Amount(out.Value), height: bm.Block.Height, pkScript: e.ws.pkScript,
				coinbase: coinbase, invalid: out.Value < 0 || out.Value > btcutil.MaxSatoshi})
		}
	}
	return credited, existed, nil
}

// spendsNothing reports whether wtxmgr can have recorded no debit for tx,
// stored as a new mined transaction of this block: none of its inputs
// spends a wallet outpoint (w.watch.outpoints holds every unspent output
// wtxmgr has, as of before the block) or an output of a transaction
// stored from this block (in stored). Its net amount is then its
// credits, which spares reading its details back from wtxmgr.
func (w *Wallet) spendsNothing(tx *wire.MsgTx, stored map[chainhash.Hash]struct{}) bool {
	for _, in := range tx.TxIn {
		if _, ok := w.watch.outpoints[in.PreviousOutPoint]; ok {
			return false
		}
		if _, ok := stored[in.PreviousOutPoint.Hash]; ok {
			return false
		}
	}
	return true
}

// cachedDebits returns, in input order, the amounts wtxmgr debits when it
// stores tx as a new mined transaction of this block while it holds no
// unconfirmed wallet transaction: an input spends a wallet output when the
// output is unspent (in w.watch.outpoints as of before the block, or
// credited to a transaction stored from this block, in stored) and no
// transaction stored before it from this block spent it (in spent). It
// reports false when the coin cache lacks such an output's facts.
func (w *Wallet) cachedDebits(tx *wire.MsgTx, stored map[chainhash.Hash]struct{}, spent map[wire.OutPoint]struct{}) ([]int64, bool) {
	var debits []int64
	for _, in := range tx.TxIn {
		op := in.PreviousOutPoint
		if _, gone := spent[op]; gone {
			continue
		}
		_, unspent := w.watch.outpoints[op]
		_, here := stored[op.Hash]
		if !unspent && !here {
			continue
		}
		f, ok := w.coins.facts[op]
		switch {
		case ok:
			debits = append(debits, int64(f.amount))
		case unspent:
			return nil, false
		}
		// An output of a transaction stored from this block without
		// facts is no credit: storeTx records every mined credit.
	}
	return debits, true
}

// netAmount is a transaction's net effect on the wallet: credits minus
// debits, in satoshis, without wrapping around (addSat).
func netAmount(d *wtxmgr.TxDetails) int64 {
	var n int64
	for _, c := range d.Credits {
		n = addSat(n, int64(c.Amount))
	}
	for _, db := range d.Debits {
		n = subSat(n, int64(db.Amount))
	}
	return n
}

// errNotFound reports a record a lookup should have found.
var errNotFound = errors.New("not found")

// errOrMissing names a nil error from a lookup that found nothing.
func errOrMissing(err error) error {
	if err != nil {
		return err
	}
	return errNotFound
}

// evictDoubleSpent removes the unconfirmed wallet transactions that a
// confirmed transaction of this block, not the wallet's own, double-spends
// (the filter holds the inputs of pending transactions as guards, so such
// a spend is sent). It reports whether it removed any.
func (w *Wallet) evictDoubleSpent(bk buckets, cands []*candidate, relevant map[chainhash.Hash]bool) (bool, error) {
	if len(w.watch.guards) == 0 {
		return false, nil
	}
	before, err := w.txStore.UnminedTxHashes(bk.tm)
	if err != nil || len(before) == 0 {
		return false, err
	}
	for _, c := range cands {
		if c.tx == nil || relevant[c.txid] || !w.spendsGuard(c.tx) {
			continue
		}
		if err := w.removeConflicts(bk, c.tx, c.txid); err != nil {
			return false, err
		}
	}
	after, err := w.txStore.UnminedTxHashes(bk.tm)
	if err != nil {
		return false, err
	}
	return len(after) != len(before), nil
}

// spendsGuard reports whether tx spends an input of a pending wallet
// transaction.
func (w *Wallet) spendsGuard(tx *wire.MsgTx) bool {
	for _, in := range tx.TxIn {
		if _, ok := w.watch.guards[in.PreviousOutPoint]; ok {
			return true
		}
	}
	return false
}
