package spv_test

import (
	"context"
	"log/slog"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/spv/netparams"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// chainTruth is what a test chain pays the watched scripts.
type chainTruth struct {
	txs   map[chainhash.Hash]int32 // wallet txid -> height
	coins map[wire.OutPoint]int64
}

// testLogger returns a logger that writes to stderr when
// BLOOMWATCH_TEST_LOG is set and discards otherwise.
func testLogger() *slog.Logger {
	if os.Getenv("BLOOMWATCH_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// regtest returns the regtest network.
func regtest(t testing.TB) *netparams.Network {
	t.Helper()
	net, err := netparams.Lookup("regtest")
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// keyScripts returns n scripts of the keyring: P2PKH and P2WPKH
// alternating, external branch.
func keyScripts(t testing.TB, k *testnet.Keyring, n int) [][]byte {
	t.Helper()
	out := make([][]byte, n)
	for i := range out {
		purpose := testnet.PurposeBIP44
		if i%2 == 1 {
			purpose = testnet.PurposeBIP84
		}
		s, err := k.PkScript(purpose, 0, uint32(i/2))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = s
	}
	return out
}

// buildChain mines blocks with noise and payments to scripts (each
// payment's block recorded), and spends half of the received coins later
// with the keyring.
func buildChain(t testing.TB, h *testnet.Harness, k *testnet.Keyring, scripts [][]byte, blocks, noise int, seed int64) *chainTruth {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	truth := &chainTruth{txs: make(map[chainhash.Hash]int32), coins: make(map[wire.OutPoint]int64)}
	var pending []*wire.MsgTx
	spendable := []wire.OutPoint{}
	for b := 0; b < blocks; b++ {
		if noise > 0 {
			if _, err := h.Noise(noise); err != nil {
				t.Fatal(err)
			}
		}
		if r.Intn(3) == 0 {
			s := scripts[r.Intn(len(scripts))]
			amt := int64(100_000 + r.Intn(1_000_000))
			tx, err := h.Pay([]*wire.TxOut{wire.NewTxOut(amt, s)})
			if err != nil {
				t.Fatal(err)
			}
			pending = append(pending, tx)
			for i, out := range tx.TxOut {
				if string(out.PkScript) == string(s) {
					op := wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}
					truth.coins[op] = out.Value
					spendable = append(spendable, op)
				}
			}
		}
		if len(spendable) > 2 && r.Intn(6) == 0 {
			op := spendable[0]
			spendable = spendable[1:]
			to := []*wire.TxOut{wire.NewTxOut(truth.coins[op]-5_000, testnet.RandomScript(r, testnet.KindP2WPKH))}
			tx, err := h.Spend(k, []wire.OutPoint{op}, to)
			if err != nil {
				t.Fatal(err)
			}
			delete(truth.coins, op)
			pending = append(pending, tx)
		}
		hashes, err := h.Mine(1)
		if err != nil {
			t.Fatal(err)
		}
		_, height, err := h.Node().BestBlock()
		if err != nil {
			t.Fatal(err)
		}
		_ = hashes
		for _, tx := range pending {
			truth.txs[tx.TxHash()] = height
		}
		pending = nil
	}
	return truth
}

// startNode starts a node on w with peers and stops it at cleanup.
func startNode(t testing.TB, dir string, w spv.Watcher, peers ...string) *spv.Node {
	t.Helper()
	n, err := spv.New(spv.Config{
		Network: regtest(t), DataDir: dir, Connect: peers, Watcher: w, Log: testLogger(),
		RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return n
}

// waitSynced waits for the node to reach height.
func waitSynced(t testing.TB, n *spv.Node, height int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if err := n.WaitSynced(ctx); err != nil {
			t.Fatalf("wait synced: %v (status %+v)", err, n.Status())
		}
		st := n.Status()
		if st.WatcherHeight >= height && st.HeaderHeight >= height {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timeout: status %+v", st)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkTruth compares the watcher with the chain's truth.
func checkTruth(t testing.TB, w *spv.MemWatcher, truth *chainTruth) {
	t.Helper()
	got := w.Txs()
	for id, h := range truth.txs {
		g, ok := got[id]
		if !ok {
			t.Errorf("missed tx %v at %d", id, h)
			continue
		}
		if g.Height != h {
			t.Errorf("tx %v at %d, want %d", id, g.Height, h)
		}
	}
	for id := range got {
		if _, ok := truth.txs[id]; !ok {
			t.Errorf("extra tx %v", id)
		}
	}
	coins := w.Coins()
	if len(coins) != len(truth.coins) {
		t.Errorf("%d coins, want %d", len(coins), len(truth.coins))
	}
	for op, v := range truth.coins {
		if coins[op] != v {
			t.Errorf("coin %v = %d, want %d", op, coins[op], v)
		}
	}
}

func TestSyncMatchesTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{})
	k, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	if err != nil {
		t.Fatal(err)
	}
	scripts := keyScripts(t, k, 10)
	_, start, err := h.Node().BestBlock()
	if err != nil {
		t.Fatal(err)
	}
	truth := buildChain(t, h, k, scripts, 60, 4, 1)
	_, tip, _ := h.Node().BestBlock()

	w := spv.NewMemWatcher(start+1, scripts...)
	n := startNode(t, t.TempDir(), w, h.Node().P2PAddr())
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	st := n.Status()
	t.Logf("synced %d blocks: matched %d relevant %d fp %d dropped %d bytes %d loads %d",
		st.Blocks, st.Matched, st.Relevant, st.FalsePositives, st.Dropped, st.BytesReceived, st.Filter.Loads)
	if len(truth.txs) == 0 {
		t.Fatal("test chain has no wallet txs")
	}
}

var _ = btcutil.Amount(0)
