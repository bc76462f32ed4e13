package spv

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Decoys (Config.Decoys). With N > 0 every filter the node sends holds,
// beside the watcher's elements, up to N graph-near decoys (package
// decoy): the scripts of the watcher's counterparties, read from the
// watcher's own transactions as they arrive, and kept in DecoyFile so
// that every later filter, after a restart or a resize, holds the same
// ones (the intersection of filters must not remove them).
//
// Decoys are never watcher elements: the watcher judges every delivered
// transaction by its own elements, so one that matches only a decoy is a
// false positive (Status.DecoyMatches counts them: the bandwidth the
// decoys cost). Peers are never reloaded to add a decoy: a decoy joins
// the next filter the node sends for another reason.
//
// A busy decoy is retired: one that brought DecoyBusyLimit false-positive
// transactions in a run (a counterparty's reused script, an exchange's
// hot wallet) leaves the active set at once, every peer is reloaded
// without it (ReasonDecoyBusy), and it is kept in DecoyFile's retired
// list so that it is never chosen again. An adversary who intersects the
// filters sees it leave and learns it was a decoy (a wallet element
// never leaves): the cost of the cover it gave, against a bandwidth
// bill without bound.

// DecoyFile is the name of the persisted decoys in the data dir.
const DecoyFile = "decoys.json"

// decoyFileVersion is the format version of DecoyFile.
const decoyFileVersion = 1

// MaxDecoys is the largest Config.Decoys.
const MaxDecoys = 1000

// DecoyBusyLimit is the number of false-positive transactions one decoy
// may bring in a run before it is retired (the block that crosses it may
// bring a few more). A counterparty's script that is used once brings
// one or two (the payment and its spend).
const DecoyBusyLimit = 10

// maxDecoyTxs bounds the remembered decoy-matched txids (whose spends
// count as decoy matches too).
const maxDecoyTxs = 100_000

// ErrCorruptDecoys is returned when DecoyFile cannot be parsed. Nothing is
// overwritten: a silent reset would send new decoys, and the intersection
// of the old filters with the new ones would remove both.
var ErrCorruptDecoys = errors.New("spv: corrupt decoy file")

// decoyState is the on-disk form of DecoyFile. Retired was added within
// version 1: an older reader ignores it (and may choose a retired decoy
// again), a newer one reads a file without it as none retired.
type decoyState struct {
	Version int      `json:"version"`
	Decoys  []string `json:"decoys"` // hex data pushes, in the order chosen
	// Retired are busy decoys taken out of the filters, never chosen again.
	Retired []string `json:"retired,omitempty"`
}

// ReadDecoys returns the decoys persisted in dir, in the order they were
// chosen: none when DecoyFile does not exist, an error wrapping
// ErrCorruptDecoys and naming the file when it cannot be parsed.
func ReadDecoys(dir string) ([][]byte, error) {
	list, _, err := readDecoyFile(dir)
	return list, err
}

// ReadRetiredDecoys returns the busy decoys retired in dir, in the order
// they were retired (none when DecoyFile does not exist).
func ReadRetiredDecoys(dir string) ([][]byte, error) {
	_, retired, err := readDecoyFile(dir)
	return retired, err
}

// readDecoyFile reads DecoyFile in dir: the decoys and the retired ones.
// A push may not repeat across the two lists.
func readDecoyFile(dir string) (list, retired [][]byte, err error) {
	path := filepath.Join(dir, DecoyFile)
	var st decoyState
	if found, err := readState(path, "decoys", &st, &st.Version, decoyFileVersion, ErrCorruptDecoys); err != nil || !found {
		return nil, nil, err
	}
	seen := make(map[string]struct{}, len(st.Decoys)+len(st.Retired))
	decode := func(what string, hexes []string) ([][]byte, error) {
		out := make([][]byte, 0, len(hexes))
		for i, h := range hexes {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) == 0 || len(b) > txscript.MaxScriptElementSize {
				return nil, fmt.Errorf("%w: %s: %s %d %q is not a hex data push", ErrCorruptDecoys, path, what, i, h)
			}
			if _, dup := seen[string(b)]; dup {
				return nil, fmt.Errorf("%w: %s: %s %d %s repeated", ErrCorruptDecoys, path, what, i, h)
			}
			seen[string(b)] = struct{}{}
			out = append(out, b)
		}
		return out, nil
	}
	if list, err = decode("decoy", st.Decoys); err != nil {
		return nil, nil, err
	}
	if retired, err = decode("retired decoy", st.Retired); err != nil {
		return nil, nil, err
	}
	return list, retired, nil
}

// writeDecoys replaces DecoyFile in dir with decoys and the retired
// ones, atomically.
func writeDecoys(dir string, decoys, retired [][]byte) error {
	hexes := func(bs [][]byte) []string {
		out := make([]string, len(bs))
		for i, b := range bs {
			out[i] = hex.EncodeToString(b)
		}
		return out
	}
	st := decoyState{Version: decoyFileVersion, Decoys: hexes(decoys)}
	if len(retired) > 0 {
		st.Retired = hexes(retired)
	}
	return writeState(filepath.Join(dir, DecoyFile), "decoys", st)
}

