package wallet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"runtime/debug"
	"sort"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/btcsuite/btcwallet/wtxmgr"
	"go.etcd.io/bbolt"

	"github.com/bloomwatch/bloomwatch/watch"
)

// openDB opens an existing wallet file, translating bbolt's failures.
// bbolt checks only the meta pages and then trusts the file: a damaged page
// makes it panic (or fault on its memory map) while it rebuilds the
// freelist, so that panic is turned into ErrCorrupt. The file descriptor
// bbolt had opened then stays open until the process exits.
func openDB(path string) (db walletdb.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, corruptErr(path, fmt.Errorf("opening the database failed: %v", r))
		}
	}()
	// bbolt takes its file lock before it reads the file and may panic on
	// garbage; a panic there leaks the lock and the descriptor. Refuse a
	// file whose meta pages do not describe it before bbolt sees it.
	if err := checkBoltFile(path); err != nil {
		return nil, err
	}
	db, err = walletdb.Open(dbDriver, path, noFreelistSync, dbOpenTimeout)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, bbolt.ErrTimeout):
		return nil, fmt.Errorf("%w: %s", ErrInUse, path)
	case errors.Is(err, walletdb.ErrInvalid), errors.Is(err, bbolt.ErrInvalid),
		errors.Is(err, bbolt.ErrChecksum), errors.Is(err, bbolt.ErrVersionMismatch):
		return nil, corruptErr(path, err)
	default:
		return nil, fmt.Errorf("open wallet database: %w", err)
	}
}

// loadGuarded runs load, turning a panic or memory fault raised by
// reading a damaged file into ErrCorrupt: bbolt trusts its pages and
// panics (or faults on the memory map) on garbage.
func (w *Wallet) loadGuarded() (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: reading the database failed: %v", ErrCorrupt, r)
		}
	}()
	return w.load()
}

// migrateGuarded runs migrateHD, turning a panic or memory fault raised by
// reading a damaged file into ErrCorrupt, as loadGuarded does.
func (w *Wallet) migrateGuarded() (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: reading the database failed: %v", ErrCorrupt, r)
		}
	}()
	return migrateHD(w.db)
}

// load (re)builds every piece of in-memory state from the committed
// database: the managers, the metadata, the watch set and the sync point.
func (w *Wallet) load() error {
	w.coins.reset()
	return walletdb.View(w.db, func(tx walletdb.ReadTx) error {
		return w.loadFrom(tx)
	})
}

func (w *Wallet) loadFrom(tx walletdb.ReadTx) error {
	am, tm, own := tx.ReadBucket(waddrmgrNS), tx.ReadBucket(wtxmgrNS), tx.ReadBucket(ownNS)
	if am == nil || tm == nil || own == nil {
		return fmt.Errorf("%w: not a bloomwatch wallet (namespaces missing)", ErrCorrupt)
	}
	m, err := readMeta(own)
	if err != nil {
		return err
	}
	net, err := resolveNetwork(m.network)
	if err != nil {
		return fmt.Errorf("%w: stored network %q: %v", ErrCorrupt, m.network, err)
	}
	mgr, err := waddrmgr.Open(am, publicPassphrase, net.params)
	if err != nil {
		return fmt.Errorf("%w: address manager: %v", ErrCorrupt, err)
	}
	store, err := wtxmgr.Open(tm, net.params)
	if err != nil {
		mgr.Close()
		return fmt.Errorf("%w: transaction store: %v", ErrCorrupt, err)
	}
	ws := newWatchSet()
	if err := loadAccounts(am, own, mgr, net.params, ws); err != nil {
		mgr.Close()
		return err
	}
	if err := loadMultisig(own, net.params, ws); err != nil {
		mgr.Close()
		return err
	}
	if err := loadImported(own, ws); err != nil {
		mgr.Close()
		return err
	}
	ops, guards, err := unspentOutpoints(tm, store)
	if err != nil {
		mgr.Close()
		return err
	}
	ws.setOutpoints(ops, guards)
	pending, pendingDirty, err := loadPending(tm, own, store, w.now())
	if err != nil {
		mgr.Close()
		return err
	}
	if w.watch != nil {
		// A reload after a failed write must not reuse a version
		// number the node may have seen with another set.
		ws.version = w.watch.version + 1
	}
	synced := watch.SyncPoint{Height: noHeight}
	if m.firstApplied != noHeight {
		bs := mgr.SyncedTo()
		synced = watch.SyncPoint{Height: bs.Height, Hash: bs.Hash}
	}
	// The set as loaded is what a node reads with FilterElements; the
	// log reports changes from here on.
	ws.log.Reset()
	w.closeManagers()
	w.loadHistory(tm, store)
	w.net, w.meta, w.addrMgr, w.txStore, w.watch, w.synced = net, m, mgr, store, ws, synced
	w.pending, w.pendingDirty = pending, pendingDirty
	w.recountPending()
	return nil
}

