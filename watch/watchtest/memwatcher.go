package watchtest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// ErrNotNext is returned by MemWatcher.ApplyBlock for a block that does not
// extend its sync point.
var ErrNotNext = errors.New("watchtest: block does not extend the watcher's sync point")

// ErrBadConfig is returned by NewMemWatcherGap for a gap below 1 or a nil
// derive function.
var ErrBadConfig = errors.New("watchtest: bad configuration")

// MemTx is one transaction a MemWatcher found relevant.
type MemTx struct {
	Txid   chainhash.Hash
	Height int32 // -1: unconfirmed
	// Amount is the net satoshi change to the watcher.
	Amount int64
}

// memUndo records what one applied block changed, to roll it back.
type memUndo struct {
	height  int32
	hash    chainhash.Hash
	txs     []chainhash.Hash
	created []wire.OutPoint
	spent   map[wire.OutPoint]memCoin
}

// memCoin is an unspent output the watcher owns.
type memCoin struct {
	value  int64
	script []byte
}

// MemWatcher is an in-memory Watcher: a set of output scripts (fixed, or
// derived on demand with a gap limit like an HD wallet) and the coins
// paid to them. Relevance is exact: a transaction is the watcher's when
// an output pays one of its scripts or an input spends one of its coins.
// It is safe for concurrent use (the node calls it from one goroutine;
// tests read it from others).
type MemWatcher struct {
	mu       sync.Mutex
	birthday int32

	scripts  map[string]int // script -> index
	ordered  [][]byte
	derive   func(index uint32) ([]byte, error)
	gap      int
	extra    int // the lookahead reserve beyond the gap
	usedHigh int // highest used index + 1
	// dueHigh is the end of the scripts reported as needed (Data or
	// Due); those derived beyond it are the reserve.
	dueHigh int

	coins   map[wire.OutPoint]memCoin
	txs     map[chainhash.Hash]MemTx
	mempool map[chainhash.Hash]MemTx
	undo    []memUndo
	synced  watch.SyncPoint
	log     watch.DeltaLog
	applied int
	reapply int
}

var _ watch.Watcher = (*MemWatcher)(nil)

// NewMemWatcher returns a watcher for fixed scripts whose transactions
// start at birthday.
func NewMemWatcher(birthday int32, scripts ...[]byte) *MemWatcher {
	w := &MemWatcher{
		birthday: birthday,
		scripts:  make(map[string]int),
		coins:    make(map[wire.OutPoint]memCoin),
		txs:      make(map[chainhash.Hash]MemTx),
		mempool:  make(map[chainhash.Hash]MemTx),
		synced:   watch.SyncPoint{Height: -1},
	}
	for _, s := range scripts {
		w.addScriptLocked(s, false)
	}
	w.log.Reset() // the set as built is what FilterElements returns
	return w
}

// NewMemWatcherGap returns a watcher whose scripts come from derive(0),
// derive(1), ...: it always watches gap scripts past the highest one used,
// deriving more as payments arrive (the behaviour that makes BIP37's
// gap-limit race matter).
func NewMemWatcherGap(birthday int32, gap int, derive func(index uint32) ([]byte, error)) (*MemWatcher, error) {
	if gap <= 0 || derive == nil {
		return nil, fmt.Errorf("%w: gap %d", ErrBadConfig, gap)
	}
	w := NewMemWatcher(birthday)
	w.derive, w.gap = derive, gap
	if err := w.extendLocked(); err != nil {
		return nil, err
	}
	w.log.Reset()
	return w, nil
}

// AddAddress watches addr's output script.
func (w *MemWatcher) AddAddress(addr btcutil.Address) error {
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return fmt.Errorf("memwatcher: script of %v: %w", addr, err)
	}
	w.AddScript(script)
	return nil
}

// AddScript watches an output script.
func (w *MemWatcher) AddScript(script []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addScriptLocked(script, false)
}

// addScriptLocked adds a script and logs its elements, as reserve ones
// when reserve is set; it reports whether the script was new.
func (w *MemWatcher) addScriptLocked(script []byte, reserve bool) bool {
	if _, ok := w.scripts[string(script)]; ok {
		return false
	}
	w.scripts[string(script)] = len(w.ordered)
	w.ordered = append(w.ordered, bytes.Clone(script))
	for _, e := range scriptElements(script) {
		if reserve {
			w.log.AddReserve(e)
		} else {
			w.log.AddData(e)
		}
	}
	return true
}

// scriptElements returns the filter elements of an output script: its
// non-empty data pushes, or the whole script when it pushes nothing.
func scriptElements(s []byte) [][]byte {
	pushes, err := txscript.PushedData(s)
	if err != nil || len(pushes) == 0 {
		return [][]byte{bytes.Clone(s)}
	}
	var out [][]byte
	for _, p := range pushes {
		if len(p) > 0 {
			out = append(out, bytes.Clone(p))
		}
	}
	return out
}

