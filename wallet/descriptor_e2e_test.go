package wallet_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// e2eSyncTimeout bounds the light node's sync of the test chain.
const e2eSyncTimeout = 60 * time.Second

// descriptorKey returns the keyring's account-0 key of purpose as a
// descriptor key expression: key origin (master fingerprint and
// purpose'/coin'/0') and the key in the network's plain BIP32 version.
func descriptorKey(t *testing.T, key *testnet.Keyring, purpose uint32) string {
	t.Helper()
	params := key.Params()
	x, err := key.Xpub(purpose)
	require.NoError(t, err)
	ext, err := hdkeychain.NewKeyFromString(x)
	require.NoError(t, err)
	ext, err = ext.CloneWithVersion(params.HDPublicKeyID[:])
	require.NoError(t, err)
	master, err := hdkeychain.NewMaster(testnet.DemoSeed, params)
	require.NoError(t, err)
	pub, err := master.ECPubKey()
	require.NoError(t, err)
	fp := hex.EncodeToString(btcutil.Hash160(pub.SerializeCompressed())[:4])
	return fmt.Sprintf("[%s/%dh/%dh/0h]%s", fp, purpose, params.HDCoinType, ext.String())
}

// payTo pays amt to the keyring address (purpose, branch, index) and
// returns the outpoint created.
func payTo(t *testing.T, h *testnet.Harness, key *testnet.Keyring, purpose, branch, index uint32, amt int64) wire.OutPoint {
	t.Helper()
	script, err := key.PkScript(purpose, branch, index)
	require.NoError(t, err)
	tx, err := h.Pay([]*wire.TxOut{wire.NewTxOut(amt, script)})
	require.NoError(t, err)
	for i, o := range tx.TxOut {
		if string(o.PkScript) == string(script) {
			return wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}
		}
	}
	require.FailNow(t, fmt.Sprintf("payment %v has no output to %x", tx.TxHash(), script))
	return wire.OutPoint{}
}

