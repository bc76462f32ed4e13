package wallet

import (
	"fmt"
	"slices"

	"github.com/bloomwatch/bloomwatch/watch"
)

// FilterElements returns what the BIP37 filter must match now: one data
// push per watched script (the push a server finds in the output script:
// hash160 for P2PKH and P2WPKH, script hash for P2SH and P2SH-P2WPKH, the
// 32-byte program for P2WSH and P2TR; never the public key as well, which
// would let a server intersect both forms), and every unspent outpoint,
// confirmed or not, so spends are matched (servers never read witnesses).
// Data keeps the watch order (accounts by scope, branch and index, then
// imports); outpoints come in no particular order. From then on the
// changes are reported as deltas by ApplyBlock, ApplyMempoolTx and
// Rollback.
//
// A wallet that expects to catch up (it never applied a block, or its
// last one is older than CatchUpAge by the wallet's clock) first tops
// every HD branch's lookahead reserve up to CatchUpReserve and commits:
// the node will have hundreds of blocks in flight before its first
// scheduled reload can load more keys.
func (w *Wallet) FilterElements() (watch.Elements, error) {
	unlock, err := w.enter()
	if err != nil {
		return watch.Elements{}, err
	}
	defer unlock()
	if w.expectsCatchUp() {
		err := w.updateNow(func(bk buckets) error {
			_, err := w.catchUpReserve(bk)
			return err
		})
		if err != nil {
			return watch.Elements{}, fmt.Errorf("catch-up reserve: %w", err)
		}
	}
	// The elements themselves are never modified once watched, so the
	// caller shares them (watch.Elements says it must not modify them).
	w.watch.log.Reset()
	return watch.Elements{
		Data:      slices.Clip(w.watch.data),
		OutPoints: slices.Clone(w.watch.outpointList()),
	}, nil
}

// expectsCatchUp reports whether the wallet is about to catch up: it never
// applied a block, or the last one it applied is older than CatchUpAge.
func (w *Wallet) expectsCatchUp() bool {
	if w.meta.firstApplied == noHeight {
		return true
	}
	ts := w.addrMgr.SyncedTo().Timestamp
	return ts.IsZero() || w.now().Sub(ts) > CatchUpAge
}

// Elements returns the elements FilterElements would return now, without
// its effects: no catch-up reserve is derived and the changes logged for
// the watcher stay logged. It is for a reader beside the node (the filter
// a BIP37 sync would load, built and never sent, in a sync over BIP158).
func (w *Wallet) Elements() (watch.Elements, error) {
	unlock, err := w.enter()
	if err != nil {
		return watch.Elements{}, err
	}
	defer unlock()
	return watch.Elements{
		Data:      slices.Clip(w.watch.data),
		OutPoints: slices.Clone(w.watch.outpointList()),
	}, nil
}
