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
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// fabricate returns a transaction spending op to a random script with a
// made-up witness: no node would accept it, a light client cannot tell.
func fabricate(op wire.OutPoint, value int64) *wire.MsgTx {
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&op, nil, wire.TxWitness{make([]byte, 71), make([]byte, 33)}))
	tx.AddTxOut(wire.NewTxOut(value, testnet.RandomScript(nil, testnet.KindP2WPKH)))
	return tx
}

// waitWallet polls cond until it holds or the sync timeout passes.
func waitWallet(t *testing.T, node *spv.Node, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eSyncTimeout)
	defer cancel()
	for !cond() {
		require.NoError(t, node.Status().Err)
		select {
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("timed out waiting for %s: %+v", what, node.Status()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// walletTxs returns the wallet's transactions by txid.
func walletTxs(t *testing.T, w *wallet.Wallet) map[chainhash.Hash]wallet.TxSummary {
	t.Helper()
	txs, err := w.Txs()
	require.NoError(t, err)
	out := make(map[chainhash.Hash]wallet.TxSummary, len(txs))
	for _, s := range txs {
		out[s.Txid] = s
	}
	return out
}

// TestFakeSpendFromHostilePeer syncs a wallet through the light node from
// a hostile peer (an honest btcd upstream, on 127.0.0.1) whose mempool
// also holds two fabricated spends of the wallet's confirmed coins, in no
// real mempool: one of a coin nothing else spends, one of a coin a genuine
// pending transaction (in btcd's mempool) spends. The peer announces them
// in its BIP35 mempool answer and serves them. The confirmed balance does
// not move, the pending view flags both spends and the conflict, the
// genuine transaction survives and, once mined, evicts its fake rival; the
// other fake expires when the wallet is reopened after MempoolExpiry.
func TestFakeSpendFromHostilePeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{})
	params := h.Params()
	key, err := testnet.NewKeyring(testnet.DemoSeed, params)
	require.NoError(t, err)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)

	coin0 := payTo(t, h, key, testnet.PurposeBIP84, testnet.BranchExternal, 0, 100_000)
	coin1 := payTo(t, h, key, testnet.PurposeBIP84, testnet.BranchExternal, 1, 50_000)
	_, err = h.Noise(3)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)

	// A genuine spend of coin0, with change, waiting in btcd's mempool.
	coin0Script, err := key.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	require.NoError(t, err)
	changeScript, err := key.PkScript(testnet.PurposeBIP84, testnet.BranchInternal, 0)
	require.NoError(t, err)
	outs := []*wire.TxOut{
		wire.NewTxOut(60_000, testnet.RandomScript(nil, testnet.KindP2WPKH)),
		wire.NewTxOut(0, changeScript),
	}
	outs[1].Value = 100_000 - 60_000 - int64(testnet.SpendFee([][]byte{coin0Script}, outs))
	change := outs[1].Value
	genuine, err := h.Spend(key, []wire.OutPoint{coin0}, outs)
	require.NoError(t, err)
	fakeSpend := fabricate(coin1, 49_000)
	fakeRival := fabricate(coin0, 99_000)
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)

	xpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	dir := t.TempDir()
	w, err := wallet.Create(dir, wallet.CreateConfig{Network: params.Name, Xpubs: []string{xpub}, Birthday: start + 1},
		wallet.WithReserve(wallet.DefaultReserve)) // the package tests turn it off
	require.NoError(t, err)
	defer func() { _ = w.Close() }()

	fakes := hostile.NewFakeMempool(h.Node().RPC(), fakeSpend, fakeRival)
	hp, err := hostile.Start(context.Background(), hostile.Config{Upstream: fakes, Params: params, Scenario: hostile.Honest})
	require.NoError(t, err)
	defer hp.Close()
	net, err := netparams.Lookup(params.Name)
	require.NoError(t, err)
	node, err := spv.New(spv.Config{
		Network: net, DataDir: t.TempDir(), Connect: []string{hp.Addr(), h.Node().P2PAddr()}, Watcher: w,
		// The hostile peer did not filter the blocks that paid the
		// wallet: it matches spends of those coins from the first
		// reload point on (seconds here instead of half an hour).
		Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second, ReloadInterval: 200 * time.Millisecond, QuietTime: -1},
	})
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	defer func() { _ = node.Stop() }()

	waitWallet(t, node, "the fake spends and the genuine one", func() bool {
		txs := walletTxs(t, w)
		_, a := txs[genuine.TxHash()]
		_, b := txs[fakeSpend.TxHash()]
		_, c := txs[fakeRival.TxHash()]
		return node.Status().WatcherHeight >= tip && a && b && c
	})
	require.Positive(t, fakes.Served(fakeSpend.TxHash()), "the hostile peer served the fake")
	mempool, err := h.Node().RPC().GetRawMempool()
	require.NoError(t, err)
	require.Len(t, mempool, 1, "btcd holds only the genuine spend")
	require.Equal(t, genuine.TxHash(), *mempool[0])

	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, wallet.Balance{Confirmed: 150_000, PendingSpent: 150_000, Conflicts: 2}, bal,
		"confirmed unchanged; both coins flagged as spent pending; the genuine change is disputed")
	utxos, err := w.UTXOs()
	require.NoError(t, err)
	flagged := map[wire.OutPoint][]chainhash.Hash{}
	for _, u := range utxos {
		if u.Height >= 0 {
			require.True(t, u.PendingSpend)
			flagged[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = u.SpentBy
		}
	}
	require.Len(t, flagged, 2)
	require.Equal(t, []chainhash.Hash{fakeSpend.TxHash()}, flagged[coin1])
	require.ElementsMatch(t, []chainhash.Hash{genuine.TxHash(), fakeRival.TxHash()}, flagged[coin0])
	txs := walletTxs(t, w)
	require.Equal(t, []chainhash.Hash{fakeRival.TxHash()}, txs[genuine.TxHash()].Conflicts)
	require.True(t, txs[genuine.TxHash()].Conflicted)
	require.False(t, txs[fakeSpend.TxHash()].Conflicted)
	require.Equal(t, int64(-50_000), txs[fakeSpend.TxHash()].Delta)

	// btcd mines the genuine spend: its fake rival is evicted, the other
	// fake stays pending (its coin is still unspent on chain).
	hashes, err := h.Mine(1)
	require.NoError(t, err)
	waitWallet(t, node, "the block confirming the genuine spend", func() bool {
		sp, err := w.SyncedTo()
		require.NoError(t, err)
		return sp.Hash == *hashes[0]
	})
	txs = walletTxs(t, w)
	require.Equal(t, tip+1, txs[genuine.TxHash()].Height)
	require.NotContains(t, txs, fakeRival.TxHash())
	require.Equal(t, int32(-1), txs[fakeSpend.TxHash()].Height)
	bal, err = w.Balance()
	require.NoError(t, err)
	require.Equal(t, wallet.Balance{Confirmed: btcutil.Amount(50_000 + change), PendingSpent: 50_000}, bal)
	require.NoError(t, node.Stop())
	require.NoError(t, w.Close())

	// Reopened after the mempool expiry, the wallet has forgotten the
	// fake that never confirmed.
	later := time.Now().Add(wallet.MempoolExpiry + time.Hour)
	w, err = wallet.Open(dir, wallet.WithClock(func() time.Time { return later }), wallet.WithReserve(wallet.DefaultReserve))
	require.NoError(t, err)
	txs = walletTxs(t, w)
	require.NotContains(t, txs, fakeSpend.TxHash())
	bal, err = w.Balance()
	require.NoError(t, err)
	require.Equal(t, wallet.Balance{Confirmed: btcutil.Amount(50_000 + change)}, bal)
	els, err := w.FilterElements()
	require.NoError(t, err)
	require.ElementsMatch(t, []wire.OutPoint{coin1, {Hash: genuine.TxHash(), Index: 1}}, els.OutPoints)
}