// TestDescriptorWalletSyncsTaprootOverP2P builds a regtest chain on a real
// btcd (127.0.0.1) with payments to several P2TR addresses of a BIP86
// account and to a P2WPKH account, a key-path spend of one P2TR output
// with P2TR change, a spend of another P2TR output paying nothing back,
// and noise; then syncs a wallet created from the
// accounts' tr() and wpkh() descriptors through the BIP37 light node and
// checks it against the chain's truth: transactions and their deltas,
// unspent outputs, balance, and both spends seen (the second through its
// P2TR outpoint alone).
func TestDescriptorWalletSyncsTaprootOverP2P(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{})
	params := h.Params()
	key, err := testnet.NewKeyring(testnet.DemoSeed, params)
	require.NoError(t, err)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)

	// Block 1: P2TR receive 0, 1, 2 and 5 (within the gap), P2WPKH
	// receive 0 and 3, and noise.
	trOuts := map[uint32]wire.OutPoint{}
	for i, idx := range []uint32{0, 1, 2, 5} {
		trOuts[idx] = payTo(t, h, key, testnet.PurposeBIP86, testnet.BranchExternal, idx, int64(100_000*(i+1)))
	}
	payTo(t, h, key, testnet.PurposeBIP84, testnet.BranchExternal, 0, 70_000)
	payTo(t, h, key, testnet.PurposeBIP84, testnet.BranchExternal, 3, 80_000)
	_, err = h.Noise(6)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)

	// Block 2: a key-path spend of P2TR receive 1 (200,000 sat) to a
	// foreign script, change to P2TR change 0; more noise.
	spent := trOuts[1]
	spentScript, err := key.PkScript(testnet.PurposeBIP86, testnet.BranchExternal, 1)
	require.NoError(t, err)
	changeScript, err := key.PkScript(testnet.PurposeBIP86, testnet.BranchInternal, 0)
	require.NoError(t, err)
	outs := []*wire.TxOut{
		wire.NewTxOut(120_000, testnet.RandomScript(nil, testnet.KindP2WPKH)),
		wire.NewTxOut(0, changeScript),
	}
	fee := testnet.SpendFee([][]byte{spentScript}, outs)
	outs[1].Value = 200_000 - 120_000 - int64(fee)
	spend, err := h.Spend(key, []wire.OutPoint{spent}, outs)
	require.NoError(t, err)
	require.Len(t, spend.TxIn[0].Witness, 1, "a key-path spend: one Schnorr signature")
	_, err = h.Noise(4)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	// Block 3: P2TR receive 2 (300,000 sat) spent whole to a foreign
	// script: no output of it is the wallet's, so only the watched
	// outpoint can make a server send it (servers never read witnesses).
	spent2 := trOuts[2]
	spent2Script, err := key.PkScript(testnet.PurposeBIP86, testnet.BranchExternal, 2)
	require.NoError(t, err)
	outs2 := []*wire.TxOut{wire.NewTxOut(0, testnet.RandomScript(nil, testnet.KindP2TR))}
	outs2[0].Value = 300_000 - int64(testnet.SpendFee([][]byte{spent2Script}, outs2))
	sweep, err := h.Spend(key, []wire.OutPoint{spent2}, outs2)
	require.NoError(t, err)
	_, err = h.Noise(3)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)

	descs := []string{
		"tr(" + descriptorKey(t, key, testnet.PurposeBIP86) + "/<0;1>/*)",
		"wpkh(" + descriptorKey(t, key, testnet.PurposeBIP84) + "/<0;1>/*)",
	}
	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{Network: params.Name, Descriptors: descs, Birthday: start + 1},
		wallet.WithReserve(wallet.DefaultReserve)) // the package tests turn it off
	require.NoError(t, err)
	defer w.Close()

	net, err := netparams.Lookup(params.Name)
	require.NoError(t, err)
	node, err := spv.New(spv.Config{
		Network: net, DataDir: t.TempDir(), Connect: []string{h.Node().P2PAddr()}, Watcher: w,
		Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second},
	})
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	defer func() { require.NoError(t, node.Stop()) }()
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

	// The truth, scanned from btcd block by block, for each account.
	type want struct {
		height int32
		delta  int64
	}
	wantTxs := map[chainhash.Hash]want{}
	wantUTXOs := map[wire.OutPoint]int64{}
	var wantBalance int64
	var wantAddrs []string
	for _, purpose := range []uint32{testnet.PurposeBIP86, testnet.PurposeBIP84} {
		truth, err := testnet.ScanTruth(context.Background(), h.Node(), key, purpose, start+1)
		require.NoError(t, err)
		for _, tx := range truth.Txs {
			wt := wantTxs[tx.Txid]
			wt.height, wt.delta = tx.Height, wt.delta+tx.Delta
			wantTxs[tx.Txid] = wt
		}
		for _, u := range truth.UTXOs {
			wantUTXOs[u.OutPoint()] = u.Value
		}
		wantBalance += truth.Balance
		for _, a := range truth.Addresses {
			wantAddrs = append(wantAddrs, a.Address)
		}
	}
	require.Len(t, wantTxs, 8, "six payments and two spends")
	require.Equal(t, int64(0-200_000+outs[1].Value), wantTxs[spend.TxHash()].delta)
	require.Equal(t, int64(-300_000), wantTxs[sweep.TxHash()].delta)
	require.NotContains(t, wantUTXOs, spent)
	require.NotContains(t, wantUTXOs, spent2)

	txs, err := w.Txs()
	require.NoError(t, err)
	gotTxs := map[chainhash.Hash]want{}
	for _, s := range txs {
		gotTxs[s.Txid] = want{s.Height, s.Delta}
	}
	require.Equal(t, wantTxs, gotTxs)

	utxos, err := w.UTXOs()
	require.NoError(t, err)
	gotUTXOs := map[wire.OutPoint]int64{}
	for _, u := range utxos {
		gotUTXOs[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = int64(u.Amount)
	}
	require.Equal(t, wantUTXOs, gotUTXOs)

	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, btcutil.Amount(wantBalance), bal.Confirmed)
	require.Equal(t, btcutil.Amount(wantBalance), bal.Total())

	infos, err := w.Addresses()
	require.NoError(t, err)
	used := map[string]wallet.Kind{}
	for _, a := range infos {
		if a.Used {
			used[a.Address] = a.Kind
		}
	}
	for _, a := range wantAddrs {
		require.Contains(t, used, a)
	}
	changeAddr, err := key.Address(testnet.PurposeBIP86, testnet.BranchInternal, 0)
	require.NoError(t, err)
	require.Equal(t, wallet.KindP2TR, used[changeAddr.EncodeAddress()], "P2TR change seen")

	stats, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(len(wantTxs)), stats.Relevant)
	t.Logf("synced %d blocks: %d relevant, %d false positives, %d elements, %d outpoints",
		stats.BlocksApplied, stats.Relevant, stats.FalsePositives, stats.Elements, stats.OutPoints)
}