// sortedScopes returns the manager's scopes in (purpose, coin) order, so
// the element order is the same at every open.
func sortedScopes(mgr *waddrmgr.Manager) []*waddrmgr.ScopedKeyManager {
	sms := mgr.ActiveScopedKeyManagers()
	sort.Slice(sms, func(i, j int) bool {
		a, b := sms[i].Scope(), sms[j].Scope()
		if a.Purpose != b.Purpose {
			return a.Purpose < b.Purpose
		}
		return a.Coin < b.Coin
	})
	return sms
}

// loadImported adds every imported address and script.
func loadImported(own walletdb.ReadBucket, ws *watchSet) error {
	return own.NestedReadBucket(bktImported).ForEach(func(k, v []byte) error {
		r, err := decodeImportedRecord(k, v)
		if err != nil {
			return err
		}
		ws.addUsed(&r.ws, addrRef{imported: true}, r.used, false)
		return nil
	})
}

// wtxmgrUnspent is wtxmgr's index of the mined wallet outputs no mined
// transaction spends (spent or not by an unmined one), a bucket of its
// namespace keyed by the canonical outpoint: the 32-byte txid, then the
// output index in 4 bytes big-endian (wtxmgr/db.go, "The unspent index").
// Walking its keys reads no transaction; wtxmgr's UnspentOutputs decodes
// the whole transaction again for each output. TestUnspentIndexMatches
// compares the two, so a wtxmgr whose layout differs fails it.
var wtxmgrUnspent = []byte("u")

// canonicalOutPointSize is the size of a key of wtxmgrUnspent.
const canonicalOutPointSize = chainhash.HashSize + 4

