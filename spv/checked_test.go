package spv

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// The verdicts of a check that holds "synced" back: a lying download
// peer serves the tip block first and hides the wallet's payment in it
// while the honest peer is one block behind (the honest peer has blocks
// 1-4, the liar 1-5). Until the honest peer has block 5 and answers, the
// node is at the tip and not synced; then the check passes (an honest
// download peer), catches the liar (banned, the payment fetched from the
// honest peer), or, when the honest peer never gets the block, is
// abandoned after Config.CheckWait.

// tipChain is the chain of the tests below: 5 blocks, block i paying the
// watcher (script p2wpkh(1)) 1000+i.
func tipChain(t *testing.T, n *Node) []*wire.MsgBlock {
	return mineBlocks(t, n.cfg.Network, genesis(n), 5, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), int64(1000+i), p2wpkh(1))}
	})
}

// tipTotal is the watcher's balance once it holds every payment of
// tipChain; tipHidden once it lacks block 5's.
const (
	tipTotal  = 1000 + 1001 + 1002 + 1003 + 1004
	tipHidden = tipTotal - 1004
)

// hideIn makes s hide every matched transaction of block hash behind a
// valid proof.
func hideIn(s *simServer, hash chainhash.Hash) {
	s.tamper = func(mb *wire.MsgMerkleBlock, txs []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
		if mb.Header.BlockHash() != hash {
			return mb, txs
		}
		return bip37.BuildMerkleBlock(s.blocks[hash], func(int, *wire.MsgTx) bool { return false }), nil
	}
}

// announce makes s serve chain and announce its tip (an inv).
func announce(s *simServer, chain []*wire.MsgBlock) {
	s.setChain(chain)
	inv := wire.NewMsgInv()
	h := chain[len(chain)-1].BlockHash()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
	s.deliver(inv)
}

// requireAwaiting checks the state "at the tip, 1 block awaiting a
// check", in the manager and in the published Status.
func requireAwaiting(t *testing.T, n *Node, m *manager) {
	t.Helper()
	m.publishStatus()
	st := n.Status()
	require.Equal(t, int32(5), st.WatcherHeight)
	require.True(t, st.AtTip, "at the tip")
	require.Equal(t, 1, st.AwaitingCheck, "blocks awaiting a check")
	require.False(t, st.Synced, "synced while block 5 awaits its check")
	require.Error(t, n.WaitSynced(expired(t)), "WaitSynced returns while a check waits")
}

// expired returns a context that is already done.
func expired(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

// readChecksFile returns the heights checks.json in dir records.
func readChecksFile(t *testing.T, dir string) []int32 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, checksFile))
	require.NoError(t, err)
	var st checksState
	require.NoError(t, json.Unmarshal(raw, &st))
	var hs []int32
	for _, b := range st.Blocks {
		hs = append(hs, b.Height)
	}
	return hs
}

func TestSyncedMeansChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lie: the download peer hides block 5's payment; arrives: the
		// honest peer gets block 5 (else the check is abandoned).
		lie, arrives bool
	}{
		{"passed", false, true},
		{"caught", true, true},
		{"abandoned", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watchtest.NewMemWatcher(1, p2wpkh(1))
			clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
			n, m := newTestManager(t, w, Config{SpotCheckEvery: 1, clock: clk})
			sub := n.Subscribe()
			defer sub.Cancel()
			chain := tipChain(t, n)
			dl := addSimPeer(t, m, "a:1", chain, 0)
			if tc.lie {
				hideIn(dl, chain[4].BlockHash())
			}
			honest := addSimPeer(t, m, "b:1", chain[:4], 1)
			runAll(dl, honest)

			// Pending: the payment hidden or not, nothing is known of
			// block 5 but what one peer said.
			requireAwaiting(t, n, m)
			// The first says 5 (blocks 1-4's checks were still out when
			// block 5 came); the last, block 5's alone.
			aw := waitEvent(t, sub, "ChecksAwaited of 1 block", func(e Event) bool { a, ok := e.(ChecksAwaited); return ok && a.Blocks == 1 }).(ChecksAwaited)
			require.Equal(t, ChecksAwaited{At: aw.At, Height: 5, Hash: chain[4].BlockHash(), Blocks: 1}, aw)
			require.Equal(t, []int32{5}, readChecksFile(t, n.cfg.DataDir), "the waiting check is recorded")

			if tc.arrives {
				announce(honest, chain)
				runAll(honest, dl)
			} else {
				clk.now = clk.now.Add(n.cfg.Tuning.CheckWait + time.Second)
				m.handle(tickMsg{now: clk.now})
			}
			m.publishStatus()
			st := n.Status()
			require.True(t, st.Synced, "synced once the check is over: %+v", st)
			require.Zero(t, st.AwaitingCheck)
			require.NoError(t, n.WaitSynced(expired(t)))
			require.Empty(t, readChecksFile(t, n.cfg.DataDir), "nothing left to check")
			_, banned := n.bans.IsBanned("a:1")
			switch {
			case !tc.lie:
				require.Equal(t, int64(tipTotal), w.Balance())
				require.False(t, banned)
				require.Zero(t, st.Omissions)
			case tc.arrives:
				require.Equal(t, int64(tipTotal), w.Balance(), "the hidden payment is fetched from the honest peer")
				require.True(t, banned, "the liar is banned")
				require.Equal(t, 1, st.Omissions)
			default:
				require.Equal(t, int64(tipHidden), w.Balance(), "nobody showed the payment")
				require.Equal(t, 1, st.ChecksAbandoned)
				u := waitEvent(t, sub, "BlockUnchecked", func(e Event) bool { _, ok := e.(BlockUnchecked); return ok }).(BlockUnchecked)
				require.True(t, u.Abandoned)
				require.Equal(t, int32(5), u.Height)
			}
			if tc.arrives {
				waitEvent(t, sub, "SyncDone at 5", func(e Event) bool { d, ok := e.(SyncDone); return ok && d.Height == 5 })
			}
		})
	}
}

