package spv_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// reorgDepths are the reorganisations TestReorgDoubleSpends runs: 1, 2, 6
// and 7, one past the six confirmations usually taken as final, so a
// payment the wallet saw with six confirmations vanishes; with the test's
// 4-block download window, 6 and 7 are also deeper than the window.
var reorgDepths = []int{1, 2, 6, 7}

// TestReorgDoubleSpends syncs the real wallet from a regtest btcd and, for
// each depth, lets it see a losing branch whose first block holds a
// payment to the wallet and a spend of a confirmed wallet UTXO, then
// reorganises to a longer branch holding a double spend of that UTXO and
// of the payment's inputs. Afterwards the wallet must equal a truth
// computed independently by scanning the node's best chain for the
// keyring's scripts: the orphaned payment and spend gone (not left
// unconfirmed), the double spend confirmed at the fork height + 1, and the
// balance to the satoshi.
func TestReorgDoubleSpends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	ctx := context.Background()
	h, k := demoHarness(t)
	xpub, err := k.Xpub(84)
	require.NoError(t, err)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	dir := t.TempDir()
	w, err := wallet.Create(filepath.Join(dir, "wallet"), wallet.CreateConfig{Network: "regtest", Xpubs: []string{xpub}, Birthday: start + 1})
	require.NoError(t, err)
	defer w.Close()
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n, err := spv.New(spv.Config{
		Network: net, DataDir: filepath.Join(dir, "spv"), Connect: []string{h.Node().P2PAddr()}, Watcher: w,
		// A download window of 4 blocks: the reorgs of depth 6 and 7 also
		// reach below everything the node had in flight.
		Tuning: spv.Tuning{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond, TickInterval: 200 * time.Millisecond, BatchSize: 2, Window: 4},
	})
	require.NoError(t, err)
	sub := n.Subscribe()
	defer sub.Cancel()
	require.NoError(t, n.Start(ctx))
	defer func() {
		require.NoError(t, n.Stop(), "stop")
	}()
	script := func(branch, index uint32) []byte {
		addr, err := k.Address(84, branch, index)
		require.NoError(t, err)
		s, err := txscript.PayToAddrScript(addr)
		require.NoError(t, err)
		return s
	}
	foreign := func(i int) []byte {
		s, err := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(chainhash.HashB([]byte(fmt.Sprintf("foreign %d", i)))[:20]).Script()
		require.NoError(t, err)
		return s
	}
	var events []spv.Event
	waitTip := func(hash chainhash.Hash) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			st := n.Status()
			if st.Synced && st.WatcherHash == hash {
				return
			}
			select {
			case ev := <-sub.Events():
				events = append(events, ev)
			case <-time.After(20 * time.Millisecond):
			case <-deadline:
				require.FailNow(t, fmt.Sprintf("node did not reach %v: %+v", hash, st))
			}
		}
	}
	// drain keeps the events already queued (the queue is unbounded, so
	// everything before the sync is in it).
	drain := func() {
		for sub.Pending() > 0 {
			events = append(events, <-sub.Events())
		}
	}

	for round, depth := range reorgDepths {
		// A confirmed wallet UTXO to double-spend.
		recv := script(0, uint32(round))
		fund, err := h.Pay([]*wire.TxOut{wire.NewTxOut(1_000_000, recv)})
		require.NoError(t, err)
		_, err = h.Mine(1)
		require.NoError(t, err)
		utxo := wire.OutPoint{Hash: fund.TxHash(), Index: reorgOutputIndex(t, fund, recv)}
		tipHash, _, _ := h.Node().BestBlock()
		waitTip(*tipHash)
		drain()

		orphanPay, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(400_000, script(0, uint32(10+round)))})
		require.NoError(t, err)
		spendA, err := h.BuildSpend(k, []wire.OutPoint{utxo}, []*wire.TxOut{wire.NewTxOut(900_000, foreign(2*round))})
		require.NoError(t, err)
		spendB, err := h.BuildSpend(k, []wire.OutPoint{utxo}, []*wire.TxOut{wire.NewTxOut(800_000, foreign(2*round+1))})
		require.NoError(t, err)
		conflict, err := h.DoubleSpend(orphanPay, []*wire.TxOut{wire.NewTxOut(390_000, foreign(100+round))})
		require.NoError(t, err)
		events = events[:0]
		res, err := h.Reorg(ctx, depth, testnet.ReorgOptions{
			OrphanTxs: []*wire.MsgTx{orphanPay, spendA}, WinnerTxs: []*wire.MsgTx{spendB, conflict},
		})
		require.NoError(t, err)
		waitTip(*res.New[len(res.New)-1])
		drain()
		require.NoError(t, w.Flush())

		// The node must have applied the losing branch and rolled it back.
		sawOrphan, sawReorg := false, false
		for _, ev := range events {
			switch e := ev.(type) {
			case spv.MatchedTx:
				sawOrphan = sawOrphan || (e.Txid == orphanPay.TxHash() && e.Height == res.ForkHeight+1 && e.Relevant)
			case spv.Reorg:
				sawReorg = sawReorg || e.ForkHeight == res.ForkHeight
			}
		}
		t.Logf("depth %d: fork at %d, the wallet saw the orphaned payment confirmed: %v, reorg event: %v", depth, res.ForkHeight, sawOrphan, sawReorg)
		// Whether the node fetched the losing branch before the winning
		// one arrived is a race with the harness (it mines both branches
		// back to back); the final state must be right either way.
		txs, err := w.Txs()
		require.NoError(t, err)
		for _, tx := range txs {
			require.NotEqual(t, orphanPay.TxHash(), tx.Txid, "depth %d: orphaned tx %v still in the wallet (height %d)", depth, tx.Txid, tx.Height)
			require.NotEqual(t, spendA.TxHash(), tx.Txid, "depth %d: orphaned tx %v still in the wallet (height %d)", depth, tx.Txid, tx.Height)
			require.False(t, tx.Txid == spendB.TxHash() && tx.Height != res.ForkHeight+1, "depth %d: double spend at height %d, want %d", depth, tx.Height, res.ForkHeight+1)
		}
		reorgCompare(t, h, w, start+1, func(branch, index uint32) []byte { return script(branch, index) })
	}
}

