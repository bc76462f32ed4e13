package bcoin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
	"github.com/bloomwatch/bloomwatch/testnet/internal/walletcheck"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// TestBcoinAddress checks the conversion to bcoin's regtest prefixes
// against addresses bcoin 1.0.2 itself prints for the same scripts
// (Address.fromScript(script).toString('regtest')).
func TestBcoinAddress(t *testing.T) {
	hash := bytes.Repeat([]byte{0x11}, 20)
	hash32 := bytes.Repeat([]byte{0x22}, 32)
	script := func(b *txscript.ScriptBuilder) []byte {
		s, err := b.Script()
		require.NoError(t, err)
		return s
	}
	for _, tc := range []struct {
		name   string
		script []byte
		want   string
	}{
		{"p2pkh", script(txscript.NewScriptBuilder().AddOp(txscript.OP_DUP).AddOp(txscript.OP_HASH160).AddData(hash).
			AddOp(txscript.OP_EQUALVERIFY).AddOp(txscript.OP_CHECKSIG)), "RAqS1bAuWqW2f6ufsU5H4XpKfy5Pqj2oHz"},
		{"p2sh", script(txscript.NewScriptBuilder().AddOp(txscript.OP_HASH160).AddData(hash).AddOp(txscript.OP_EQUAL)),
			"GKQAMCcZtsJkfZqmLEkGPmq1psQeHtPeGZ"},
		{"p2wpkh", script(txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(hash)),
			"rb1qzyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg328fddy"},
		{"p2wsh", script(txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(hash32)),
			"rb1qyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3qj8rpda"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Address(tc.script)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := Address(testnet.RandomScript(nil, testnet.KindP2TR))
	require.ErrorIs(t, err, ErrAddress)
	_, err = Address([]byte{txscript.OP_RETURN})
	require.ErrorIs(t, err, ErrAddress)
}

// TestBcoinSyncWallet starts bcoin 1.0.2 on regtest, mines a 200-block
// chain with noise, payments to 20 of the demo keyring's receive
// addresses and spends of some of them (BuildChain), and syncs the real
// watch-only wallet with bloomwatch's SPV node from bcoin alone. The
// wallet must equal bcoin's own view: the truth scanned from bcoin's
// blocks, whose UTXOs bcoin's gettxout confirms. It then follows bcoin
// through mempool payments, the block that confirms them and a two-block
// reorganisation (bcoin's invalidateblock), equal to bcoin's view after
// each. bcoin's sockets are checked to be loopback only.
func TestBcoinSyncWallet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts bcoin")
	}
	ctx := t.Context()
	began := time.Now()
	h := NewT(t, Options{})
	node := h.Node()
	t.Logf("bcoin up with %d setup blocks in %s", testnet.SegwitHeight(h.Params()), time.Since(began).Round(time.Millisecond))

	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	mark := time.Now()
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{
		Blocks: 200, TxsPerBlock: 1, Keyring: key, Purpose: testnet.PurposeBIP84,
		WatchAddrs: 20, PaymentsPerAddr: 2, SpendFraction: 0.3, Seed: 16,
	})
	require.NoError(t, err)
	t.Logf("built %d blocks (%d wallet txs, %d noise) in %s", truth.TipHeight-truth.StartHeight,
		len(truth.Txs), truth.NoiseTxs, time.Since(mark).Round(time.Millisecond))
	require.Len(t, truth.Addresses, 20+countChange(truth))
	// The builder's bookkeeping equals bcoin's own view of its blocks.
	scanned, err := h.ScanTruth(ctx, key, testnet.PurposeBIP84, truth.StartHeight+1)
	require.NoError(t, err)
	testnet.SortTruthTxs(truth.Txs)
	testnet.SortTruthTxs(scanned.Txs)
	require.Equal(t, truth.Txs, scanned.Txs)
	require.Equal(t, truth.Addresses, scanned.Addresses)
	require.Equal(t, truth.UTXOs, scanned.UTXOs)
	require.Equal(t, truth.Balance, scanned.Balance)
	// bcoin's coin view agrees with its blocks.
	for _, u := range truth.UTXOs {
		out, err := node.Unspent(u.OutPoint(), false)
		require.NoError(t, err)
		require.NotNil(t, out, "bcoin has no unspent %v", u.OutPoint())
		require.Equal(t, u.Value, out.Value)
	}

	dir := t.TempDir()
	w, err := wallet.Create(filepath.Join(dir, "wallet"), wallet.CreateConfig{
		Network: truth.Network, Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, w.Close()) })
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n, err := spv.New(spv.Config{
		Network: net, DataDir: filepath.Join(dir, "spv"), Connect: []string{node.P2PAddr()}, Watcher: w,
		Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 20 * time.Second, TickInterval: 200 * time.Millisecond},
	})
	require.NoError(t, err)
	mark = time.Now()
	require.NoError(t, n.Start(ctx))
	t.Cleanup(func() { require.NoError(t, n.Stop()) })
	waitWalletAt(t, n, truth.TipHash)
	st := n.Status()
	t.Logf("synced %d blocks from bcoin in %s: %d matched txs, %d false positives, %d filterloads, %d bytes",
		st.Blocks, time.Since(mark).Round(time.Millisecond), st.Matched, st.FalsePositives, st.Filter.Loads, st.BytesReceived)
	walletcheck.Require(t, w, truth)

	// bcoin lists bloomwatch as an inbound BIP37 peer, and talks to
	// nothing but 127.0.0.1.
	peers, err := node.Peers()
	require.NoError(t, err)
	require.Len(t, peers, 1)
	require.True(t, peers[0].Inbound)
	require.GreaterOrEqual(t, peers[0].Version, int32(70011))
	seen, err := proc.LoopbackSockets(node.PID())
	require.NoError(t, err)
	require.GreaterOrEqual(t, seen, 3, "P2P and RPC listeners and the peer link")

	// Two payments to fresh receive addresses reach the wallet from
	// bcoin's mempool, then confirm.
	var pending btcutil.Amount
	var payTxs []chainhash.Hash
	for i, amt := range []btcutil.Amount{1_234_567, 7_654_321} {
		addr, err := key.Address(testnet.PurposeBIP84, testnet.BranchExternal, uint32(20+i))
		require.NoError(t, err)
		tx, err := h.PayAddress(addr, amt)
		require.NoError(t, err)
		pending += amt
		payTxs = append(payTxs, tx.TxHash())
	}
	require.NoError(t, node.WaitForMempool(ctx, payTxs...))
	confirmed := btcutil.Amount(truth.Balance)
	require.NoError(t, proc.Poll(ctx, "mempool payments in the wallet", func() (bool, error) {
		bal, err := w.Balance()
		return bal.Unconfirmed == pending && bal.Confirmed == confirmed, err
	}))
	hashes, err := h.Mine(1)
	require.NoError(t, err)
	waitWalletAt(t, n, *hashes[0])
	after, err := h.ScanTruth(ctx, key, testnet.PurposeBIP84, truth.StartHeight+1)
	require.NoError(t, err)
	require.Equal(t, truth.Balance+int64(pending), after.Balance)
	walletcheck.Require(t, w, after)

	// A two-block reorganisation (bcoin's invalidateblock) whose losing
	// branch confirms two more payments, which the wallet follows, and
	// whose winning branch confirms the same payments again in other
	// blocks.
	var reorgTxs []*wire.MsgTx
	var reorgPaid int64
	for i, amt := range []int64{2_222_222, 3_333_333} {
		script, err := key.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, uint32(22+i))
		require.NoError(t, err)
		tx, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(amt, script)})
		require.NoError(t, err)
		reorgTxs = append(reorgTxs, tx)
		reorgPaid += amt
	}
	r, err := h.Reorg(ctx, 2, testnet.ReorgOptions{OrphanTxs: reorgTxs, WinnerTxs: reorgTxs, AfterLosing: func() error {
		losingTip, _, err := node.BestBlock()
		if err == nil {
			waitWalletAt(t, n, *losingTip)
		}
		return err
	}})
	require.NoError(t, err)
	require.Len(t, r.Orphaned, 2)
	require.Len(t, r.New, 3)
	waitWalletAt(t, n, *r.New[2])
	reorged, err := h.ScanTruth(ctx, key, testnet.PurposeBIP84, truth.StartHeight+1)
	require.NoError(t, err)
	require.Equal(t, after.Balance+reorgPaid, reorged.Balance)
	for _, tx := range reorged.Txs[len(reorged.Txs)-2:] {
		require.Equal(t, *r.New[0], tx.BlockHash, "the payments confirm in the winning branch's first block")
	}
	walletcheck.Require(t, w, reorged)
	pool, err := node.Mempool()
	require.NoError(t, err)
	require.Empty(t, pool, "the losing branch held nothing the winning one lacks")
	st = n.Status()
	require.GreaterOrEqual(t, st.Reorgs, 1)
	t.Logf("whole test %s", time.Since(began).Round(time.Millisecond))
}

