package wallet_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// syncLightNode syncs w from the btcd at addr through a BIP37 light node
// until it reaches tip, then stops the node and flushes the wallet.
func syncLightNode(t *testing.T, w *wallet.Wallet, addr string, tip int32) {
	t.Helper()
	net, err := netparams.Lookup(w.Network())
	require.NoError(t, err)
	node, err := spv.New(spv.Config{
		Network: net, DataDir: t.TempDir(), Connect: []string{addr}, Watcher: w,
		Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second},
	})
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eSyncTimeout)
	defer cancel()
	for {
		st := node.Status()
		require.NoError(t, st.Err)
		if st.WatcherHeight >= tip && st.Synced {
			break
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("light node did not sync to %d: %+v", tip, st))
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.NoError(t, node.Stop())
	require.NoError(t, w.Flush())
}

// TestMultisigWalletSyncsOverP2P builds a regtest chain on a real btcd
// (127.0.0.1) whose wallet is the keyring's 2-of-3
// wsh(sortedmulti(...)): payments to 12 of its receive addresses (2 each,
// beside noise), spends of 40 % of them signed by two cosigners with
// change to its change addresses (some with two inputs); then syncs a
// watch-only wallet created from the descriptor alone through the BIP37
// light node and checks it against the chain's truth (BuildChain's
// bookkeeping, and a scan of btcd block by block): every transaction
// with its net amount, the unspent outputs, the balance and the used
// addresses.
func TestMultisigWalletSyncsOverP2P(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(context.Background(), testnet.ChainSpec{
		Blocks: 30, TxsPerBlock: 3, Keyring: key, Purpose: testnet.PurposeMultisig,
		WatchAddrs: 12, PaymentsPerAddr: 2, SpendFraction: 0.4, Seed: 30,
	})
	require.NoError(t, err)
	require.NotEmpty(t, truth.Descriptor)
	scanned, err := testnet.ScanTruth(context.Background(), h.Node(), key, testnet.PurposeMultisig, truth.StartHeight+1)
	require.NoError(t, err)
	require.ElementsMatch(t, truth.Txs, scanned.Txs, "BuildChain's truth and btcd's blocks agree")
	require.Equal(t, truth.UTXOs, scanned.UTXOs)
	spends := 0
	for _, tx := range truth.Txs {
		if tx.Kind == testnet.TxSpend {
			spends++
		}
	}
	require.GreaterOrEqual(t, spends, 5, "the chain holds multisig spends")

	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{
		Network: h.Params().Name, Descriptors: []string{truth.Descriptor}, Birthday: truth.StartHeight + 1,
	})
	require.NoError(t, err)
	defer w.Close()
	syncLightNode(t, w, h.Node().P2PAddr(), truth.TipHeight)

	txs, err := w.Txs()
	require.NoError(t, err)
	type entry struct {
		height int32
		delta  int64
	}
	got := map[chainhash.Hash]entry{}
	for _, s := range txs {
		got[s.Txid] = entry{s.Height, s.Delta}
	}
	want := map[chainhash.Hash]entry{}
	for _, tx := range truth.Txs {
		want[tx.Txid] = entry{tx.Height, tx.Delta}
	}
	require.Equal(t, want, got)

	utxos, err := w.UTXOs()
	require.NoError(t, err)
	gotUTXOs := map[wire.OutPoint]int64{}
	for _, u := range utxos {
		gotUTXOs[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = int64(u.Amount)
	}
	wantUTXOs := map[wire.OutPoint]int64{}
	for _, u := range truth.UTXOs {
		wantUTXOs[u.OutPoint()] = u.Value
	}
	require.Equal(t, wantUTXOs, gotUTXOs)
	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, btcutil.Amount(truth.Balance), bal.Confirmed)

	addrs, err := w.Addresses()
	require.NoError(t, err)
	used := map[string]bool{}
	for _, a := range addrs {
		if a.Used {
			require.Equal(t, wallet.KindP2WSH, a.Kind)
			used[a.Address] = true
		}
	}
	require.Len(t, used, len(truth.Addresses))
	for _, a := range truth.Addresses {
		require.True(t, used[a.Address], "%s (branch %d index %d) used", a.Address, a.Branch, a.Index)
	}
	stats, err := w.Stats()
	require.NoError(t, err)
	t.Logf("synced %d blocks: %d wallet transactions (%d spends), %d false positives, %d elements",
		stats.BlocksApplied, stats.Relevant, spends, stats.FalsePositives, stats.Elements)
}
