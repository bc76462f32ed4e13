package wallet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
	_ "github.com/btcsuite/btcwallet/walletdb/bdb" // registers the bbolt driver
	"github.com/btcsuite/btcwallet/wtxmgr"

	"github.com/bloomwatch/bloomwatch/watch"
)

// dbDriver is the walletdb driver name of the bbolt backend.
const dbDriver = "bdb"

// noFreelistSync skips writing bbolt's freelist at every commit (as lnd
// does): commits get cheaper and Open rebuilds the freelist by scanning,
// which is fast at a watch-only wallet's size.
const noFreelistSync = true

// Compile-time checks that the wallet is what the node syncs.
var (
	_ watch.Watcher = (*Wallet)(nil)
	_ watch.Flusher = (*Wallet)(nil)
)

// Wallet is a watch-only wallet stored in one bbolt file through walletdb:
// waddrmgr holds the HD accounts and derived addresses, wtxmgr the
// transactions, credits, debits and balances, and bloomwatch's own bucket
// the imported scripts, the per-block match records and the counters.
//
// All methods are safe for concurrent use. The node calls the watch.Watcher
// methods from its sync goroutine; readers (Balance, Txs, ...) may run at
// the same time from others and see the applied state, batch included.
type Wallet struct {
	dir  string
	opts options

	mu      sync.Mutex
	db      walletdb.DB
	net     network
	addrMgr *waddrmgr.Manager
	txStore *wtxmgr.Store
	meta    *meta
	watch   *watchSet
	synced  watch.SyncPoint
	batch   *batch
	// pending maps each unconfirmed wallet transaction to when it
	// entered the unconfirmed set (bktPendingSeen); pendingDirty is set
	// when those records must be written (a wallet from before them).
	pending      map[chainhash.Hash]pendingEntry
	pendingDirty bool
	// pendingTotal sums the costs of w.pending and pendingOldest is its
	// earliest seen time (zero when empty): what the budgets and the
	// expiry check read at each relay, kept by notePending and
	// recountPending.
	pendingTotal  pendingCost
	pendingOldest time.Time
	// mempoolFP are the unconfirmed false positives this process has
	// counted (never stored).
	mempoolFP mempoolFPs
	// coins holds what readCoins read of each confirmed wallet output
	// (see coinCache), so a balance read decodes only outputs new since
	// the last read.
	coins coinCache
	// history holds the confirmed transactions the history reads report
	// (see historyCache), so they decode no stored transaction.
	history historyCache
	closed  bool
	// broken holds the error that left the in-memory state unusable (a
	// failed reload after a failed write); every call returns it.
	broken error
}

// CreateConfig describes a new wallet.
type CreateConfig struct {
	// Network is the chain name: mainnet, testnet3, signet, regtest,
	// simnet (aliases main and testnet are accepted).
	Network string
	// Xpubs are account-level extended public keys. The version selects
	// the address type (SLIP-132): xpub/tpub/spub P2PKH (BIP44),
	// ypub/upub P2SH-P2WPKH (BIP49), zpub/vpub P2WPKH (BIP84).
	Xpubs []string
	// TaprootXpubs are account-level extended public keys of BIP86
	// taproot accounts (m/86'/coin'/account'), in the network's plain
	// version (xpub, tpub): SLIP-132 has no taproot version.
	TaprootXpubs []string
	// Descriptors are output descriptors to watch (see
	// ParseDescriptor), imported after the xpubs.
	Descriptors []string
	// Addresses are single addresses to watch (P2PKH, P2SH, P2WPKH,
	// P2WSH, P2TR).
	Addresses []string
	// Scripts are raw output scripts to watch.
	Scripts [][]byte
	// Birthday is the first height that can hold the wallet's
	// transactions.
	Birthday int32
	// GapExternal and GapInternal are the gap limits of the receive and
	// change branches; zero selects the defaults.
	GapExternal uint32
	GapInternal uint32
}

// MaxBirthday is the highest birthday a wallet accepts: 50,000,000
// blocks, 950 years of mainnet's ten-minute blocks and ten times
// testnet3's height (below 5 million in 2026, the highest of the public
// networks). A birthday beyond the chain makes the sync scan nothing and
// report the wallet synced and empty; a typo or an overflow
// (2147483647) is far above this.
const MaxBirthday = 50_000_000

// plan is a CreateConfig with every input decoded and checked.
type plan struct {
	net      network
	keys     []*accountKey
	descs    []*watchedDesc
	scripts  []*watchedScript
	birthday int32
	gapExt   uint32
	gapInt   uint32
}