// unspentOutpoints returns the outpoints whose spends the filter must
// match: wtxmgr's unspent outputs (mined and unmined) plus the outputs
// unconfirmed transactions spend, which wtxmgr leaves out of
// UnspentOutputs but which stay unspent on chain until the spend confirms;
// and the guards, the other inputs of unconfirmed transactions. It reads
// the keys of wtxmgr's unspent index and the unconfirmed transactions
// (bounded by MaxPendingTxs and MaxPendingBytes), each once: linear in the
// wallet's outputs.
func unspentOutpoints(tm walletdb.ReadBucket, store *wtxmgr.Store) (ops, guards map[wire.OutPoint]struct{}, err error) {
	idx := tm.NestedReadBucket(wtxmgrUnspent)
	if idx == nil {
		return nil, nil, fmt.Errorf("%w: transaction store has no unspent index", ErrCorrupt)
	}
	ops = make(map[wire.OutPoint]struct{})
	err = idx.ForEach(func(k, _ []byte) error {
		if len(k) != canonicalOutPointSize {
			return fmt.Errorf("%w: unspent index key of %d bytes", ErrCorrupt, len(k))
		}
		var op wire.OutPoint
		copy(op.Hash[:], k)
		op.Index = binary.BigEndian.Uint32(k[chainhash.HashSize:])
		ops[op] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("unspent outputs: %w", err)
	}
	guards = make(map[wire.OutPoint]struct{})
	err = store.RangeTransactions(tm, noHeight, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			for _, c := range d.Credits {
				ops[wire.OutPoint{Hash: d.Hash, Index: c.Index}] = struct{}{}
			}
			debit := make(map[uint32]bool, len(d.Debits))
			for _, deb := range d.Debits {
				ops[d.MsgTx.TxIn[deb.Index].PreviousOutPoint] = struct{}{}
				debit[deb.Index] = true
			}
			for j, in := range d.MsgTx.TxIn {
				if !debit[uint32(j)] {
					guards[in.PreviousOutPoint] = struct{}{}
				}
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("unconfirmed transactions: %w", err)
	}
	return ops, guards, nil
}

// refreshOutpoints recomputes the outpoint set inside a write and reports
// whether it changed.
func (w *Wallet) refreshOutpoints(tm walletdb.ReadBucket) (bool, error) {
	ops, guards, err := unspentOutpoints(tm, w.txStore)
	if err != nil {
		return false, err
	}
	return w.watch.setOutpoints(ops, guards), nil
}

// unminedSet returns the txids of wtxmgr's unconfirmed set (a walk of its
// keys, no transaction decoded).
func (w *Wallet) unminedSet(tm walletdb.ReadBucket) (map[chainhash.Hash]struct{}, error) {
	hashes, err := w.txStore.UnminedTxHashes(tm)
	if err != nil {
		return nil, fmt.Errorf("unconfirmed transactions: %w", err)
	}
	set := make(map[chainhash.Hash]struct{}, len(hashes))
	for _, h := range hashes {
		set[*h] = struct{}{}
	}
	return set, nil
}

// refreshPending recomputes the outpoint set after a write that stored the
// mined transactions mined (in block order) and changed the unconfirmed
// set in any way (added, confirmed, evicted, expired), without reading
// every unspent output as refreshOutpoints does (wtxmgr decodes each one's
// whole transaction: tens of milliseconds per call with thousands of
// coins). before is the unconfirmed set before the write.
//
// The set is the wallet's mined unspent outputs plus the outputs of
// unconfirmed wallet transactions (the coins those spend are among
// both). In the current set, an outpoint of a transaction in before is an
// unconfirmed output and every other one a mined unspent output; the
// mined part changes only by the stored transactions, whose inputs leave
// it and whose outputs paying watched scripts join it (what storeTx
// credits); the unconfirmed part and the guards are read afresh from the
// unconfirmed transactions, which are few. It reports whether the set
// changed.
func (w *Wallet) refreshPending(tm walletdb.ReadBucket, before map[chainhash.Hash]struct{}, mined []*candidate) (bool, error) {
	ops := make(map[wire.OutPoint]struct{}, len(w.watch.outpoints))
	for op := range w.watch.outpoints {
		if _, pending := before[op.Hash]; !pending {
			ops[op] = struct{}{}
		}
	}
	for _, c := range mined {
		for _, in := range c.tx.TxIn {
			delete(ops, in.PreviousOutPoint)
		}
		for i, out := range c.tx.TxOut {
			if w.watch.lookup(out.PkScript) != nil {
				ops[wire.OutPoint{Hash: c.txid, Index: uint32(i)}] = struct{}{}
			}
		}
	}
	guards := make(map[wire.OutPoint]struct{})
	err := w.txStore.RangeTransactions(tm, noHeight, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			for _, c := range d.Credits {
				ops[wire.OutPoint{Hash: d.Hash, Index: c.Index}] = struct{}{}
			}
			debit := make(map[uint32]bool, len(d.Debits))
			for _, deb := range d.Debits {
				ops[d.MsgTx.TxIn[deb.Index].PreviousOutPoint] = struct{}{}
				debit[deb.Index] = true
			}
			for j, in := range d.MsgTx.TxIn {
				if !debit[uint32(j)] {
					guards[in.PreviousOutPoint] = struct{}{}
				}
			}
		}
		return false, nil
	})
	if err != nil {
		return false, fmt.Errorf("unconfirmed transactions: %w", err)
	}
	return w.watch.setOutpoints(ops, guards), nil
}

// buckets are the three namespaces inside one write transaction.
type buckets struct {
	am, tm, own walletdb.ReadWriteBucket
}

