package wallet

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/stretchr/testify/require"
)

func TestReserveFor(t *testing.T) {
	w, err := Create(t.TempDir(), CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(t, purposeBIP84, 1, versionVpub)}},
		WithReserve(DefaultReserve))
	require.NoError(t, err)
	defer func() { _ = w.Close() }()
	key := branchKey{scope: waddrmgr.KeyScope{Purpose: purposeBIP84, Coin: 1}, branch: waddrmgr.ExternalBranch}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.watch
	tests := []struct {
		used          uint32
		first, height int32
		want          uint32
	}{
		{0, 0, 100, DefaultReserve},        // nothing used: the default
		{3, 100, 500, DefaultReserve},      // a slow wallet: the default
		{100, 101, 200, ReserveHorizon},    // one address a block
		{50, 101, 200, ReserveHorizon / 2}, // one every other block
		{200, 101, 300, ReserveHorizon},    // one a block, over 200 blocks
		{10_000, 1, 2000, MaxReserve},      // five a block: bounded
		{20, 150, 150, 300},                // twenty in one block: read over 100 blocks
		{20, 300, 150, DefaultReserve},     // a height below the first use
	}
	for _, tc := range tests {
		s.usedHigh[key] = tc.used
		s.firstUse[key] = tc.first
		require.Equal(t, tc.want, w.reserveFor(key, tc.height), "used %d since %d at %d", tc.used, tc.first, tc.height)
	}
}

// freshResult is what freshSync measured.
type freshResult struct {
	// needed counts the blocks whose delta added elements the filter
	// must hold at once (Data): each is a gap-limit race for the node,
	// whose filter cannot hold an element it never heard of.
	needed int
	// late counts the blocks that made an element due (Due) less than
	// loadLag blocks after the delta that reported it: a node that
	// loads new keys that late (its reload spacing and window in
	// flight) would have had to re-fetch.
	late int
	// topUps counts the blocks whose delta added reserve elements: each
	// is a reload at the node's next scheduled point.
	topUps int
	// derivedExt and derivedInt are the addresses derived on each branch
	// at the end.
	derivedExt, derivedInt uint32
	// elements is the number of data elements at the end.
	elements int
	// chain holds the blocks applied.
	chain *testChain
}

// freshSync applies blocks to w paying ext fresh receive addresses and in
// fresh change addresses, in index order, perBlock receive payments and
// perBlock*in/ext (at least one) change payments per block, and counts
// the element changes. Every payment must be found.
func freshSync(tb testing.TB, w *Wallet, keys *testKeys, ext, in, perBlock uint32) freshResult {
	tb.Helper()
	// The node takes up to its longest reload spacing (150 blocks while
	// catching up) and its window in flight (500) to load new keys.
	const loadLag = 650
	reported := map[string]int32{}
	els, err := w.FilterElements()
	require.NoError(tb, err)
	for _, e := range els.Data {
		reported[string(e)] = -loadLag
	}
	f := &txFactory{}
	res := freshResult{chain: newTestChain(f, 100)}
	var nextExt, nextInt uint32
	var paid int64
	pay := func(txs []*wire.MsgTx, branch, index uint32) []*wire.MsgTx {
		v := int64(1_000 + index)
		paid += v
		return append(txs, f.tx(nil, output{keys.p2wpkh(branch, index), v}))
	}
	changePerBlock := max(1, perBlock*in/max(ext, 1))
	for nextExt < ext || nextInt < in {
		var txs []*wire.MsgTx
		for ; nextExt < ext && len(txs) < int(perBlock); nextExt++ {
			txs = pay(txs, extBranch, nextExt)
		}
		for n := uint32(0); nextInt < in && n < changePerBlock; n, nextInt = n+1, nextInt+1 {
			txs = pay(txs, intBranch, nextInt)
		}
		b := res.chain.add(txs...)
		r, err := w.ApplyBlock(b.filtered())
		require.NoError(tb, err)
		require.Len(tb, r.Relevant, len(txs), "block %d: every payment is the wallet's", b.height)
		if len(r.Delta.Data) > 0 {
			res.needed++
		}
		if len(r.Delta.Reserve) > 0 {
			res.topUps++
		}
		for _, e := range r.Delta.Reserve {
			reported[string(e)] = b.height
		}
		for _, e := range r.Delta.Due {
			at, ok := reported[string(e)]
			require.True(tb, ok, "block %d: due element never reported", b.height)
			if b.height-at < loadLag {
				res.late++
				break
			}
		}
	}
	require.NoError(tb, w.Flush())
	bal, err := w.Balance()
	require.NoError(tb, err)
	require.Equal(tb, btcutil.Amount(paid), bal.Confirmed)
	w.mu.Lock()
	for k, n := range w.watch.derived {
		switch k.branch {
		case waddrmgr.ExternalBranch:
			res.derivedExt += n
		case waddrmgr.InternalBranch:
			res.derivedInt += n
		}
	}
	res.elements = len(w.watch.data)
	w.mu.Unlock()
	return res
}