func TestUnfinishedCheckResumesAfterRestart(t *testing.T) {
	// The node stops while block 5's check waits for the honest peer.
	// The check is in checks.json; the next start rolls the watcher back
	// to 4 and fetches block 5 again with a second-peer check whatever
	// SpotCheckEvery draws (here: never): the liar hides the payment
	// again, the honest peer (which has block 5 now) shows it, and the
	// liar is banned.
	dir := t.TempDir()
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{DataDir: dir, SpotCheckEvery: 1})
	chain := tipChain(t, n)
	dl := addSimPeer(t, m, "a:1", chain, 0)
	hideIn(dl, chain[4].BlockHash())
	honest := addSimPeer(t, m, "b:1", chain[:4], 1)
	runAll(dl, honest)
	requireAwaiting(t, n, m)
	require.Equal(t, int64(tipHidden), w.Balance())
	n.m = m // Stop saves what the manager left unfinished
	require.NoError(t, n.Stop())
	require.Equal(t, []int32{5}, readChecksFile(t, dir))

	n2, m2 := newTestManager(t, w, Config{DataDir: dir, SpotCheckEvery: -1})
	require.Equal(t, int32(4), m2.synced.Height, "rolled back below the unfinished check")
	require.Equal(t, 1, m2.awaitingChecks())
	dl2 := addSimPeer(t, m2, "a:1", chain, 0)
	hideIn(dl2, chain[4].BlockHash())
	honest2 := addSimPeer(t, m2, "b:1", chain, 1)
	runAll(dl2, honest2)
	m2.publishStatus()
	st := n2.Status()
	_, banned := n2.bans.IsBanned("a:1")
	require.True(t, banned, "the liar is caught after the restart")
	require.Equal(t, 1, st.Omissions)
	require.Equal(t, int64(tipTotal), w.Balance())
	require.True(t, st.Synced)
	require.Empty(t, readChecksFile(t, dir))
}

func TestUnfinishedCheckWithoutSecondPeerIsAbandoned(t *testing.T) {
	// After a restart with only the download peer connected, the
	// recorded check cannot run: the block is unchecked and the check
	// counts as abandoned (an --until-synced sync fails on it), not as a
	// block that was never awaited.
	dir := t.TempDir()
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{DataDir: dir, SpotCheckEvery: 1})
	chain := tipChain(t, n)
	dl := addSimPeer(t, m, "a:1", chain, 0)
	honest := addSimPeer(t, m, "b:1", chain[:4], 1)
	runAll(dl, honest)
	requireAwaiting(t, n, m)
	n.m = m
	require.NoError(t, n.Stop())

	n2, m2 := newTestManager(t, w, Config{DataDir: dir, SpotCheckEvery: -1})
	sub := n2.Subscribe()
	defer sub.Cancel()
	dl2 := addSimPeer(t, m2, "a:1", chain, 0)
	runAll(dl2)
	u := waitEvent(t, sub, "BlockUnchecked", func(e Event) bool { _, ok := e.(BlockUnchecked); return ok }).(BlockUnchecked)
	require.True(t, u.Abandoned)
	require.Equal(t, int32(5), u.Height)
	m2.publishStatus()
	require.True(t, n2.Status().Synced)
	require.Empty(t, readChecksFile(t, dir))
}

func TestCorruptChecksFileRefusesToStart(t *testing.T) {
	// A checks.json that does not parse is not overwritten: the node
	// refuses to start with one line naming the file.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, checksFile), []byte("{not json"), 0o600))
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n, err := New(Config{Network: net, DataDir: dir, Watcher: w, Connect: []string{"127.0.0.1:1"}})
	require.NoError(t, err)
	defer n.Stop()
	err = n.Start(t.Context())
	require.ErrorIs(t, err, ErrCorruptChecks)
	require.NotContains(t, err.Error(), "\n")
	raw, rerr := os.ReadFile(filepath.Join(dir, checksFile))
	require.NoError(t, rerr)
	require.Equal(t, "{not json", string(raw))
}

func TestUnfinishedCheckOfAReorgedBlockIsDropped(t *testing.T) {
	// A recorded check whose block is not on the best chain (a reorg
	// replaced it while the node was down) is dropped at start: nothing
	// rolled back, nothing awaited, and the record is rewritten without
	// it at the next change.
	dir := t.TempDir()
	require.NoError(t, writeState(filepath.Join(dir, checksFile), "checks",
		checksState{Version: checksVersion, Blocks: []uncheckedBlock{{Height: 5, Hash: chainhash.Hash{7}.String()}}}))
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{DataDir: dir, SpotCheckEvery: 1})
	require.Zero(t, m.awaitingChecks())
	chain := tipChain(t, n)
	dl := addSimPeer(t, m, "a:1", chain, 0)
	honest := addSimPeer(t, m, "b:1", chain, 1)
	runAll(dl, honest)
	m.publishStatus()
	require.True(t, n.Status().Synced)
	require.Equal(t, int64(tipTotal), w.Balance())
	require.Empty(t, readChecksFile(t, dir))
}
