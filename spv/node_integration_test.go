package spv_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	return net
}

// demoHarness starts a funded regtest btcd harness and the demo keyring
// that plays the user's wallet in these tests.
func demoHarness(t testing.TB) (*testnet.Harness, *testnet.Keyring) {
	t.Helper()
	h := testnet.NewT(t, testnet.Options{})
	k, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	return h, k
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
		require.NoError(t, err)
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
			_, err := h.Noise(noise)
			require.NoError(t, err)
		}
		if r.Intn(3) == 0 {
			s := scripts[r.Intn(len(scripts))]
			amt := int64(100_000 + r.Intn(1_000_000))
			tx, err := h.Pay([]*wire.TxOut{wire.NewTxOut(amt, s)})
			require.NoError(t, err)
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
			require.NoError(t, err)
			delete(truth.coins, op)
			pending = append(pending, tx)
		}
		hashes, err := h.Mine(1)
		require.NoError(t, err)
		_, height, err := h.Node().BestBlock()
		require.NoError(t, err)
		_ = hashes
		for _, tx := range pending {
			truth.txs[tx.TxHash()] = height
		}
		pending = nil
	}
	return truth
}

// startNode starts a node on w with peers and stops it at cleanup.
func startNode(t testing.TB, dir string, w watch.Watcher, peers ...string) *spv.Node {
	t.Helper()
	return startNodeWith(t, spv.Config{
		Network: regtest(t), DataDir: dir, Connect: peers, Watcher: w, Log: testLogger(),
		Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second},
	})
}

// startNodeWith starts a node of cfg and stops it at cleanup.
func startNodeWith(t testing.TB, cfg spv.Config) *spv.Node {
	t.Helper()
	n, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() {
		require.NoError(t, n.Stop(), "stop")
	})
	return n
}

// waitSynced waits for the node to be synced with its headers and watcher
// at height or above. The deadline follows progress: it fails when
// neither height moved for syncIdle (a stuck sync; a loaded machine only
// makes progress slower), or after syncLimit in all.
func waitSynced(t testing.TB, n *spv.Node, height int32) {
	t.Helper()
	began, moved := time.Now(), time.Now()
	last := n.Status()
	for {
		st := n.Status()
		switch {
		case st.Err != nil:
			require.FailNow(t, fmt.Sprintf("wait synced: %v (status %+v)", st.Err, st))
		case st.Stopped:
			require.FailNow(t, fmt.Sprintf("wait synced: %v (status %+v)", spv.ErrStopped, st))
		case st.Synced && st.WatcherHeight >= height && st.HeaderHeight >= height:
			return
		}
		if st.WatcherHeight != last.WatcherHeight || st.HeaderHeight != last.HeaderHeight {
			last, moved = st, time.Now()
		}
		require.LessOrEqual(t, time.Since(moved), syncIdle, "timeout waiting for height %d: no progress for %v (%v in all): status %+v", height, time.Since(moved).Round(time.Millisecond), time.Since(began).Round(time.Millisecond), st)
		require.LessOrEqual(t, time.Since(began), syncLimit, "timeout waiting for height %d: no progress for %v (%v in all): status %+v", height, time.Since(moved).Round(time.Millisecond), time.Since(began).Round(time.Millisecond), st)
		time.Sleep(20 * time.Millisecond)
	}
}

// syncIdle and syncLimit bound waitSynced: the time without progress, and
// the whole wait.
const (
	syncIdle  = 30 * time.Second
	syncLimit = 5 * time.Minute
)

// checkTruth compares the watcher with the chain's truth.
func checkTruth(t testing.TB, w *watchtest.MemWatcher, truth *chainTruth) {
	t.Helper()
	got := w.Txs()
	for id, h := range truth.txs {
		g, ok := got[id]
		require.True(t, ok, "missed tx %v at %d", id, h)
		require.Equal(t, h, g.Height, "tx %v at %d, want %d", id, g.Height, h)
	}
	for id := range got {
		_, ok := truth.txs[id]
		require.True(t, ok, "extra tx %v", id)
	}
	coins := w.Coins()
	require.Len(t, coins, len(truth.coins), "%d coins, want %d", len(coins), len(truth.coins))
	for op, v := range truth.coins {
		require.Equal(t, v, coins[op], "coin %v = %d, want %d", op, coins[op], v)
	}
}

func TestSyncMatchesTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 10)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	truth := buildChain(t, h, k, scripts, 60, 4, 1)
	_, tip, _ := h.Node().BestBlock()

	w := watchtest.NewMemWatcher(start+1, scripts...)
	n := startNode(t, t.TempDir(), w, h.Node().P2PAddr())
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	st := n.Status()
	t.Logf("synced %d blocks: matched %d relevant %d fp %d dropped %d bytes %d loads %d",
		st.Blocks, st.Matched, st.Relevant, st.FalsePositives, st.Dropped, st.BytesReceived, st.Filter.Loads)
	require.NotEqual(t, 0, len(truth.txs), "test chain has no wallet txs")
}