// TestReservePaysFreshAddressesWithoutRace pays 3,000 fresh addresses in
// index order (2,000 receive, 1,000 change, one receive payment a block:
// the bench's addrs2000 chain) from a wallet that expects to catch up:
// no payment needs an element the wallet had not reported as reserve
// (no gap-limit race for the node), and every element a payment brings
// within the gap was reported long enough before for the node's
// scheduled reloads to have loaded it; the reserve grows in few top-ups
// (each a reload at the node's next point), the gap limit holds (every
// payment found), and the derived addresses and used flags survive a
// reopen and a rollback.
func TestReservePaysFreshAddressesWithoutRace(t *testing.T) {
	const ext, in = 2000, 1000
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(t, purposeBIP84, 1, versionVpub)}},
		WithReserve(DefaultReserve))
	require.NoError(t, err)
	defer func() { _ = w.Close() }()
	keys := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)

	res := freshSync(t, w, keys, ext, in, 1)
	t.Logf("%d fresh addresses: %d blocks needed new elements at once, %d were late for the node, %d reserve top-ups; derived %d receive, %d change; %d data elements",
		ext+in, res.needed, res.late, res.topUps, res.derivedExt, res.derivedInt, res.elements)
	require.Zero(t, res.needed, "a payment needed an element no filter held")
	require.Zero(t, res.late, "a payment needed an element reported too late")
	require.LessOrEqual(t, res.topUps, 30)
	// The gap holds and the reserve stays within its bound.
	require.GreaterOrEqual(t, res.derivedExt, uint32(ext+DefaultGapExternal+DefaultReserve))
	require.GreaterOrEqual(t, res.derivedInt, uint32(in+DefaultGapInternal+DefaultReserve))
	require.LessOrEqual(t, res.derivedExt, uint32(ext+DefaultGapExternal+MaxReserve))
	require.LessOrEqual(t, res.derivedInt, uint32(in+DefaultGapInternal+MaxReserve))

	want := AddressCounts{Derived: int(res.derivedExt + res.derivedInt), DerivedUsed: ext + in}
	requireCounts(t, w, want)
	requireUsedFlagsMatchStore(t, w)

	// Reopen: the derived addresses and used flags are stored.
	require.NoError(t, w.Close())
	w, err = Open(dir, WithReserve(DefaultReserve))
	require.NoError(t, err)
	requireCounts(t, w, want)
	requireUsedFlagsMatchStore(t, w)

	// A rollback keeps the derived addresses (and the used flags):
	// applying the removed blocks again changes no data element and
	// finds every payment again.
	tracker := newDeltaTracker(t, w)
	sp, err := w.SyncedTo()
	require.NoError(t, err)
	tracker.apply(mustRollback(t, w, sp.Height-100))
	requireCounts(t, w, want)
	for _, b := range res.chain.blocks[len(res.chain.blocks)-100:] {
		r := mustApply(t, w, b.filtered())
		require.Empty(t, r.Delta.Data, "block %d applied again", b.height)
		require.Empty(t, r.Delta.Reserve, "block %d applied again", b.height)
		require.Len(t, r.Relevant, len(b.txs)-1)
		tracker.apply(r.Delta)
	}
	tracker.check()
	requireCounts(t, w, want)
}

