package spv_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// startCFNode starts a node syncing w over BIP158 from peers.
func startCFNode(t testing.TB, dir string, w *watchtest.MemWatcher, peers ...string) *spv.Node {
	t.Helper()
	return startNodeWith(t, spv.Config{
		Network: regtest(t), DataDir: dir, Connect: peers, Watcher: w, Log: testLogger(),
		RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second,
		Protocol: spv.ProtocolBIP158,
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