// decoys is the manager's decoy state: the persisted decoys (at most
// Config.Decoys of them go into filters) and what their matches cost.
type decoys struct {
	dir     string
	max     int
	list    [][]byte            // persisted, in order
	set     map[string]struct{} // the active ones (list[:max])
	retired [][]byte            // persisted, never chosen again
	gone    map[string]struct{} // retired, as a set
	// txs are decoy-matched txids, with the decoy that matched: a spend
	// of their outputs matched through the outpoint the server inserted
	// (BLOOM_UPDATE_ALL) is a match of that decoy too.
	txs map[chainhash.Hash]string
	// hits counts each active decoy's false-positive transactions in
	// this run.
	hits map[string]int
}

// loadDecoys reads the decoys of dir for a node with max decoys (none
// read, no file touched, when max is 0).
func loadDecoys(dir string, max int) (*decoys, error) {
	d := &decoys{dir: dir, max: max, set: map[string]struct{}{}, gone: map[string]struct{}{},
		txs: map[chainhash.Hash]string{}, hits: map[string]int{}}
	if max == 0 {
		return d, nil
	}
	list, retired, err := readDecoyFile(dir)
	if err != nil {
		return nil, err
	}
	d.list, d.retired = list, retired
	for _, b := range d.active() {
		d.set[string(b)] = struct{}{}
	}
	for _, b := range retired {
		d.gone[string(b)] = struct{}{}
	}
	return d, nil
}

// active returns the decoys filters hold: the first max persisted ones
// (a lower Config.Decoys than before uses the oldest, and keeps the rest
// on disk).
func (d *decoys) active() [][]byte {
	return d.list[:min(len(d.list), d.max)]
}

// topUp chooses new decoys from the watcher's transactions txs (own
// reports the watcher's elements) until max are held, and persists them.
// It reports whether any was added.
func (d *decoys) topUp(txs []*wire.MsgTx, own func([]byte) bool) (bool, error) {
	if len(d.list) >= d.max || len(txs) == 0 {
		return false, nil
	}
	mine := func(p []byte) bool {
		_, gone := d.gone[string(p)]
		return gone || (own != nil && own(p))
	}
	next := filterpolicy.GraphNear(txs, mine, d.list, d.max)
	if len(next) == len(d.list) {
		return false, nil
	}
	if err := writeDecoys(d.dir, next, d.retired); err != nil {
		return false, err
	}
	for _, b := range next[len(d.list):] {
		d.set[string(b)] = struct{}{}
	}
	d.list = next
	return true, nil
}

// matches returns the decoy tx matched ("" for none): an output or
// scriptSig push that is an active decoy, or an input that spends an
// output of a decoy-matched transaction. A match is remembered for the
// spends that follow.
func (d *decoys) matches(tx *wire.MsgTx, txid chainhash.Hash) string {
	if len(d.set) == 0 && len(d.txs) == 0 {
		return ""
	}
	hit := d.firstHit(tx)
	if hit != "" && len(d.txs) < maxDecoyTxs {
		d.txs[txid] = hit
	}
	return hit
}

// firstHit returns the first decoy tx matches, outputs first ("" for
// none).
func (d *decoys) firstHit(tx *wire.MsgTx) string {
	for _, o := range tx.TxOut {
		if k := d.scriptHit(o.PkScript); k != "" {
			return k
		}
	}
	for _, in := range tx.TxIn {
		if k, ok := d.txs[in.PreviousOutPoint.Hash]; ok {
			return k
		}
		if k := d.scriptHit(in.SignatureScript); k != "" {
			return k
		}
	}
	return ""
}

// scriptHit returns the active decoy among script's data pushes ("" for
// none).
func (d *decoys) scriptHit(script []byte) string {
	pushes, err := txscript.PushedData(script)
	if err != nil {
		return ""
	}
	for _, p := range pushes {
		if _, ok := d.set[string(p)]; ok {
			return string(p)
		}
	}
	return ""
}

// falsePositive counts a false-positive transaction decoy k brought and
// reports whether k has just become busy: it is active and this is its
// DecoyBusyLimit-th.
func (d *decoys) falsePositive(k string) bool {
	if _, active := d.set[k]; !active {
		return false
	}
	d.hits[k]++
	return d.hits[k] == DecoyBusyLimit
}

// retire takes the busy decoy k out of the active set for good and
// persists the change; the next persisted decoy beyond max, if any,
// becomes active. It reports whether k was a decoy to retire.
func (d *decoys) retire(k string) (bool, error) {
	i := slices.IndexFunc(d.list, func(b []byte) bool { return string(b) == k })
	if i < 0 {
		return false, nil
	}
	list := slices.Delete(slices.Clone(d.list), i, i+1)
	retired := append(slices.Clone(d.retired), d.list[i])
	if err := writeDecoys(d.dir, list, retired); err != nil {
		return false, err
	}
	d.list, d.retired = list, retired
	d.gone[k] = struct{}{}
	delete(d.hits, k)
	clear(d.set)
	for _, b := range d.active() {
		d.set[string(b)] = struct{}{}
	}
	return true, nil
}