// SetLookahead gives a gap-limit watcher a lookahead reserve of extra
// scripts beyond the gap (bitcoinj's lookahead and threshold): whenever
// fewer than extra remain unused beyond the gap it derives up to extra +
// extra/3 (extra while none is used) and reports the new scripts as ElementDelta.Reserve, and the
// scripts a payment brings within the gap as ElementDelta.Due. A payment
// then never needs a filter reload to stay safe, and the element set
// grows in batches of more than a third of the reserve. It is meant to
// be called before the node starts (FilterElements then includes the
// reserve) and returns w.
func (w *MemWatcher) SetLookahead(extra int) *MemWatcher {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.extra = max(extra, 0)
	if err := w.extendLocked(); err != nil {
		// derive failed for a script the gap already needed: the
		// next ApplyBlock reports it.
		return w
	}
	return w
}

// extendLocked derives scripts until gap unused ones follow the highest
// used, reporting the ones already derived that this brings within the
// gap as due, and tops the reserve up when it runs low; it reports an
// error from derive.
func (w *MemWatcher) extendLocked() error {
	if w.derive == nil {
		return nil
	}
	need := w.usedHigh + w.gap
	for i := w.dueHigh; i < min(need, len(w.ordered)); i++ {
		for _, e := range scriptElements(w.ordered[i]) {
			w.log.AddDue(e)
		}
	}
	for len(w.ordered) < need {
		if err := w.deriveLocked(false); err != nil {
			return err
		}
	}
	w.dueHigh = max(w.dueHigh, need)
	if w.extra > 0 && len(w.ordered)-need < w.extra {
		batch := w.extra / 3
		if w.usedHigh == 0 {
			batch = 0 // nothing used: nothing will run the reserve down yet
		}
		for len(w.ordered) < need+w.extra+batch {
			if err := w.deriveLocked(true); err != nil {
				return err
			}
		}
	}
	return nil
}

// deriveLocked derives the next script.
func (w *MemWatcher) deriveLocked(reserve bool) error {
	s, err := w.derive(uint32(len(w.ordered)))
	if err != nil {
		return fmt.Errorf("memwatcher: derive %d: %w", len(w.ordered), err)
	}
	if !w.addScriptLocked(s, reserve) {
		return fmt.Errorf("memwatcher: derive %d: script already watched", len(w.ordered))
	}
	return nil
}

// Scripts returns the watched scripts in the order they were added.
func (w *MemWatcher) Scripts() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.ordered)
}

// FilterElements implements Watcher: every data push of every script and
// every unspent outpoint. Changes from then on are reported as deltas.
func (w *MemWatcher) FilterElements() (watch.Elements, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log.Reset()
	var els watch.Elements
	for _, s := range w.ordered {
		els.Data = append(els.Data, scriptElements(s)...)
	}
	els.OutPoints = slices.SortedFunc(maps.Keys(w.coins), func(a, b wire.OutPoint) int {
		if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
			return c
		}
		return int(a.Index) - int(b.Index)
	})
	return els, nil
}

// Birthday implements Watcher.
func (w *MemWatcher) Birthday() int32 { return w.birthday }

// SyncedTo implements Watcher.
func (w *MemWatcher) SyncedTo() (watch.SyncPoint, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.synced, nil
}

// ApplyBlock implements Watcher. A block equal to the sync point is
// applied again: only transactions not yet recorded count.
func (w *MemWatcher) ApplyBlock(b *watch.FilteredBlock) (watch.BlockResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b == nil || len(b.Txs) != len(b.TxIndexes) {
		return watch.BlockResult{}, fmt.Errorf("memwatcher: malformed filtered block")
	}
	again := w.synced.Height == b.Height && w.synced.Hash == b.Hash && len(w.undo) > 0
	if !again && w.synced.Height >= 0 && (b.Height != w.synced.Height+1 || b.Header.PrevBlock != w.synced.Hash) {
		return watch.BlockResult{}, fmt.Errorf("%w: block %d (parent %v) on %d (%v)", ErrNotNext, b.Height, b.Header.PrevBlock, w.synced.Height, w.synced.Hash)
	}
	var u *memUndo
	if again {
		u = &w.undo[len(w.undo)-1]
		w.reapply++
	} else {
		w.undo = append(w.undo, memUndo{height: b.Height, hash: b.Hash, spent: make(map[wire.OutPoint]memCoin)})
		u = &w.undo[len(w.undo)-1]
		w.applied++
	}
	res := watch.BlockResult{Amounts: make(map[chainhash.Hash]int64)}
	for _, tx := range b.Txs {
		txid := tx.TxHash()
		if _, known := w.txs[txid]; known && again {
			res.Relevant = append(res.Relevant, txid)
			res.Amounts[txid] = w.txs[txid].Amount
			continue
		}
		amount, relevant := w.applyTxLocked(tx, txid, u)
		if !relevant {
			res.FalsePositives = append(res.FalsePositives, txid)
			continue
		}
		delete(w.mempool, txid)
		w.txs[txid] = MemTx{Txid: txid, Height: b.Height, Amount: amount}
		u.txs = append(u.txs, txid)
		res.Relevant = append(res.Relevant, txid)
		res.Amounts[txid] = amount
	}
	if err := w.extendLocked(); err != nil {
		return watch.BlockResult{}, err
	}
	w.synced = watch.SyncPoint{Height: b.Height, Hash: b.Hash}
	res.Delta = w.log.Take()
	return res, nil
}

