package spv_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// hiddenTip is the scenario of a lying download peer that relays the tip
// block first and hides the wallet's payment in it while the honest peer
// is one block behind: btcd mines the payment's block; the liar (hostile
// OmitMatchedTx over that btcd) serves it; the honest peer is a second
// btcd that was synced to the block before and then disconnected.
type hiddenTip struct {
	h      *testnet.Harness
	honest *testnet.Node
	liar   *hostile.Peer
	w      *watchtest.MemWatcher
	pay    chainhash.Hash // the payment the liar hides
	tip    int32
}

// newHiddenTip builds the scenario: the wallet's only payment is in the
// tip block, which the honest btcd lacks.
func newHiddenTip(t *testing.T) *hiddenTip {
	t.Helper()
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 2)
	// a fresh tip: btcd serves headers
	_, err := h.Mine(2)
	require.NoError(t, err)
	_, start, _ := h.Node().BestBlock()
	honest, err := testnet.StartNode(t.Context(), testnet.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = honest.Stop() })
	require.NoError(t, honest.ConnectToCtx(t.Context(), h.Node()))
	require.NoError(t, honest.DisconnectFromCtx(t.Context(), h.Node()))
	tx, err := h.Pay([]*wire.TxOut{wire.NewTxOut(5_010, scripts[1])})
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	_, tip, _ := h.Node().BestBlock()
	_, honestTip, _ := honest.BestBlock()
	require.Equal(t, tip-1, honestTip, "the honest peer is one block behind")
	liar, err := hostile.Start(context.Background(), hostile.Config{
		Upstream: h.Node().RPC(), Params: h.Params(), Scenario: hostile.OmitMatchedTx,
	})
	require.NoError(t, err)
	t.Cleanup(func() { liar.Close() })
	return &hiddenTip{h: h, honest: honest, liar: liar, w: watchtest.NewMemWatcher(start+1, scripts...), pay: tx.TxHash(), tip: tip}
}

// config is the node's configuration: the liar listed first, so that it
// serves the download, every block checked, a check waiting long enough
// for the honest peer to get the block on a loaded machine.
func (s *hiddenTip) config(t *testing.T, dir string) spv.Config {
	cfg := hostileFirst(t, s.liar, hostile.OmitMatchedTx, s.honest.P2PAddr(), s.w, dir)
	cfg.SpotCheckEvery, cfg.Tuning.CheckWait = 1, 2*time.Minute
	return cfg
}

// waitAwaiting waits until the watcher applied the liar's tip block, and
// checks that the node is at the tip, not synced, one block awaiting its
// check.
func (s *hiddenTip) waitAwaiting(t *testing.T, n *spv.Node) {
	t.Helper()
	require.Eventually(t, func() bool {
		st := n.Status()
		return st.WatcherHeight == s.tip && st.AtTip
	}, 2*time.Minute, 20*time.Millisecond, "the liar's tip block applied")
	st := n.Status()
	require.NotContains(t, s.w.Txs(), s.pay, "the liar hid the payment")
	require.False(t, st.Synced, "synced with block %d unchecked: %+v", s.tip, st)
	require.Equal(t, 1, st.AwaitingCheck)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, n.WaitSynced(ctx), context.DeadlineExceeded)
}

// requireCaught checks that the liar is banned, the honest btcd not, and
// the wallet holds the payment.
func (s *hiddenTip) requireCaught(t *testing.T, n *spv.Node) {
	t.Helper()
	waitSynced(t, n, s.tip)
	banned := map[string]bool{}
	for _, b := range n.Bans() {
		banned[b.Addr] = true
	}
	require.True(t, banned[s.liar.Addr()], "the liar is banned: %+v", n.Bans())
	require.False(t, banned[s.honest.P2PAddr()])
	require.Contains(t, s.w.Txs(), s.pay, "the hidden payment is in the wallet")
	require.Equal(t, int64(5_010), s.w.Balance())
}

func TestHiddenTipPaymentIsNotSynced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	s := newHiddenTip(t)
	n := startNodeWith(t, s.config(t, t.TempDir()))
	s.waitAwaiting(t, n)
	// The honest btcd gets the block and announces it: the check runs.
	require.NoError(t, s.honest.ConnectToCtx(t.Context(), s.h.Node()))
	s.requireCaught(t, n)
}

func TestHiddenTipCheckResumesAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	s := newHiddenTip(t)
	dir := t.TempDir()
	cfg := s.config(t, dir)
	n, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n.Start(t.Context()))
	s.waitAwaiting(t, n)
	require.NoError(t, n.Stop())
	_, err = os.Stat(filepath.Join(dir, "checks.json"))
	require.NoError(t, err, "the unfinished check is recorded")
	// While the node is down the honest btcd gets the block; the next
	// run checks the block against it.
	require.NoError(t, s.honest.ConnectToCtx(t.Context(), s.h.Node()))
	n2 := startNodeWith(t, cfg)
	s.requireCaught(t, n2)
}
