package spv

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// pendingSpend is a small transaction spending outpoint (i, 0).
func pendingSpend(i int) *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{byte(i), byte(i >> 8), 1}, Index: 0}, nil, nil))
	tx.AddTxOut(wire.NewTxOut(10_000, p2wpkh(byte(i))))
	return tx
}

// TestRebroadcastSetBounds drives the pending set with a clock of its
// own (the times it is given): it holds at most maxRebroadcastTxs
// transactions and maxRebroadcastBytes bytes, the reservation of one not
// sent is let go, a transaction is due at most once per block and once
// per minRebroadcastInterval, leaves at its confirmation or at a block
// spending one of its inputs (as soon as it is seen, before its
// broadcast is over too), and after maxRebroadcastBlocks blocks.
func TestRebroadcastSetBounds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newRebroadcastSet()
	for i := range maxRebroadcastTxs {
		created, err := s.reserve(pendingSpend(i), 0, "")
		require.NoError(t, err)
		require.True(t, created)
		require.True(t, s.settle(pendingSpend(i).TxHash(), true, true, "127.0.0.1:1", 10, t0))
	}
	_, err := s.reserve(pendingSpend(maxRebroadcastTxs), 0, "")
	require.ErrorIs(t, err, errRebroadcastFull, "one more than maxRebroadcastTxs")
	// Held already: not a new entry, and it stays.
	created, err := s.reserve(pendingSpend(3), 0, "")
	require.NoError(t, err)
	require.False(t, created)
	require.True(t, s.settle(pendingSpend(3).TxHash(), false, false, "", 10, t0))
	require.Len(t, s.snapshot(), maxRebroadcastTxs)

	// The byte bound: one transaction over it is refused in an empty set.
	s = newRebroadcastSet()
	big := pendingSpend(1)
	big.AddTxOut(wire.NewTxOut(0, make([]byte, maxRebroadcastBytes)))
	_, err = s.reserve(big, 0, "")
	require.ErrorIs(t, err, errRebroadcastFull, "a transaction of more than maxRebroadcastBytes")
	require.Zero(t, s.bytes)

	// A reservation whose broadcast sent nothing is let go.
	tx := pendingSpend(1)
	txid := tx.TxHash()
	created, err = s.reserve(tx, 5, "")
	require.NoError(t, err)
	require.True(t, created)
	require.False(t, s.settle(txid, true, false, "", 10, t0))
	require.Zero(t, s.len())
	require.Zero(t, s.bytes)

	// Once per block, no more often than the interval.
	_, err = s.reserve(tx, 5, "")
	require.NoError(t, err)
	require.True(t, s.settle(txid, true, true, "127.0.0.1:1", 10, t0))
	jobs, _ := s.due(10, t0.Add(time.Hour))
	require.Empty(t, jobs, "due at the block of its broadcast")
	jobs, _ = s.due(11, t0.Add(minRebroadcastInterval-time.Second))
	require.Empty(t, jobs, "due before minRebroadcastInterval")
	jobs, _ = s.due(11, t0.Add(minRebroadcastInterval))
	require.Len(t, jobs, 1)
	require.Equal(t, rebroadcastJob{tx: tx, txid: txid, need: 5, lastPeer: "127.0.0.1:1"}, jobs[0])
	require.Equal(t, 1, s.sent(txid, "127.0.0.1:2", 11, t0.Add(minRebroadcastInterval)))
	jobs, _ = s.due(11, t0.Add(time.Hour))
	require.Empty(t, jobs, "due twice at one block")
	jobs, _ = s.due(12, t0.Add(time.Hour))
	require.Len(t, jobs, 1)
	require.Equal(t, "127.0.0.1:2", jobs[0].lastPeer)
	require.Equal(t, []PendingRebroadcast{{Txid: txid, Attempts: 1, LastHeight: 11, LastPeer: "127.0.0.1:2"}}, s.snapshot())

	// maxRebroadcastBlocks blocks after the broadcast, it leaves.
	jobs, drops := s.due(10+maxRebroadcastBlocks, t0.Add(time.Hour))
	require.Len(t, jobs, 1)
	require.Empty(t, drops)
	jobs, drops = s.due(10+maxRebroadcastBlocks+1, t0.Add(time.Hour))
	require.Empty(t, jobs)
	require.Len(t, drops, 1)
	require.Zero(t, s.len())

	// Confirmed: leaves; a mempool sighting does not count.
	_, _ = s.reserve(tx, 0, "")
	s.settle(txid, true, true, "", 10, t0)
	require.Empty(t, s.observe(MatchedTx{Txid: txid, Height: -1, Tx: tx}))
	drops = s.observe(MatchedTx{Txid: txid, Height: 11, Tx: tx})
	require.Equal(t, []RebroadcastDrop{{Txid: txid, Reason: "confirmed at height 11"}}, drops)
	require.Zero(t, s.len())

	// Conflicted: another transaction of a block spends its input.
	_, _ = s.reserve(tx, 0, "")
	s.settle(txid, true, true, "", 10, t0)
	other := pendingSpend(1)
	other.TxOut[0].Value = 9_000
	drops = s.observe(MatchedTx{Txid: other.TxHash(), Height: 11, Tx: other})
	require.Len(t, drops, 1)
	require.Contains(t, drops[0].Reason, "conflicted")
	require.Zero(t, s.len())

	// Confirmed while its broadcast still waits: not held after it.
	_, _ = s.reserve(tx, 0, "")
	require.Empty(t, s.observe(MatchedTx{Txid: txid, Height: 11, Tx: tx}))
	require.False(t, s.settle(txid, true, true, "", 11, t0))
	require.Zero(t, s.len())
	require.Zero(t, s.bytes)
}