// validate decodes every input of cfg without touching the disk.
func (cfg *CreateConfig) validate() (*plan, error) {
	net, err := resolveNetwork(cfg.Network)
	if err != nil {
		return nil, err
	}
	p := &plan{net: net, birthday: cfg.Birthday, gapExt: cfg.GapExternal, gapInt: cfg.GapInternal}
	if p.birthday < 0 {
		return nil, inputErr("birthday", fmt.Sprint(cfg.Birthday), fmt.Errorf("%w: negative height", ErrInvalidConfig))
	}
	if p.birthday > MaxBirthday {
		return nil, inputErr("birthday", fmt.Sprint(cfg.Birthday), fmt.Errorf("%w: at most %d", ErrInvalidConfig, MaxBirthday))
	}
	if p.gapExt == 0 {
		p.gapExt = DefaultGapExternal
	}
	if p.gapInt == 0 {
		p.gapInt = DefaultGapInternal
	}
	for _, g := range []uint32{p.gapExt, p.gapInt} {
		if g > MaxGap {
			return nil, inputErr("gap limit", fmt.Sprint(g), fmt.Errorf("%w: at most %d", ErrInvalidConfig, MaxGap))
		}
	}
	for _, s := range cfg.Xpubs {
		k, err := parseAccountKey(s, net.params)
		if err != nil {
			return nil, err
		}
		for _, prev := range p.keys {
			if prev.scope == k.scope && sameKey(prev.key, k.key) {
				return nil, inputErr("xpub", s, ErrDuplicate)
			}
		}
		p.keys = append(p.keys, k)
	}
	for _, s := range cfg.TaprootXpubs {
		k, err := parseTaprootKey(s, net.params)
		if err != nil {
			return nil, err
		}
		for _, prev := range p.keys {
			if prev.scope == k.scope && sameKey(prev.key, k.key) {
				return nil, inputErr("xpub", s, ErrDuplicate)
			}
		}
		p.keys = append(p.keys, k)
	}
	// Descriptors are checked here; one that duplicates another input
	// is refused when imported, inside the database Create discards.
	for _, s := range cfg.Descriptors {
		d, err := parseDescriptor(s, net.params)
		if err != nil {
			return nil, err
		}
		p.descs = append(p.descs, d)
	}
	seen := make(map[string]bool)
	addScript := func(ws *watchedScript, shown string) error {
		if seen[string(ws.pkScript)] {
			return inputErr("address", shown, ErrDuplicate)
		}
		seen[string(ws.pkScript)] = true
		p.scripts = append(p.scripts, ws)
		return nil
	}
	for _, s := range cfg.Addresses {
		ws, err := parseAddress(s, net.params)
		if err != nil {
			return nil, err
		}
		if err := addScript(ws, s); err != nil {
			return nil, err
		}
	}
	for _, s := range cfg.Scripts {
		ws, err := parseScript(s, net.params)
		if err != nil {
			return nil, err
		}
		if err := addScript(ws, fmt.Sprintf("%x", s)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// dbPath returns the wallet file of a data directory.
func dbPath(dir string) string { return filepath.Join(dir, dbFileName) }

// Exists reports whether dir holds a wallet file.
func Exists(dir string) bool {
	_, err := os.Stat(dbPath(dir))
	return err == nil
}

// Create makes a new wallet in dir (created if missing) and returns it
// open. Every input is checked before anything is written; on failure
// Create removes only what it created. The database is built under a
// temporary name and renamed into place once complete, so a process killed
// while creating leaves no half-made wallet (Exists stays false).
func Create(dir string, cfg CreateConfig, opts ...Option) (_ *Wallet, err error) {
	p, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	path := dbPath(dir)
	if _, statErr := os.Lstat(path); statErr == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, path)
	} else if !errors.Is(statErr, os.ErrNotExist) {
		return nil, fmt.Errorf("create wallet: %w", statErr)
	}
	createdDirs, err := makeDirs(dir)
	if err != nil {
		return nil, fmt.Errorf("create wallet: %w", err)
	}
	tmp := path + creatingSuffix
	var (
		db      walletdb.DB
		nw      *Wallet
		renamed bool
	)
	defer func() {
		if err == nil {
			return
		}
		if nw != nil {
			nw.closeManagers()
		}
		if db != nil {
			_ = db.Close()
		}
		_ = os.Remove(tmp)
		if renamed {
			_ = os.Remove(path)
		}
		for i := len(createdDirs) - 1; i >= 0; i-- {
			_ = os.Remove(createdDirs[i])
		}
	}()
	// A leftover of a create that was killed: never a wallet.
	if err = os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("create wallet: %w", err)
	}
	db, err = walletdb.Create(dbDriver, tmp, noFreelistSync, dbOpenTimeout)
	if err != nil {
		return nil, fmt.Errorf("create wallet database: %w", err)
	}
	nw = newWallet(dir, db, opts)
	if err = walletdb.Update(db, func(tx walletdb.ReadWriteTx) error {
		return nw.initialize(tx, p)
	}); err != nil {
		return nil, fmt.Errorf("create wallet: %w", err)
	}
	nw.closeManagers()
	nw = nil
	err = db.Close()
	db = nil
	if err != nil {
		return nil, fmt.Errorf("create wallet database: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("create wallet: %w", err)
	}
	renamed = true
	if err = syncDir(dir); err != nil {
		return nil, fmt.Errorf("create wallet: %w", err)
	}
	w, err := Open(dir, opts...)
	if err != nil {
		return nil, fmt.Errorf("create wallet: reopen: %w", err)
	}
	return w, nil
}

// creatingSuffix names the database while Create builds it.
const creatingSuffix = ".creating"

// syncDir fsyncs a directory so a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// makeDirs creates dir and its missing parents and returns the ones it
// created, outermost first.
func makeDirs(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		missing = append([]string{d}, missing...)
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, err
	}
	return missing, nil
}