// reorgOutputIndex returns the index of tx's output paying script.
func reorgOutputIndex(t *testing.T, tx *wire.MsgTx, script []byte) uint32 {
	t.Helper()
	for i, out := range tx.TxOut {
		if slices.Equal(out.PkScript, script) {
			return uint32(i)
		}
	}
	require.FailNow(t, "no output pays the script")
	return 0
}

// reorgCompare scans the node's best chain from height from for
// transactions paying the keyring's first 30 receive and change scripts
// or spending their outputs, and compares the result with the wallet's
// transactions, UTXOs and balance.
func reorgCompare(t *testing.T, h *testnet.Harness, w *wallet.Wallet, from int32, script func(branch, index uint32) []byte) {
	t.Helper()
	mine := map[string]bool{}
	for branch := uint32(0); branch < 2; branch++ {
		for i := uint32(0); i < 30; i++ {
			mine[string(script(branch, i))] = true
		}
	}
	rpc := h.Node().RPC()
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)
	wantTxs := map[chainhash.Hash]int32{}
	coins := map[wire.OutPoint]int64{}
	for height := from; height <= tip; height++ {
		hash, err := rpc.GetBlockHash(int64(height))
		require.NoError(t, err)
		block, err := rpc.GetBlock(hash)
		require.NoError(t, err)
		for _, tx := range block.Transactions {
			id := tx.TxHash()
			for _, in := range tx.TxIn {
				if _, ok := coins[in.PreviousOutPoint]; ok {
					delete(coins, in.PreviousOutPoint)
					wantTxs[id] = height
				}
			}
			for i, out := range tx.TxOut {
				if mine[string(out.PkScript)] {
					coins[wire.OutPoint{Hash: id, Index: uint32(i)}] = out.Value
					wantTxs[id] = height
				}
			}
		}
	}
	txs, err := w.Txs()
	require.NoError(t, err)
	gotTxs := map[chainhash.Hash]int32{}
	for _, tx := range txs {
		gotTxs[tx.Txid] = tx.Height
	}
	require.Equal(t, fmt.Sprint(wantTxs), fmt.Sprint(gotTxs), "wallet txs %v, chain has %v", gotTxs, wantTxs)
	utxos, err := w.UTXOs()
	require.NoError(t, err)
	var have, want []string
	var sum int64
	for _, u := range utxos {
		have = append(have, fmt.Sprintf("%v:%d=%d", u.Txid, u.Index, int64(u.Amount)))
	}
	for op, v := range coins {
		want = append(want, fmt.Sprintf("%v:%d=%d", op.Hash, op.Index, v))
		sum += v
	}
	sort.Strings(have)
	sort.Strings(want)
	require.True(t, slices.Equal(have, want), "wallet utxos %v, chain has %v", have, want)
	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, sum, int64(bal.Confirmed), "balance %+v, chain says %d confirmed and nothing unconfirmed", bal, sum)
	require.Zero(t, bal.Unconfirmed, "balance %+v, chain says %d confirmed and nothing unconfirmed", bal, sum)
}