// keptByTarget is a transaction broadcast to a target that keeps it to
// itself: btcd A mines, B is A's peer, C is cut off from both. The
// node's filter peers are A and B; C, the only address no filter peer
// uses, is the broadcast's target: it takes the transaction and has no
// peer to relay it to, so the broadcast is sent, unconfirmed, and held
// for rebroadcast.
type keptByTarget struct {
	h      *testnet.Harness
	a, c   *testnet.Node
	n      *Node
	sub    *Subscription
	tx     *wire.MsgTx
	script []byte
	// tip is the chain's height at the broadcast.
	tip int32
}

// broadcastKeptByTarget sets up keptByTarget and broadcasts its
// transaction.
func broadcastKeptByTarget(ctx context.Context, t *testing.T) *keptByTarget {
	t.Helper()
	h := testnet.NewT(t, testnet.Options{})
	a := h.Node()
	b, err := h.StartPeer(ctx)
	require.NoError(t, err)
	c, err := h.StartPeer(ctx)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	for _, p := range []*testnet.Node{b, c} {
		require.NoError(t, p.WaitSynced(ctx, a))
	}
	require.NoError(t, c.DisconnectFromCtx(ctx, a))
	k, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	script, err := k.PkScript(testnet.PurposeBIP84, 0, 0)
	require.NoError(t, err)
	tx, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(250_000, script)})
	require.NoError(t, err)
	txid := tx.TxHash()

	_, tip, err := a.BestBlock()
	require.NoError(t, err)
	nw, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n, err := New(Config{Network: nw, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(tip+1, script),
		Connect: []string{a.P2PAddr(), b.P2PAddr(), c.P2PAddr()}, MaxPeers: 2, Tuning: Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second},
	})
	require.NoError(t, err)
	// Regtest's blocks come within a second of each other.
	n.rebc.minInterval = 0
	require.NoError(t, n.Start(ctx))
	t.Cleanup(func() { require.NoError(t, n.Stop()) })
	sub := n.Subscribe()
	t.Cleanup(sub.Cancel)
	for len(n.Peers()) < 2 {
		select {
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("filter peers: %v", n.Peers()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.NoError(t, n.WaitSynced(ctx))

	// The broadcast to C: its wait for a relay back is ended once C
	// holds the transaction (nothing will relay it).
	bctx, bcancel := context.WithCancel(ctx)
	defer bcancel()
	type result struct {
		res *BroadcastResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := n.Broadcast(bctx, tx, BroadcastOptions{})
		done <- result{res, err}
	}()
	waitMempool(ctx, t, c, txid)
	bcancel()
	r := <-done
	require.ErrorIs(t, r.err, ErrBroadcastUnconfirmed)
	require.Equal(t, c.P2PAddr(), r.res.SentTo)
	require.True(t, r.res.Rebroadcast, "sent, unconfirmed: held for rebroadcast")
	require.Equal(t, []PendingRebroadcast{{Txid: txid, LastHeight: tip, LastPeer: c.P2PAddr()}}, n.Status().Rebroadcasts)
	require.False(t, inMempool(t, a, txid), "A has the transaction C kept")
	return &keptByTarget{h: h, a: a, c: c, n: n, sub: sub, tx: tx, script: script, tip: tip}
}

// TestRebroadcastUntilConfirmed broadcasts a transaction its target
// keeps to itself (keptByTarget). The next block A mines lacks it: the
// node sends it again, to another target than C, which relays it to A;
// A's next block confirms it, the node drops it as confirmed, and the
// block after that sends nothing. Without the rebroadcast the
// transaction never leaves C and no block confirms it.
func TestRebroadcastUntilConfirmed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three btcd")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	k := broadcastKeptByTarget(ctx, t)
	h, a, c, n, sub, tip, txid := k.h, k.a, k.c, k.n, k.sub, k.tip, k.tx.TxHash()

	// The next block lacks it: sent again, not to C.
	_, err := h.Mine(1)
	require.NoError(t, err)
	pass := waitPass(t, sub, tip+1)
	t.Logf("pass at %d: %+v", pass.Height, pass)
	require.Len(t, pass.Sent, 1, "rebroadcasts at the block without it: %+v", pass)
	require.Equal(t, txid, pass.Sent[0].Txid)
	require.Empty(t, pass.Sent[0].Err)
	require.NotEqual(t, c.P2PAddr(), pass.Sent[0].Peer, "sent again to the target that kept it")
	waitMempool(ctx, t, a, txid)

	// A's next block confirms it: dropped, and the block after sends
	// nothing.
	_, err = h.Mine(1)
	require.NoError(t, err)
	pass = waitPass(t, sub, tip+2)
	require.Empty(t, pass.Sent, "rebroadcasts at the confirming block")
	require.Equal(t, []RebroadcastDrop{{Txid: txid, Reason: fmt.Sprintf("confirmed at height %d", tip+2)}}, pass.Dropped)
	require.Zero(t, pass.Pending)
	_, err = h.Mine(1)
	require.NoError(t, err)
	pass = waitPass(t, sub, tip+3)
	require.Empty(t, pass.Sent, "rebroadcasts after the first confirmation")
	require.Empty(t, n.Status().Rebroadcasts)
}

// TestRebroadcastStopsAtConflict broadcasts a transaction its target
// keeps to itself (keptByTarget), then A mines a block holding another
// spend of its inputs (paying the watched script, so the filter shows
// it): the node drops the transaction as conflicted at that block and
// sends nothing, then or after.
func TestRebroadcastStopsAtConflict(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three btcd")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	k := broadcastKeptByTarget(ctx, t)
	conflict, err := k.h.DoubleSpend(k.tx, []*wire.TxOut{wire.NewTxOut(240_000, k.script)})
	require.NoError(t, err)
	require.NoError(t, k.h.Broadcast(conflict))
	_, err = k.h.Mine(1)
	require.NoError(t, err)
	pass := waitPass(t, k.sub, k.tip+1)
	require.Empty(t, pass.Sent, "rebroadcasts at the block holding a conflict")
	require.Len(t, pass.Dropped, 1)
	require.Equal(t, k.tx.TxHash(), pass.Dropped[0].Txid)
	require.Contains(t, pass.Dropped[0].Reason, "conflicted: "+conflict.TxHash().String())
	_, err = k.h.Mine(1)
	require.NoError(t, err)
	pass = waitPass(t, k.sub, k.tip+2)
	require.Empty(t, pass.Sent, "rebroadcasts after the conflict")
	require.Empty(t, k.n.Status().Rebroadcasts)
}

// waitPass returns the RebroadcastPass of the block at height. A pass
// may wait for each rebroadcast's relay back up to rebroadcastTimeout:
// the bound is that and waitBound.
func waitPass(t *testing.T, sub *Subscription, height int32) RebroadcastPass {
	t.Helper()
	deadline := time.After(rebroadcastTimeout + waitBound)
	for {
		select {
		case ev, ok := <-sub.Events():
			require.True(t, ok, "the events ended without the rebroadcast pass at %d", height)
			if p, ok := ev.(RebroadcastPass); ok && p.Height == height {
				return p
			}
		case <-deadline:
			require.FailNow(t, fmt.Sprintf("no rebroadcast pass at %d within %v", height, rebroadcastTimeout+waitBound))
		}
	}
}

// inMempool reports whether txid is in n's mempool.
func inMempool(t *testing.T, n *testnet.Node, txid chainhash.Hash) bool {
	t.Helper()
	pool, err := n.RPC().GetRawMempool()
	require.NoError(t, err)
	return slices.ContainsFunc(pool, func(h *chainhash.Hash) bool { return *h == txid })
}

// waitMempool waits until txid is in n's mempool, failing at ctx's end.
func waitMempool(ctx context.Context, t *testing.T, n *testnet.Node, txid chainhash.Hash) {
	t.Helper()
	for !inMempool(t, n, txid) {
		select {
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("%v never reached %s's mempool: %v", txid, n.P2PAddr(), ctx.Err()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}