// requireCounts requires AddressCounts to be want and to agree with
// Addresses.
func requireCounts(t *testing.T, w *Wallet, want AddressCounts) {
	t.Helper()
	got, err := w.AddressCounts()
	require.NoError(t, err)
	require.Equal(t, want, got)
	addrs, err := w.Addresses()
	require.NoError(t, err)
	var fromList AddressCounts
	for _, a := range addrs {
		switch {
		case a.Imported && a.Used:
			fromList.Imported++
			fromList.ImportedUsed++
		case a.Imported:
			fromList.Imported++
		case a.Used:
			fromList.Derived++
			fromList.DerivedUsed++
		default:
			fromList.Derived++
		}
	}
	require.Equal(t, got, fromList, "AddressCounts agrees with Addresses")
}

// requireUsedFlagsMatchStore requires the watch set's used flags to be
// hd-scripts' and the imported records' (read from the database), and its
// tally to count its entries.
func requireUsedFlagsMatchStore(t *testing.T, w *Wallet) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	stored := map[string]bool{}
	require.NoError(t, w.view(func(b readBuckets) error {
		hd := b.own.NestedReadBucket(bktHDScripts)
		err := hd.ForEach(func(bkey, _ []byte) error {
			return hd.NestedReadBucket(bkey).ForEach(func(k, v []byte) error {
				stored[string(v[1:])] = v[0]&hdFlagUsed != 0
				return nil
			})
		})
		if err != nil {
			return err
		}
		return b.own.NestedReadBucket(bktImported).ForEach(func(k, v []byte) error {
			r, err := decodeImportedRecord(k, v)
			if err != nil {
				return err
			}
			stored[string(k)] = r.used
			return nil
		})
	}))
	require.Len(t, w.watch.scripts, len(stored))
	var scanned AddressCounts
	for k, e := range w.watch.scripts {
		require.Equal(t, stored[k], e.used, "used flag of %s", e.ws.addressOn(w.net.params))
		scanned.add(e.ref.imported)
		switch {
		case e.used && e.ref.imported:
			scanned.ImportedUsed++
		case e.used:
			scanned.DerivedUsed++
		}
	}
	require.Equal(t, scanned, w.watch.counts(), "the watch set's tally against its entries")
}

// BenchmarkFreshAddressSync syncs a wallet paid at 3,000 and 15,000 fresh
// addresses (two receive payments per change payment, as the bench's
// addrs2000 and addrs10000 chains, one and five receive payments a
// block; one op is the whole sync) and reports the blocks that needed an
// element at once (gap-limit races for the node), the reserve top-ups
// (reloads at the node's next point), the blocks whose due elements came
// too late for the node's reload lag, and the data elements and unused
// derived addresses at the end.
func BenchmarkFreshAddressSync(b *testing.B) {
	for _, used := range []uint32{3_000, 15_000} {
		ext, in := used*2/3, used/3
		perBlock := ext / 2000
		b.Run(fmt.Sprintf("used=%d", used), func(b *testing.B) {
			var res freshResult
			for range b.N {
				b.StopTimer()
				w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(b, purposeBIP84, 1, versionVpub)}},
					WithReserve(DefaultReserve))
				require.NoError(b, err)
				keys := newTestKeys(b, purposeBIP84, 1, &chaincfg.RegressionNetParams)
				b.StartTimer()
				res = freshSync(b, w, keys, ext, in, perBlock)
				b.StopTimer()
				require.NoError(b, w.Close())
			}
			b.ReportMetric(float64(res.needed), "races")
			b.ReportMetric(float64(res.topUps), "top-ups")
			b.ReportMetric(float64(res.late), "late")
			b.ReportMetric(float64(res.elements), "elements")
			b.ReportMetric(float64(res.derivedExt+res.derivedInt-used), "unused")
		})
	}
}

// BenchmarkAddressCounts measures AddressCounts (the summary's count) and
// Addresses (the full list) on a wallet of 100,000 imported addresses
// and an account of 40 derived ones.
func BenchmarkAddressCounts(b *testing.B) {
	w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(b, purposeBIP84, 1, versionVpub)},
		Addresses: benchAddresses(b, 100_000)})
	require.NoError(b, err)
	defer w.Close()
	b.Run("AddressCounts", func(b *testing.B) {
		for range b.N {
			if _, err := w.AddressCounts(); err != nil {
				require.NoError(b, err)
			}
		}
	})
	b.Run("Addresses", func(b *testing.B) {
		for range b.N {
			if _, err := w.Addresses(); err != nil {
				require.NoError(b, err)
			}
		}
	})
}
