package spv_test

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// startCFNode starts a node syncing w over BIP158 from peers.
func startCFNode(t testing.TB, dir string, w *watchtest.MemWatcher, peers ...string) *spv.Node {
	t.Helper()
	return startNodeWith(t, spv.Config{
		Network: regtest(t), DataDir: dir, Connect: peers, Watcher: w, Log: testLogger(),
		Protocol: spv.ProtocolBIP158,
		Tuning:   spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second},
	})
}

// TestCFSyncMatchesTruth syncs a watcher of ten scripts over BIP158 from
// a real btcd and checks every wallet transaction and coin against the
// chain's truth, and that the peer was never sent a bloom filter.
func TestCFSyncMatchesTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 10)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	truth := buildChain(t, h, k, scripts, 60, 4, 1)
	_, tip, _ := h.Node().BestBlock()
	require.NotEmpty(t, truth.txs)

	w := watchtest.NewMemWatcher(start+1, scripts...)
	n := startCFNode(t, t.TempDir(), w, h.Node().P2PAddr())
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	st := n.Status()
	require.Equal(t, spv.ProtocolBIP158, st.Protocol)
	require.Zero(t, st.Filter.Loads, "no filterload over BIP158")
	require.GreaterOrEqual(t, st.CF.FilterHeaders, int(tip)+1)
	require.Equal(t, int(tip-start), st.CF.Filters, "one filter per block from the birthday")
	require.Positive(t, st.CF.Blocks)
	t.Logf("synced %d blocks: %d filters (%d bytes), %d blocks fetched (%d bytes, %d false positives), relevant %d, bytes received %d",
		st.Blocks, st.CF.Filters, st.CF.FilterBytes, st.CF.Blocks, st.CF.BlockBytes, st.CF.FalsePositives, st.Relevant, st.BytesReceived)
}

// TestCFSyncGapLimit syncs over BIP158 a watcher with a gap limit of 3
// from a chain whose payments each reveal the next addresses, two of them
// in one block (index 4 beside index 2, which reveals it): the filters
// fetched ahead are matched again with the new scripts, the block with
// both is delivered again with the second payment, and no block is
// fetched twice.
func TestCFSyncGapLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	derive := func(i uint32) ([]byte, error) { return k.PkScript(testnet.PurposeBIP84, 0, i) }
	_, start, _ := h.Node().BestBlock()
	want := map[chainhash.Hash]bool{}
	pay := func(idx ...uint32) {
		for _, i := range idx {
			s, err := derive(i)
			require.NoError(t, err)
			tx, err := h.Pay([]*wire.TxOut{wire.NewTxOut(200_000, s)})
			require.NoError(t, err)
			want[tx.TxHash()] = true
		}
		_, err := h.Noise(3)
		require.NoError(t, err)
		_, err = h.Mine(1)
		require.NoError(t, err)
	}
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
	n := startCFNode(t, t.TempDir(), w, h.Node().P2PAddr())
	waitSynced(t, n, tip)
	got := w.Txs()
	for id := range want {
		require.Contains(t, got, id)
	}
	require.Len(t, got, len(want))
	st := n.Status()
	require.Equal(t, len(want), st.Relevant, "re-deliveries count once")
	_, again := w.Applied()
	require.Positive(t, again, "the block with two payments was delivered again")
	require.LessOrEqual(t, st.CF.Blocks, 5+st.CF.FalsePositives, "no block fetched twice")
}