func newWallet(dir string, db walletdb.DB, opts []Option) *Wallet {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	return &Wallet{dir: dir, db: db, opts: o}
}

// initialize writes a new wallet's namespaces, metadata, accounts and
// imported scripts in one transaction.
func (w *Wallet) initialize(tx walletdb.ReadWriteTx, p *plan) error {
	am, err := tx.CreateTopLevelBucket(waddrmgrNS)
	if err != nil {
		return err
	}
	tm, err := tx.CreateTopLevelBucket(wtxmgrNS)
	if err != nil {
		return err
	}
	own, err := tx.CreateTopLevelBucket(ownNS)
	if err != nil {
		return err
	}
	for _, b := range [][]byte{bktImported, bktBlocks, bktMempoolFP, bktPendingSeen, bktHDScripts} {
		if _, err := own.CreateBucket(b); err != nil {
			return err
		}
	}
	// A nil root key makes a watch-only manager: no seed, no private
	// keys, no default scopes; scopes are added per imported account.
	genesis := p.net.params.GenesisBlock.Header.Timestamp
	if err := waddrmgr.Create(am, nil, publicPassphrase, nil, p.net.params, &scryptOptions, genesis); err != nil {
		return fmt.Errorf("address manager: %w", err)
	}
	if err := wtxmgr.Create(tm); err != nil {
		return fmt.Errorf("transaction store: %w", err)
	}
	m := &meta{
		network:      p.net.name,
		birthday:     p.birthday,
		gapExternal:  p.gapExt,
		gapInternal:  p.gapInt,
		firstApplied: noHeight,
	}
	if err := writeMeta(own, m); err != nil {
		return err
	}
	mgr, err := waddrmgr.Open(am, publicPassphrase, p.net.params)
	if err != nil {
		return fmt.Errorf("address manager: %w", err)
	}
	w.net, w.meta, w.addrMgr, w.watch = p.net, m, mgr, newWatchSet()
	// Derivations write to the transaction they run in (writeOwn).
	w.batch = &batch{tx: tx}
	defer func() { w.batch = nil }()
	for _, k := range p.keys {
		if _, err := w.importXpub(am, k); err != nil {
			return err
		}
	}
	for _, d := range p.descs {
		if _, err := w.importDescriptor(buckets{am: am, tm: tm, own: own}, d); err != nil {
			return err
		}
	}
	return w.importScripts(own, p.scripts)
}

