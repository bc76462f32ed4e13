package wallet

import (
	"fmt"

	"github.com/btcsuite/btcwallet/wtxmgr"
)

// TruthElement is one of the wallet's elements as an observer that holds
// the chain can find it: the filter element of a used address or script
// (the push a server finds in the output script), which every payment to
// it puts on chain. Unused addresses are in the filter but on no chain:
// no observer can find them, so they are not part of the truth.
type TruthElement struct {
	// Element is the filter element (the data push).
	Element []byte
	// Address is the encoded address, empty for a script no address
	// encodes.
	Address string
	// FirstHeight is the height of the first block of the best chain the
	// wallet knows that paid it, -1 when no confirmed payment to it is
	// recorded (an unconfirmed one only, or a used flag from elsewhere).
	FirstHeight int32
}

// TruthElements returns the element of every used watched address and
// script, in watch order, each once (two scripts of one element, such as
// P2PKH and P2WPKH of one key, give one element, with the earlier first
// height), with the height of the first confirmed payment to it: the
// ground truth `privacy analyze --truth` scores an attack with, and the
// wallet size N the privacy meter's precision uses. An element first paid
// at a height is in every filter loaded from that height on; the
// intersection attack requires exactly those.
func (w *Wallet) TruthElements() ([]TruthElement, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	first := map[string]int32{}
	err = w.view(func(b readBuckets) error {
		return w.txStore.RangeTransactions(b.tm, 0, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
			for i := range details {
				d := &details[i]
				if d.Block.Height < 0 {
					continue
				}
				for _, out := range d.MsgTx.TxOut {
					e := w.watch.lookup(out.PkScript)
					if e == nil {
						continue
					}
					key := string(e.ws.element)
					if h, ok := first[key]; !ok || d.Block.Height < h {
						first[key] = d.Block.Height
					}
				}
			}
			return false, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("truth elements: %w", err)
	}
	var out []TruthElement
	index := map[string]int{}
	for _, e := range w.watch.entries() {
		if !e.used {
			continue
		}
		key := string(e.ws.element)
		if _, dup := index[key]; dup {
			continue
		}
		h, ok := first[key]
		if !ok {
			h = noHeight
		}
		index[key] = len(out)
		out = append(out, TruthElement{Element: e.ws.element, Address: e.ws.addressOn(w.net.params), FirstHeight: h})
	}
	return out, nil
}
