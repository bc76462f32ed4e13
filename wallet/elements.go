package wallet

import (
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
func (w *Wallet) FilterElements() (watch.Elements, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return watch.Elements{}, err
	}
	// The elements themselves are never modified once watched, so the
	// caller shares them (watch.Elements says it must not modify them).
	w.watch.log.Reset()
	return watch.Elements{
		Data:      slices.Clip(w.watch.data),
		OutPoints: slices.Clone(w.watch.outpointList()),
	}, nil
}