// Open opens the wallet in dir. A missing directory or file gives
// ErrNoWallet, a file another process holds ErrInUse, and a file that is
// not a readable wallet ErrCorrupt; the file is never modified on
// failure.
func Open(dir string, opts ...Option) (*Wallet, error) {
	path := dbPath(dir)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w: %s", ErrNoWallet, dir)
	case err != nil:
		return nil, fmt.Errorf("open wallet: %w", err)
	case !info.Mode().IsRegular():
		return nil, corruptErr(path, errors.New("not a regular file"))
	case info.Size() < minDBFileSize:
		return nil, corruptErr(path, fmt.Errorf("file of %d bytes is too short", info.Size()))
	}
	// Check readability without bbolt, which would open read-write.
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open wallet: %w", err)
	}
	_ = f.Close()

	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	w := newWallet(dir, db, opts)
	if err := w.migrateGuarded(); err != nil {
		_ = db.Close()
		if errors.Is(err, ErrCorrupt) {
			return nil, corruptErr(path, err)
		}
		return nil, fmt.Errorf("open wallet: migrate: %w", err)
	}
	if err := w.loadGuarded(); err != nil {
		_ = db.Close()
		if errors.Is(err, ErrCorrupt) {
			return nil, corruptErr(path, err)
		}
		return nil, fmt.Errorf("open wallet: %w", err)
	}
	if w.opts.network != "" {
		want, err := resolveNetwork(w.opts.network)
		if err != nil {
			w.closeManagers()
			_ = db.Close()
			return nil, err
		}
		if want.name != w.net.name {
			w.closeManagers()
			_ = db.Close()
			return nil, fmt.Errorf("%w: wallet in %s is %s, not %s", ErrWrongNetwork, dir, w.net.name, want.name)
		}
	}
	if err := w.forgetMempoolFPs(); err != nil {
		w.closeManagers()
		_ = db.Close()
		return nil, fmt.Errorf("open wallet: %w", err)
	}
	if err := w.expireAtOpen(); err != nil {
		w.closeManagers()
		_ = db.Close()
		return nil, fmt.Errorf("open wallet: %w", err)
	}
	return w, nil
}

// corruptErr wraps a reason in ErrCorrupt with advice.
func corruptErr(path string, reason error) error {
	if errors.Is(reason, ErrCorrupt) {
		return fmt.Errorf("%w (%s); the file was left as it was: restore a backup, or move it away and create the wallet again", reason, path)
	}
	return fmt.Errorf("%w: %v (%s); the file was left as it was: restore a backup, or move it away and create the wallet again",
		ErrCorrupt, reason, path)
}

// Close commits any open batch and closes the database. It is idempotent.
func (w *Wallet) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	var errs []error
	if w.batch != nil && w.broken == nil {
		if err := w.commitLocked(); err != nil {
			errs = append(errs, err)
		}
	}
	w.closeManagers()
	if err := w.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close wallet database: %w", err))
	}
	return errors.Join(errs...)
}

// closeManagers releases the address manager's in-memory keys.
func (w *Wallet) closeManagers() {
	if w.addrMgr != nil {
		w.addrMgr.Close()
		w.addrMgr = nil
	}
}

// usable returns the error every call must fail with, if any. The caller
// holds w.mu.
// enter takes the wallet's lock and checks that the wallet is usable (open,
// not broken): the preamble of every method that reads or writes it. On
// success the caller defers the returned unlock; on error the lock is
// already released.
func (w *Wallet) enter() (unlock func(), err error) {
	w.mu.Lock()
	if err := w.usable(); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	return w.mu.Unlock, nil
}

func (w *Wallet) usable() error {
	if w.closed {
		return ErrClosed
	}
	return w.broken
}

// Dir returns the wallet's data directory.
func (w *Wallet) Dir() string { return w.dir }

// Network returns the canonical name of the wallet's network.
func (w *Wallet) Network() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.net.name
}

// Birthday returns the first height that can hold the wallet's
// transactions.
func (w *Wallet) Birthday() int32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.meta == nil {
		return 0
	}
	return w.meta.birthday
}

// SyncedTo returns the last block applied: while a batch is open, the
// last block of the batch; after a crash, the last block committed. With a
// rescan pending (RescanPending) it reports none applied (height -1), so
// the node syncs from the birthday; the wallet's readers still count
// confirmations from the block the kept history reaches (HistoryPoint).
func (w *Wallet) SyncedTo() (watch.SyncPoint, error) {
	unlock, err := w.enter()
	if err != nil {
		return watch.SyncPoint{Height: noHeight}, err
	}
	defer unlock()
	if w.meta.rescanPending {
		return watch.SyncPoint{Height: noHeight}, nil
	}
	return w.synced, nil
}

// RescanPending reports whether keys, descriptors or addresses were added
// after the wallet had applied blocks and the next sync has not started
// their rescan yet. Until it does, the wallet shows what it found before
// (transactions confirmed at their heights, the balance they make, as of
// HistoryPoint) and nothing of the history of what was added.
func (w *Wallet) RescanPending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.meta != nil && w.meta.rescanPending
}

// HistoryPoint returns the last block the wallet's transactions and
// balance reflect: SyncedTo's, or with a rescan pending the block the
// kept history reaches (height -1 when none was applied).
func (w *Wallet) HistoryPoint() watch.SyncPoint {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.synced
}

// GapLimits returns the external and internal gap limits.
func (w *Wallet) GapLimits() (external, internal uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.meta.gapExternal, w.meta.gapInternal
}

// now returns the wallet clock's time.
func (w *Wallet) now() time.Time { return w.opts.now() }
