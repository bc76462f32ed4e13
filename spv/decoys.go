package spv

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/bloomwatch/bloomwatch/decoy"
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

// DecoyFile is the name of the persisted decoys in the data dir.
const DecoyFile = "decoys.json"

// decoyFileVersion is the format version of DecoyFile.
const decoyFileVersion = 1

// MaxDecoys is the largest Config.Decoys.
const MaxDecoys = 1000

// maxDecoyTxs bounds the remembered decoy-matched txids (whose spends
// count as decoy matches too).
const maxDecoyTxs = 100_000

// ErrCorruptDecoys is returned when DecoyFile cannot be parsed. Nothing is
// overwritten: a silent reset would send new decoys, and the intersection
// of the old filters with the new ones would remove both.
var ErrCorruptDecoys = errors.New("spv: corrupt decoy file")

// decoyState is the on-disk form of DecoyFile.
type decoyState struct {
	Version int      `json:"version"`
	Decoys  []string `json:"decoys"` // hex data pushes, in the order chosen
}

// ReadDecoys returns the decoys persisted in dir, in the order they were
// chosen: none when DecoyFile does not exist, an error wrapping
// ErrCorruptDecoys and naming the file when it cannot be parsed.
func ReadDecoys(dir string) ([][]byte, error) {
	path := filepath.Join(dir, DecoyFile)
	var st decoyState
	if found, err := readState(path, "decoys", &st, &st.Version, decoyFileVersion, ErrCorruptDecoys); err != nil || !found {
		return nil, err
	}
	out := make([][]byte, 0, len(st.Decoys))
	seen := make(map[string]struct{}, len(st.Decoys))
	for i, h := range st.Decoys {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) == 0 || len(b) > txscript.MaxScriptElementSize {
			return nil, fmt.Errorf("%w: %s: decoy %d %q is not a hex data push", ErrCorruptDecoys, path, i, h)
		}
		if _, dup := seen[string(b)]; dup {
			return nil, fmt.Errorf("%w: %s: decoy %d %s repeated", ErrCorruptDecoys, path, i, h)
		}
		seen[string(b)] = struct{}{}
		out = append(out, b)
	}
	return out, nil
}

// writeDecoys replaces DecoyFile in dir with decoys, atomically.
func writeDecoys(dir string, decoys [][]byte) error {
	st := decoyState{Version: decoyFileVersion, Decoys: make([]string, len(decoys))}
	for i, d := range decoys {
		st.Decoys[i] = hex.EncodeToString(d)
	}
	return writeState(filepath.Join(dir, DecoyFile), "decoys", st)
}

// decoys is the manager's decoy state: the persisted decoys (at most
// Config.Decoys of them go into filters) and what their matches cost.
type decoys struct {
	dir  string
	max  int
	list [][]byte            // persisted, in order
	set  map[string]struct{} // the active ones (list[:max])
	// txs are decoy-matched txids: a spend of their outputs matched
	// through the outpoint the server inserted (BLOOM_UPDATE_ALL) is a
	// decoy match too.
	txs map[chainhash.Hash]struct{}
}

// loadDecoys reads the decoys of dir for a node with max decoys (none
// read, no file touched, when max is 0).
func loadDecoys(dir string, max int) (*decoys, error) {
	d := &decoys{dir: dir, max: max, set: map[string]struct{}{}, txs: map[chainhash.Hash]struct{}{}}
	if max == 0 {
		return d, nil
	}
	list, err := ReadDecoys(dir)
	if err != nil {
		return nil, err
	}
	d.list = list
	for _, b := range d.active() {
		d.set[string(b)] = struct{}{}
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
	next := decoy.GraphNear(txs, own, d.list, d.max)
	if len(next) == len(d.list) {
		return false, nil
	}
	if err := writeDecoys(d.dir, next); err != nil {
		return false, err
	}
	for _, b := range next[len(d.list):] {
		d.set[string(b)] = struct{}{}
	}
	d.list = next
	return true, nil
}

// matches reports whether tx matched a decoy: an output or scriptSig push
// is one, or an input spends an output of a decoy-matched transaction.
// A match is remembered for the spends that follow.
func (d *decoys) matches(tx *wire.MsgTx, txid chainhash.Hash) bool {
	if len(d.set) == 0 {
		return false
	}
	hit := false
	for _, o := range tx.TxOut {
		hit = hit || d.scriptHit(o.PkScript)
	}
	for _, in := range tx.TxIn {
		if _, ok := d.txs[in.PreviousOutPoint.Hash]; ok {
			hit = true
		}
		hit = hit || d.scriptHit(in.SignatureScript)
	}
	if hit && len(d.txs) < maxDecoyTxs {
		d.txs[txid] = struct{}{}
	}
	return hit
}

// scriptHit reports whether a data push of script is an active decoy.
func (d *decoys) scriptHit(script []byte) bool {
	pushes, err := txscript.PushedData(script)
	if err != nil {
		return false
	}
	for _, p := range pushes {
		if _, ok := d.set[string(p)]; ok {
			return true
		}
	}
	return false
}
