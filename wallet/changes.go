package wallet

import (
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/watch"
)

// Change is what changed in the wallet since a reader's previous Changes
// call: the figures a live view shows, which replace what it had, and the
// watched addresses and unspent outputs that came, changed or went, which
// it applies to what it was told before. A reader's first Change holds
// every address and every unspent output.
type Change struct {
	// Balance, Counts and Stats are the wallet's figures now; Synced the
	// block they reflect (HistoryPoint).
	Balance Balance
	Counts  AddressCounts
	Stats   Stats
	Synced  watch.SyncPoint
	// Addresses are the watched addresses and scripts the reader was not
	// told of yet, or was told of as unused and that are used now, in
	// Addresses' order.
	Addresses []AddressInfo
	// UTXOs are the unspent outputs the reader was not told of, or that
	// changed since (an unconfirmed one confirmed; spent or conflicted by
	// an unconfirmed transaction, or no longer), in UTXOs' order;
	// Confirmations are counted from Synced. Spent are the outpoints it
	// was told of that are unspent no more (spent in a block, or gone
	// with a reorged block or an evicted unconfirmed transaction).
	UTXOs []UTXO
	Spent []wire.OutPoint
}

// ChangeResult is one Changes call as a reader hands it on over a channel
// (a session to its dashboard): the Change, or the error the call
// returned, in which case the receiver keeps what it was told before.
type ChangeResult struct {
	Change Change
	Err    error
}

// ChangeCursor is one reader's place in a wallet's changes: what Changes
// told it (each address's used flag, each unspent output). The zero value
// has been told nothing. A cursor follows one wallet; it is not safe for
// concurrent use.
type ChangeCursor struct {
	used  map[string]bool // watched script -> used, as told
	coins map[wire.OutPoint]coinMark
}

// coinMark is what a reader was told of an unspent output, less what
// follows from the tip (confirmations).
type coinMark struct {
	height     int32
	amount     btcutil.Amount
	conflicted bool
	spentBy    string // the spending txids, concatenated
}

// markOf returns c's mark.
func markOf(c *coin) coinMark {
	m := coinMark{height: c.height, amount: c.amount, conflicted: c.conflicted}
	if len(c.spentBy) > 0 {
		b := make([]byte, 0, len(c.spentBy)*chainhash.HashSize)
		for _, h := range c.spentBy {
			b = append(b, h[:]...)
		}
		m.spentBy = string(b)
	}
	return m
}

// Changes returns what changed since c's previous call, in one read of the
// wallet (the unconfirmed set and the unspent outputs, as Balance reads
// them; the addresses from the watch set in memory), and moves c past it.
// On error c is left where it was.
func (w *Wallet) Changes(c *ChangeCursor) (Change, error) {
	unlock, err := w.enter()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	var ch Change
	var coins map[wire.OutPoint]coinMark
	var used map[string]bool
	err = w.view(func(b readBuckets) error {
		ps, err := w.readPending(b.tm)
		if err != nil {
			return err
		}
		all, err := w.readCoins(b.tm, ps)
		if err != nil {
			return fmt.Errorf("unspent outputs: %w", err)
		}
		ch.Balance = w.balanceOf(ps, all)
		coins = make(map[wire.OutPoint]coinMark, len(all))
		var changed []coin
		for i := range all {
			m := markOf(&all[i])
			coins[all[i].op] = m
			if old, ok := c.coins[all[i].op]; !ok || old != m {
				changed = append(changed, all[i])
			}
		}
		ch.UTXOs = w.utxosOf(changed)
		for op := range c.coins {
			if _, ok := coins[op]; !ok {
				ch.Spent = append(ch.Spent, op)
			}
		}
		slices.SortFunc(ch.Spent, compareOutPoints)
		used = make(map[string]bool, len(w.watch.scripts))
		var news []*watchEntry
		for key, e := range w.watch.scripts {
			used[key] = e.used
			if u, ok := c.used[key]; !ok || u != e.used {
				news = append(news, e)
			}
		}
		ch.Addresses, err = w.addressInfos(b, sortEntries(news))
		return err
	})
	if err != nil {
		return Change{}, fmt.Errorf("changes: %w", err)
	}
	ch.Counts, ch.Stats, ch.Synced = w.watch.counts(), w.statsLocked(), w.synced
	c.coins, c.used = coins, used
	return ch, nil
}

// compareOutPoints orders outpoints by txid bytes, then index.
func compareOutPoints(a, b wire.OutPoint) int {
	if c := slices.Compare(a.Hash[:], b.Hash[:]); c != 0 {
		return c
	}
	switch {
	case a.Index < b.Index:
		return -1
	case a.Index > b.Index:
		return 1
	}
	return 0
}
