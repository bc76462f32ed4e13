package wallet

import (
	"fmt"
	"math"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/stretchr/testify/require"
)

func TestNextStride(t *testing.T) {
	tests := []struct {
		derived, gap, want uint32
	}{
		{20, 20, 20},     // a new branch: one gap, as before
		{41, 20, 20},     // half of 41 is below the gap
		{44, 20, 22},     // half of the branch
		{1999, 20, 999},  // still half
		{2000, 20, 1000}, // the cap
		{50_000, 20, MaxStride},
		{100, 5000, 5000}, // a gap above the cap is the stride
		{0, 1, 1},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, nextStride(tc.derived, tc.gap), "derived %d gap %d", tc.derived, tc.gap)
	}
}

// fixedStrideChanges counts the extensions a branch paid at indexes
// 0..n-1 in order went through with the former rule (a stride of one gap:
// through index + 2*gap), for comparison.
func fixedStrideChanges(n, gap uint32) int {
	derived, changes := gap, 0
	for i := range n {
		if i+gap >= derived {
			derived = i + 2*gap + 1
			changes++
		}
	}
	return changes
}

// freshResult is what freshSync measured.
type freshResult struct {
	// changes counts the blocks whose delta added data elements: each
	// makes the node reload its filter (reason new-key) and fetch again
	// the blocks in flight.
	changes int
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
			res.changes++
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

// TestFreshAddressPaymentsChangeTheFilterRarely pays 3,000 fresh addresses
// (2,000 receive, 1,000 change, as the bench's addrs2000 chain) and
// requires O(log N) element changes where a stride of one gap made one
// per gap addresses; the gap limit holds (every payment found, no more
// unused addresses than the stride bound), and the derived addresses and
// used flags survive a reopen and a rollback.
func TestFreshAddressPaymentsChangeTheFilterRarely(t *testing.T) {
	const ext, in = 2000, 1000
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(t, purposeBIP84, 1, versionVpub)}})
	require.NoError(t, err)
	defer func() { _ = w.Close() }()
	keys := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)

	res := freshSync(t, w, keys, ext, in, 2)
	before := fixedStrideChanges(ext, DefaultGapExternal) + fixedStrideChanges(in, DefaultGapInternal)
	// Growth by half: about log_1.5(derived/gap) extensions per branch.
	log15 := func(x float64) int { return int(math.Ceil(math.Log(x) / math.Log(1.5))) }
	bound := log15(ext/DefaultGapExternal) + log15(in/DefaultGapInternal) + 4
	t.Logf("%d fresh addresses: %d element changes (a stride of one gap: %d); derived %d receive, %d change; %d data elements",
		ext+in, res.changes, before, res.derivedExt, res.derivedInt, res.elements)
	require.LessOrEqual(t, res.changes, bound)
	require.Greater(t, before, 5*res.changes)
	// The gap holds: gap addresses follow the last used one, and at most
	// one stride more.
	require.GreaterOrEqual(t, res.derivedExt, uint32(ext+DefaultGapExternal))
	require.GreaterOrEqual(t, res.derivedInt, uint32(in+DefaultGapInternal))
	require.LessOrEqual(t, res.derivedExt, ext+DefaultGapExternal+nextStride(res.derivedExt, DefaultGapExternal))
	require.LessOrEqual(t, res.derivedInt, in+DefaultGapInternal+nextStride(res.derivedInt, DefaultGapInternal))

	want := AddressCounts{Derived: int(res.derivedExt + res.derivedInt), DerivedUsed: ext + in}
	requireCounts(t, w, want)
	requireUsedFlagsMatchStore(t, w)

	// Reopen: the derived addresses and used flags are stored.
	require.NoError(t, w.Close())
	w, err = Open(dir)
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
// waddrmgr's and the imported records' (read from the database).
func requireUsedFlagsMatchStore(t *testing.T, w *Wallet) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	stored := map[string]bool{}
	require.NoError(t, w.view(func(b readBuckets) error {
		for _, sm := range w.addrMgr.ActiveScopedKeyManagers() {
			err := sm.ForEachAccount(b.am, func(acct uint32) error {
				if acct == waddrmgr.ImportedAddrAccount {
					return nil
				}
				return sm.ForEachAccountAddress(b.am, acct, func(ma waddrmgr.ManagedAddress) error {
					s, err := scriptForManaged(ma)
					if err != nil {
						return err
					}
					stored[string(s.pkScript)] = ma.Used(b.am)
					return nil
				})
			})
			if err != nil {
				return err
			}
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
	for k, e := range w.watch.scripts {
		require.Equal(t, stored[k], e.used, "used flag of %s", e.ws.address)
	}
}

// BenchmarkFreshAddressSync syncs a wallet paid at 3,000 and 15,000 fresh
// addresses (two receive payments per change payment, as the bench's
// addrs2000 and addrs10000 chains; one op is the whole sync) and reports
// the element changes (filter reloads for the node), the former rule's
// count for the same payments, and the data elements and unused derived
// addresses at the end.
func BenchmarkFreshAddressSync(b *testing.B) {
	for _, used := range []uint32{3_000, 15_000} {
		ext, in := used*2/3, used/3
		b.Run(fmt.Sprintf("used=%d", used), func(b *testing.B) {
			var res freshResult
			for range b.N {
				b.StopTimer()
				w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(b, purposeBIP84, 1, versionVpub)}})
				require.NoError(b, err)
				keys := newTestKeys(b, purposeBIP84, 1, &chaincfg.RegressionNetParams)
				b.StartTimer()
				res = freshSync(b, w, keys, ext, in, 2)
				b.StopTimer()
				require.NoError(b, w.Close())
			}
			b.ReportMetric(float64(res.changes), "changes")
			b.ReportMetric(float64(fixedStrideChanges(ext, DefaultGapExternal)+fixedStrideChanges(in, DefaultGapInternal)), "changes-stride-gap")
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
				b.Fatal(err)
			}
		}
	})
	b.Run("Addresses", func(b *testing.B) {
		for range b.N {
			if _, err := w.Addresses(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