var _ = btcutil.Amount(0)

func TestSyncGapLimitRerequests(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	derive := func(i uint32) ([]byte, error) { return k.PkScript(testnet.PurposeBIP84, 0, i) }
	script := func(i uint32) []byte {
		s, err := derive(i)
		require.NoError(t, err)
		return s
	}
	_, start, _ := h.Node().BestBlock()
	want := map[chainhash.Hash]bool{}
	pay := func(idx ...uint32) {
		for _, i := range idx {
			tx, err := h.Pay([]*wire.TxOut{wire.NewTxOut(200_000, script(i))})
			require.NoError(t, err)
			want[tx.TxHash()] = true
		}
		_, err := h.Noise(3)
		require.NoError(t, err)
		_, err = h.Mine(1)
		require.NoError(t, err)
	}
	// Gap 3 watches 0..2 at first. Index 2 reveals 3..5; index 4 in the
	// same block is only found when that block is fetched again; 5 in the
	// next block (already in flight with the old filter); then 8 and 11.
	pay(0)
	pay(2, 4)
	pay(5)
	pay(8)
	pay(11)
	_, err := h.Mine(5)
	require.NoError(t, err)
	_, tip, _ := h.Node().BestBlock()
	w, err := watchtest.NewMemWatcherGap(start+1, 3, derive)
	require.NoError(t, err)
	n := startNode(t, t.TempDir(), w, h.Node().P2PAddr())
	waitSynced(t, n, tip)
	got := w.Txs()
	for id := range want {
		_, ok := got[id]
		require.True(t, ok, "missed %v", id)
	}
	require.Len(t, got, len(want), "found %d txs, want %d", len(got), len(want))
	st := n.Status()
	_, again := w.Applied()
	t.Logf("loads %d rerequested %d reapplied %d", st.Filter.Loads, st.Rerequested, again)
	require.Equal(t, len(want), st.Relevant, "status counts %d relevant txs, want %d (re-deliveries must not count twice)", st.Relevant, len(want))
	require.NotEqual(t, 0, st.Rerequested, "no block was fetched again (rerequested %d, reapplied %d)", st.Rerequested, again)
	require.NotEqual(t, 0, again, "no block was fetched again (rerequested %d, reapplied %d)", st.Rerequested, again)
}

func TestSyncFollowsReorgs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 4)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 10, 2, 7)
	_, tip, _ := h.Node().BestBlock()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	n := startNode(t, t.TempDir(), w, h.Node().P2PAddr())
	sub := n.Subscribe()
	defer sub.Cancel()
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)

	for _, depth := range []int{1, 3} {
		// A payment in the losing branch vanishes; one in the winning
		// branch appears.
		orphan, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(300_000, scripts[0])})
		require.NoError(t, err)
		winner, err := h.DoubleSpend(orphan, []*wire.TxOut{wire.NewTxOut(250_000, scripts[1])})
		require.NoError(t, err)
		t.Logf("reorg depth %d", depth)
		res, err := h.Reorg(context.Background(), depth, testnet.ReorgOptions{
			OrphanTxs: []*wire.MsgTx{orphan}, WinnerTxs: []*wire.MsgTx{winner},
		})
		require.NoError(t, err)
		waitSynced(t, n, res.TipHeight)
		waitFor(t, func() bool {
			st := n.Status()
			return st.WatcherHash == *res.New[len(res.New)-1]
		})
		got := w.Txs()
		_, ok := got[orphan.TxHash()]
		require.False(t, ok, "depth %d: orphaned tx still in the watcher", depth)
		g, ok := got[winner.TxHash()]
		require.True(t, ok, "depth %d: winning tx %v missing or at wrong height (%+v)", depth, winner.TxHash(), g)
		require.Equal(t, res.ForkHeight+1, g.Height, "depth %d: winning tx %v missing or at wrong height (%+v)", depth, winner.TxHash(), g)
		truth.txs[winner.TxHash()] = res.ForkHeight + 1
		for i, out := range winner.TxOut {
			if string(out.PkScript) == string(scripts[1]) {
				truth.coins[wire.OutPoint{Hash: winner.TxHash(), Index: uint32(i)}] = out.Value
			}
		}
	}
	checkTruth(t, w, truth)
	st := n.Status()
	require.NotEqual(t, 0, st.Reorgs, "no reorg counted: %+v", st)
}