// countChange returns how many change addresses the truth lists.
func countChange(t *testnet.Truth) int {
	n := 0
	for _, a := range t.Addresses {
		if a.Branch == testnet.BranchInternal {
			n++
		}
	}
	return n
}

// waitWalletAt waits until the SPV node is synced with its watcher at
// block hash.
func waitWalletAt(t *testing.T, n *spv.Node, hash chainhash.Hash) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	err := proc.Poll(ctx, "wallet at "+hash.String(), func() (bool, error) {
		st := n.Status()
		return st.Synced && st.WatcherHash == hash, st.Err
	})
	require.NoError(t, err, "status %+v", n.Status())
}

// TestBcoinPackage checks the installation Package finds or makes:
// bcoin at Version, and the launcher and leveldown stub it runs
// byte for byte the embedded ones. .ci/run runs it before the suite, with
// the npm registry reachable, so that the suite finds bcoin offline.
func TestBcoinPackage(t *testing.T) {
	Require(t)
	dir, err := Package(t.Context())
	require.NoError(t, err)
	require.NoError(t, checkDir(dir))
	for _, name := range []string{launcherName, "leveldown-stub.js", "package-lock.json"} {
		want, err := files.ReadFile("bcoinjs/" + name)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, want, got, name)
	}
	// A directory without bcoin is refused, naming why.
	require.ErrorIs(t, checkDir(t.TempDir()), ErrNotInstalled)
}