// TestCFSyncFollowsReorgs syncs over BIP158, then follows reorgs of depth
// 1 and 3 on the live chain: a payment of the losing branch vanishes, one
// of the winning branch appears, the filter headers above the fork are
// asked again.
func TestCFSyncFollowsReorgs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 4)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 10, 2, 7)
	_, tip, _ := h.Node().BestBlock()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	n := startCFNode(t, t.TempDir(), w, h.Node().P2PAddr())
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	for _, depth := range []int{1, 3} {
		orphan, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(300_000, scripts[0])})
		require.NoError(t, err)
		winner, err := h.DoubleSpend(orphan, []*wire.TxOut{wire.NewTxOut(250_000, scripts[1])})
		require.NoError(t, err)
		res, err := h.Reorg(context.Background(), depth, testnet.ReorgOptions{
			OrphanTxs: []*wire.MsgTx{orphan}, WinnerTxs: []*wire.MsgTx{winner},
		})
		require.NoError(t, err)
		waitSynced(t, n, res.TipHeight)
		waitFor(t, func() bool { return n.Status().WatcherHash == *res.New[len(res.New)-1] })
		got := w.Txs()
		require.NotContains(t, got, orphan.TxHash(), "depth %d: the orphaned payment is gone", depth)
		require.Contains(t, got, winner.TxHash(), "depth %d: the winning payment is in", depth)
		require.Equal(t, res.ForkHeight+1, got[winner.TxHash()].Height)
		truth.txs[winner.TxHash()] = res.ForkHeight + 1
		for i, out := range winner.TxOut {
			if string(out.PkScript) == string(scripts[1]) {
				truth.coins[wire.OutPoint{Hash: winner.TxHash(), Index: uint32(i)}] = out.Value
			}
		}
	}
	checkTruth(t, w, truth)
	require.Positive(t, n.Status().Reorgs)
}

// TestCFSyncAuto syncs under ProtocolAuto from a btcd that serves both
// bloom and compact filters: the user's choice (Prefer) decides, and
// either way the watcher ends equal to the truth.
func TestCFSyncAuto(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 30, 3, 5)
	_, tip, _ := h.Node().BestBlock()
	for _, prefer := range []spv.Protocol{spv.ProtocolBIP158, spv.ProtocolBIP37} {
		t.Run(string(prefer), func(t *testing.T) {
			w := watchtest.NewMemWatcher(start+1, scripts...)
			n := startNodeWith(t, spv.Config{
				Network: regtest(t), DataDir: t.TempDir(), Connect: []string{h.Node().P2PAddr()}, Watcher: w, Log: testLogger(),
				Protocol: spv.ProtocolAuto, Prefer: prefer,
				Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second},
			})
			waitSynced(t, n, tip)
			checkTruth(t, w, truth)
			st := n.Status()
			require.Equal(t, prefer, st.Protocol)
			if prefer == spv.ProtocolBIP158 {
				require.Zero(t, st.Filter.Loads)
				require.Positive(t, st.CF.Blocks)
			} else {
				require.Positive(t, st.Filter.Loads)
				require.Zero(t, st.CF.Filters)
			}
		})
	}
}

// TestCFSyncPastACheckpoint syncs over BIP158 from a real btcd whose chain
// passes a filter-header checkpoint (every 1,000 blocks): the node asks
// getcfcheckpt, and btcd's answer must reach it (btcd's peer package
// declares a cfcheckpt listener it never calls), or the sync waits on the
// checkpoint forever.
func TestCFSyncPastACheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	_, height, err := h.Node().BestBlock()
	require.NoError(t, err)
	if need := 1010 - int(height); need > 0 {
		_, err := h.Mine(need)
		require.NoError(t, err)
	}
	scripts := keyScripts(t, k, 4)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	truth := buildChain(t, h, k, scripts, 10, 2, 1)
	_, tip, _ := h.Node().BestBlock()
	require.Greater(t, tip, int32(wire.CFCheckptInterval))

	w := watchtest.NewMemWatcher(start+1, scripts...)
	n := startCFNode(t, t.TempDir(), w, h.Node().P2PAddr())
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	st := n.Status().CF
	require.GreaterOrEqual(t, st.FilterHeaders, int(tip)+1)
	require.Eventually(t, func() bool { return n.Status().CF.Checkpoints == int(tip)/wire.CFCheckptInterval },
		30*time.Second, 50*time.Millisecond, "btcd's cfcheckpt answer never reached the node")
}