// waitFor polls cond for up to 20 s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		require.False(t, time.Now().After(deadline), "condition not reached")
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSyncRestartAndMempool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 20, 2, 3)
	_, tip, _ := h.Node().BestBlock()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	dir := t.TempDir()
	cfg := spv.Config{
		Network: regtest(t), DataDir: dir, Connect: []string{h.Node().P2PAddr()}, Watcher: w, Log: testLogger(), Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond},
	}
	n, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	waitSynced(t, n, tip)
	require.NoError(t, n.Stop())
	require.NoError(t, n.Stop(), "second stop")

	more := buildChain(t, h, k, scripts, 10, 2, 4)
	for id, ht := range more.txs {
		truth.txs[id] = ht
	}
	_, tip2, _ := h.Node().BestBlock()
	n2, err := spv.New(cfg)
	require.NoError(t, err)
	st := n2.Status()
	require.Equal(t, tip, st.HeaderHeight, "reopened header store at %d, want %d", st.HeaderHeight, tip)
	require.NoError(t, n2.Start(context.Background()))
	t.Cleanup(func() { _ = n2.Stop() })
	waitSynced(t, n2, tip2)
	got := w.Txs()
	for id, ht := range truth.txs {
		g, ok := got[id]
		require.True(t, ok, "tx %v: got %+v, want height %d", id, g, ht)
		require.Equal(t, ht, g.Height, "tx %v: got %+v, want height %d", id, g, ht)
	}

	// An unconfirmed payment reaches the watcher before it is mined.
	addr, err := k.Address(testnet.PurposeBIP84, 0, 1)
	require.NoError(t, err)
	tx, err := h.PayAddress(addr, 123_456)
	require.NoError(t, err)
	waitFor(t, func() bool { _, ok := w.Mempool()[tx.TxHash()]; return ok })
	_, err = h.Mine(1)
	require.NoError(t, err)
	waitFor(t, func() bool { g, ok := w.Txs()[tx.TxHash()]; return ok && g.Height == tip2+1 })

	// A node restarted at the tip gets an empty headers reply; the
	// getheaders after the next announcement has the same locator and
	// must still be sent (btcd's PushGetHeadersMsg would drop it).
	require.NoError(t, n2.Stop())
	n3, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n3.Start(context.Background()))
	t.Cleanup(func() { _ = n3.Stop() })
	waitSynced(t, n3, tip2+1)
	_, err = h.Mine(1)
	require.NoError(t, err)
	start3 := time.Now()
	waitSynced(t, n3, tip2+2)
	d := time.Since(start3)
	require.LessOrEqual(t, d, 5*time.Second, "new block took %v after a restart at the tip", d)

	recs := readTranscript(t, dir)
	require.GreaterOrEqual(t, len(recs), 2, "transcript %+v", recs)
	require.Equal(t, transcript.ReasonInitial, recs[0].Reason, "transcript %+v", recs)
	sawRestart := false
	for _, r := range transcript.FilterRecords(recs) {
		sawRestart = sawRestart || r.Reason == transcript.ReasonRestart
		require.Equal(t, h.Node().P2PAddr(), r.Peer, "record %+v", r)
		require.NotEqual(t, 0, len(r.Filter), "record %+v", r)
	}
	require.True(t, sawRestart, "no restart record in %+v", recs)
}

func TestSyncSurvivesPeerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 120, 1, 5)
	_, tip, _ := h.Node().BestBlock()
	second, err := testnet.StartNode(context.Background(), testnet.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = second.Stop() })
	require.NoError(t, second.ConnectTo(h.Node()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, second.WaitForHeight(ctx, tip))
	nodes := map[string]*testnet.Node{h.Node().P2PAddr(): h.Node(), second.P2PAddr(): second}

	w := watchtest.NewMemWatcher(start+1, scripts...)
	gate := &gateWatcher{MemWatcher: w, at: start + 20, reached: make(chan struct{}), release: make(chan struct{})}
	n, err := spv.New(spv.Config{
		Network: regtest(t), DataDir: t.TempDir(), Connect: []string{h.Node().P2PAddr(), second.P2PAddr()},
		Watcher: gate, Log: testLogger(),
		Tuning: spv.Tuning{RetryMin: 50 * time.Millisecond, BatchSize: 5, Window: 10},
	})
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() { _ = n.Stop() })
	t.Cleanup(gate.open) // first: a failed test must not leave Stop waiting at the gate
	select {
	case <-gate.reached:
	case <-ctx.Done():
		require.FailNow(t, fmt.Sprintf("no progress: %+v", n.Status()))
	}
	killed := ""
	for _, p := range n.Peers() {
		if p.Download {
			killed = p.Addr
		}
	}
	victim := nodes[killed]
	require.NotNil(t, victim, "no download peer among %+v", n.Peers())
	require.NoError(t, victim.Stop())
	gate.open()
	st0 := n.Status()
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	st := n.Status()
	t.Logf("lost %s at watcher height %d; synced to %d with %d peers", killed, st0.WatcherHeight, st.WatcherHeight, len(st.Peers))
	require.Less(t, st0.WatcherHeight, tip, "peer stopped after the sync ended (height %d)", st0.WatcherHeight)
	require.Len(t, st.Peers, 1, "peers after the loss: %+v", st.Peers)
	require.NotEqual(t, killed, st.Peers[0].Addr, "peers after the loss: %+v", st.Peers)
}

