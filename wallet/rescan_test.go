package wallet

import (
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// importedAddress is a regtest P2WPKH address nobody watches at first,
// with its script.
func importedAddress(t *testing.T) (string, []byte) {
	t.Helper()
	prog := foreignScript(0x5ca1)[2:]
	a, err := btcutil.NewAddressWitnessPubKeyHash(prog, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	script, err := txscript.PayToAddrScript(a)
	require.NoError(t, err)
	return a.EncodeAddress(), script
}

// TestAddAfterSyncKeepsHistory: importing an address into a synced wallet
// leaves the history it found confirmed at its heights and the balance as
// it was, says a rescan is pending, and the rescan (the same blocks applied
// again from the birthday) ends where a wallet that watched the address
// from the start ends, never showing a confirmed transaction as
// unconfirmed on the way. Before the fix, the import ran wtxmgr's reorg
// rollback: every transaction read as unconfirmed (height -1, 0
// confirmations) and the confirmed balance as 0 until the next sync.
func TestAddAfterSyncKeepsHistory(t *testing.T) {
	addr, script := importedAddress(t)
	f := &txFactory{}
	chain := newTestChain(f, 10)
	w, keys := newRegtestWallet(t)
	dir := w.Dir()
	pay0 := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 500_000})
	payX := f.tx(nil, output{script, 300_000}, output{foreignScript(1), 1_000})
	b10 := chain.add(pay0, payX)
	spendX := f.tx([]wire.OutPoint{op(payX, 0)}, output{foreignScript(2), 290_000})
	spend0 := f.tx([]wire.OutPoint{op(pay0, 0)}, output{keys.p2wpkh(intBranch, 0), 400_000}, output{foreignScript(3), 99_000})
	b11 := chain.add(spendX, spend0)
	pay1 := f.tx(nil, output{keys.p2wpkh(extBranch, 1), 100_000})
	b12 := chain.add(pay1)
	blocks := []*fullBlock{b10, b11, b12}

	// Before the import, the payments to the address are false positives.
	for _, b := range blocks {
		mustApply(t, w, b.filtered())
	}
	beforeTxs, err := w.Txs()
	require.NoError(t, err)
	require.Len(t, beforeTxs, 3)
	beforeBal := mustBalance(t, w)
	require.EqualValues(t, 500_000, beforeBal.Confirmed)

	info, err := w.AddAddress(addr)
	require.NoError(t, err)
	require.True(t, info.Rescan)

	check := func(w *Wallet) {
		t.Helper()
		require.True(t, w.RescanPending())
		sp, err := w.SyncedTo()
		require.NoError(t, err)
		require.Equal(t, int32(-1), sp.Height, "the node syncs from the birthday")
		require.Equal(t, b12.height, w.HistoryPoint().Height)
		txs, err := w.Txs()
		require.NoError(t, err)
		require.Equal(t, beforeTxs, txs, "the history keeps its heights and confirmations")
		for _, tx := range txs {
			require.GreaterOrEqual(t, tx.Height, b10.height, "%v shown unconfirmed", tx.Txid)
			require.Positive(t, tx.Confirmations)
		}
		require.Equal(t, beforeBal, mustBalance(t, w))
	}
	check(w)
	// A second import while the rescan is pending: still one rescan.
	info2, err := w.AddAddress("mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV")
	require.NoError(t, err)
	require.True(t, info2.Rescan)
	check(w)
	// The mark survives a restart.
	require.NoError(t, w.Close())
	w, err = Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	check(w)

	// The rescan: the node delivers the blocks again from the birthday,
	// now with the new address's transactions matched.
	track := newDeltaTracker(t, w)
	for i, b := range blocks {
		res := mustApply(t, w, b.filtered())
		track.apply(res.Delta)
		track.check()
		require.False(t, w.RescanPending())
		txs, err := w.Txs()
		require.NoError(t, err)
		for _, tx := range txs {
			require.GreaterOrEqual(t, tx.Height, b10.height, "%v shown unconfirmed during the rescan", tx.Txid)
			require.LessOrEqual(t, tx.Height, b.height, "%v: history past the rescan's block %d", tx.Txid, b.height)
		}
		if i == 0 {
			require.Len(t, txs, 2, "block 10: the payment to the wallet and to the new address")
		}
	}
	require.False(t, w.RescanPending())

	// The same as a wallet that watched the address from the start.
	ref, err := Create(t.TempDir(), CreateConfig{
		Network: "regtest", Xpubs: []string{accountXpub(t, purposeBIP84, 1, versionVpub)},
		Addresses: []string{addr, "mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV"},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ref.Close() })
	for _, b := range blocks {
		mustApply(t, ref, b.filtered())
	}
	gotTxs, err := w.Txs()
	require.NoError(t, err)
	wantTxs, err := ref.Txs()
	require.NoError(t, err)
	require.Len(t, gotTxs, 5)
	require.Equal(t, wantTxs, gotTxs)
	require.Equal(t, mustBalance(t, ref), mustBalance(t, w))
	gotStats, err := w.Stats()
	require.NoError(t, err)
	wantStats, err := ref.Stats()
	require.NoError(t, err)
	require.Equal(t, wantStats.Relevant, gotStats.Relevant)
	require.Equal(t, wantStats.FalsePositives, gotStats.FalsePositives)
	gotUTXOs, err := w.UTXOs()
	require.NoError(t, err)
	wantUTXOs, err := ref.UTXOs()
	require.NoError(t, err)
	require.Equal(t, wantUTXOs, gotUTXOs)
}

// TestRescanKeepsUnrelatedPending: an unconfirmed payment that spends
// nothing of the rescanned blocks stays pending through the rescan's
// start, while the confirmed history is forgotten and applied again.
func TestRescanKeepsUnrelatedPending(t *testing.T) {
	addr, _ := importedAddress(t)
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 10)
	pay0 := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 500_000})
	b10 := chain.add(pay0)
	mustApply(t, w, b10.filtered())
	incoming := f.tx(nil, output{keys.p2wpkh(extBranch, 1), 70_000})
	res, err := w.ApplyMempoolTx(incoming)
	require.NoError(t, err)
	require.True(t, res.Relevant)
	_, err = w.AddAddress(addr)
	require.NoError(t, err)
	txs, err := w.Txs()
	require.NoError(t, err)
	require.Len(t, txs, 2)
	mustApply(t, w, b10.filtered())
	txs, err = w.Txs()
	require.NoError(t, err)
	require.Len(t, txs, 2)
	heights := map[int32]int{}
	for _, tx := range txs {
		heights[tx.Height]++
	}
	require.Equal(t, map[int32]int{b10.height: 1, -1: 1}, heights, "the pending payment stays pending")
	requireOutpointsMatchStore(t, w)
}