// applyTxLocked spends the watcher's coins tx spends and adds the outputs
// it pays to the watcher; it returns the net amount and whether tx is
// relevant.
func (w *MemWatcher) applyTxLocked(tx *wire.MsgTx, txid chainhash.Hash, u *memUndo) (int64, bool) {
	var amount int64
	relevant := false
	for _, in := range tx.TxIn {
		c, ok := w.coins[in.PreviousOutPoint]
		if !ok {
			continue
		}
		relevant = true
		amount -= c.value
		delete(w.coins, in.PreviousOutPoint)
		u.spent[in.PreviousOutPoint] = c
		w.log.RemoveOutPoint(in.PreviousOutPoint)
	}
	for i, out := range tx.TxOut {
		idx, ok := w.scripts[string(out.PkScript)]
		if !ok {
			continue
		}
		relevant = true
		amount += out.Value
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		w.coins[op] = memCoin{value: out.Value, script: out.PkScript}
		u.created = append(u.created, op)
		w.log.AddOutPoint(op)
		w.usedHigh = max(w.usedHigh, idx+1)
	}
	return amount, relevant
}

// ApplyMempoolTx implements Watcher: relevant unconfirmed transactions are
// remembered until a block confirms them.
func (w *MemWatcher) ApplyMempoolTx(tx *wire.MsgTx) (watch.MempoolResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	txid := tx.TxHash()
	if t, ok := w.txs[txid]; ok {
		return watch.MempoolResult{Relevant: true, Amount: t.Amount}, nil
	}
	var amount int64
	relevant := false
	for _, in := range tx.TxIn {
		if c, ok := w.coins[in.PreviousOutPoint]; ok {
			relevant = true
			amount -= c.value
		}
	}
	for _, out := range tx.TxOut {
		if _, ok := w.scripts[string(out.PkScript)]; ok {
			relevant = true
			amount += out.Value
		}
	}
	if relevant {
		w.mempool[txid] = MemTx{Txid: txid, Height: -1, Amount: amount}
	}
	return watch.MempoolResult{Relevant: relevant, Amount: amount}, nil
}

// Rollback implements Watcher.
func (w *MemWatcher) Rollback(height int32) (watch.ElementDelta, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.undo) > 0 && w.undo[len(w.undo)-1].height > height {
		u := w.undo[len(w.undo)-1]
		w.undo = w.undo[:len(w.undo)-1]
		for _, op := range u.created {
			delete(w.coins, op)
			w.log.RemoveOutPoint(op)
		}
		for op, c := range u.spent {
			w.coins[op] = c
			w.log.AddOutPoint(op)
		}
		for _, id := range u.txs {
			delete(w.txs, id)
		}
	}
	if len(w.undo) == 0 {
		w.synced = watch.SyncPoint{Height: -1}
	} else {
		last := w.undo[len(w.undo)-1]
		w.synced = watch.SyncPoint{Height: last.height, Hash: last.hash}
	}
	return w.log.Take(), nil
}

// Txs returns the relevant confirmed transactions by txid.
func (w *MemWatcher) Txs() map[chainhash.Hash]MemTx {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.txs)
}

// Mempool returns the relevant unconfirmed transactions by txid.
func (w *MemWatcher) Mempool() map[chainhash.Hash]MemTx {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.mempool)
}

// Balance returns the sum of the watcher's confirmed coins.
func (w *MemWatcher) Balance() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sum int64
	for _, c := range w.coins {
		sum += c.value
	}
	return sum
}

// Coins returns the watcher's unspent outpoints with their values.
func (w *MemWatcher) Coins() map[wire.OutPoint]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[wire.OutPoint]int64, len(w.coins))
	for op, c := range w.coins {
		out[op] = c.value
	}
	return out
}

// Applied returns how many distinct blocks were applied and how many
// blocks were applied again after an element change.
func (w *MemWatcher) Applied() (blocks, reapplied int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.applied, w.reapply
}