func writeBuckets(tx walletdb.ReadWriteTx) (buckets, error) {
	b := buckets{tx.ReadWriteBucket(waddrmgrNS), tx.ReadWriteBucket(wtxmgrNS), tx.ReadWriteBucket(ownNS)}
	if b.am == nil || b.tm == nil || b.own == nil {
		return b, fmt.Errorf("%w: namespaces missing", ErrCorrupt)
	}
	return b, nil
}

// readBuckets are the three namespaces inside one read transaction.
type readBuckets struct {
	am, tm, own walletdb.ReadBucket
}

func readBucketsOf(tx walletdb.ReadTx) (readBuckets, error) {
	b := readBuckets{tx.ReadBucket(waddrmgrNS), tx.ReadBucket(wtxmgrNS), tx.ReadBucket(ownNS)}
	if b.am == nil || b.tm == nil || b.own == nil {
		return b, fmt.Errorf("%w: namespaces missing", ErrCorrupt)
	}
	return b, nil
}

// blockStamp is the waddrmgr sync point of a block.
func blockStamp(height int32, hash chainhash.Hash, header *wire.BlockHeader) *waddrmgr.BlockStamp {
	bs := &waddrmgr.BlockStamp{Height: height, Hash: hash}
	if header != nil {
		bs.Timestamp = header.Timestamp
	}
	return bs
}

// bbolt file layout, as bbolt v1 writes it: two meta pages, each a 16-byte
// page header followed by the meta: magic, version, page size, flags, root
// bucket (16 bytes), freelist page, high-water page id, txid, and an
// FNV-64a checksum of the meta bytes before it.
const (
	boltMagic      = 0xED0CDAED
	boltPageHeader = 16
	boltMetaPgid   = 4 + 4 + 4 + 4 + 16 + 8
	boltMetaTxid   = boltMetaPgid + 8
	boltMetaSum    = boltMetaTxid + 8
	boltMetaSize   = boltMetaSum + 8
	boltMinPage    = 512
	boltMaxPage    = 1 << 16
	boltMetaPages  = 2
)

// checkBoltFile reports ErrCorrupt for a file bbolt would choke on: too
// short for its meta pages, no meta page with a valid magic and checksum,
// or a high-water mark of the newest valid meta past the end of the file
// (a truncated database).
func checkBoltFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open wallet database: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open wallet database: %w", err)
	}
	first := make([]byte, boltPageHeader+boltMetaSize)
	if _, err := f.ReadAt(first, 0); err != nil {
		return corruptErr(path, fmt.Errorf("too short for a database (%d bytes)", st.Size()))
	}
	pageSize := int64(binary.LittleEndian.Uint32(first[boltPageHeader+8:]))
	if pageSize < boltMinPage || pageSize > boltMaxPage {
		pageSize = int64(os.Getpagesize()) // bbolt's default; meta 0 may be torn
	}
	var (
		bestTxid uint64
		hw       int64 = -1
	)
	for i := int64(0); i < boltMetaPages; i++ {
		page := make([]byte, boltPageHeader+boltMetaSize)
		if _, err := f.ReadAt(page, i*pageSize); err != nil {
			continue
		}
		meta := page[boltPageHeader:]
		if binary.LittleEndian.Uint32(meta) != boltMagic {
			continue
		}
		h := fnv.New64a()
		_, _ = h.Write(meta[:boltMetaSum])
		if h.Sum64() != binary.LittleEndian.Uint64(meta[boltMetaSum:]) {
			continue
		}
		if txid := binary.LittleEndian.Uint64(meta[boltMetaTxid:]); hw < 0 || txid > bestTxid {
			bestTxid, hw = txid, int64(binary.LittleEndian.Uint64(meta[boltMetaPgid:]))
		}
	}
	switch {
	case hw < 0:
		return corruptErr(path, errors.New("no valid bbolt meta page"))
	case hw*pageSize > st.Size():
		return corruptErr(path, fmt.Errorf("truncated: %d bytes, its pages need %d", st.Size(), hw*pageSize))
	}
	return nil
}