// gateWatcher holds ApplyBlock at one height until released, so a test
// can act in the middle of a sync.
type gateWatcher struct {
	*watchtest.MemWatcher
	at      int32
	reached chan struct{}
	release chan struct{}
	passed  bool
	once    sync.Once
}

// open releases the gate (once; a test's cleanup opens it too).
func (g *gateWatcher) open() { g.once.Do(func() { close(g.release) }) }

func (g *gateWatcher) ApplyBlock(b *watch.FilteredBlock) (watch.BlockResult, error) {
	if b.Height == g.at && !g.passed {
		g.passed = true
		close(g.reached)
		<-g.release
	}
	return g.MemWatcher.ApplyBlock(b)
}

// TestSyncThousandBlocks is the acceptance run of a large sync: 1,000 blocks with
// noise, 20 watched addresses (10 P2PKH, 10 P2WPKH) paid and half of the
// payments spent; every wallet tx found, none extra, false positives below
// 5 % of the matched txs with the default settings.
func TestSyncThousandBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	var truths []*testnet.Truth
	for i, purpose := range []uint32{testnet.PurposeBIP44, testnet.PurposeBIP84} {
		tr, err := h.BuildChain(context.Background(), testnet.ChainSpec{
			Blocks: 500, TxsPerBlock: 4, Keyring: k, Purpose: purpose,
			WatchAddrs: 10, PaymentsPerAddr: 2, SpendFraction: 0.5, Seed: int64(10 + i),
		})
		require.NoError(t, err)
		truths = append(truths, tr)
	}
	_, err := h.Mine(1)
	require.NoError(t, err)
	_, tip, _ := h.Node().BestBlock()
	// The wallet: 10 receive and 10 change scripts of each purpose.
	var scripts [][]byte
	for _, purpose := range []uint32{testnet.PurposeBIP44, testnet.PurposeBIP84} {
		for branch := uint32(0); branch < 2; branch++ {
			for i := uint32(0); i < 10; i++ {
				s, err := k.PkScript(purpose, branch, i)
				require.NoError(t, err)
				scripts = append(scripts, s)
			}
		}
	}
	w := watchtest.NewMemWatcher(truths[0].StartHeight+1, scripts...)
	n := startNode(t, t.TempDir(), w, h.Node().P2PAddr())
	waitSynced(t, n, tip)
	got := w.Txs()
	want := 0
	var balance int64
	for _, tr := range truths {
		want += len(tr.Txs)
		balance += tr.Balance
		for _, tx := range tr.Txs {
			g, ok := got[tx.Txid]
			require.True(t, ok, "wallet tx %v (height %d, delta %d): got %+v", tx.Txid, tx.Height, tx.Delta, g)
			require.Equal(t, tx.Height, g.Height, "wallet tx %v (height %d, delta %d): got %+v", tx.Txid, tx.Height, tx.Delta, g)
			require.Equal(t, tx.Delta, g.Amount, "wallet tx %v (height %d, delta %d): got %+v", tx.Txid, tx.Height, tx.Delta, g)
		}
	}
	require.Len(t, got, want, "%d wallet txs, want %d", len(got), want)
	require.Equal(t, balance, w.Balance(), "balance %d, want %d", w.Balance(), balance)
	st := n.Status()
	t.Logf("%d blocks, %d txs tested, %d matched, %d relevant, %d false positives (observed rate %.2g, filter %.2g), %d bytes, %d loads",
		st.Blocks, st.Tested, st.Matched, st.Relevant, st.FalsePositives, st.ObservedFPRate, st.Filter.FPRate, st.BytesReceived, st.Filter.Loads)
	require.GreaterOrEqual(t, st.Blocks, 1000, "only %d blocks synced", st.Blocks)
	require.NotEqual(t, 0, st.Matched, "%d false positives among %d matched txs (>= 5%%)", st.FalsePositives, st.Matched)
	require.Less(t, float64(st.FalsePositives), 0.05*float64(st.Matched), "%d false positives among %d matched txs (>= 5%%)", st.FalsePositives, st.Matched)
}
