package spv

import (
	"fmt"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// syncDones returns the heights of the SyncDone events n published so
// far: it publishes a fence event and reads sub up to it (the queue keeps
// the order), so no timing decides what is counted.
func syncDones(t *testing.T, n *Node, sub *Subscription) []int32 {
	t.Helper()
	const fence = "syncDones fence"
	n.publish(PeerDisconnected{Reason: fence})
	var out []int32
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-sub.Events():
			switch e := e.(type) {
			case SyncDone:
				out = append(out, e.Height)
			case PeerDisconnected:
				if e.Reason == fence {
					return out
				}
			}
		case <-timeout:
			require.FailNow(t, fmt.Sprintf("the fence event never came (SyncDone heights so far %v)", out))
		}
	}
}

func TestSyncDoneOncePerTip(t *testing.T) {
	// A peer announcing the block the node already has makes it ask for
	// headers, and "synced" waits for the answer; the tip did not move,
	// so the node must not say synced again. A new block does.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{SpotCheckEvery: 1})
	sub := n.Subscribe()
	defer sub.Cancel()
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 6, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
	})
	a := addSimPeer(t, m, "sim:1", chain[:5], 0)
	b := addSimPeer(t, m, "sim:2", chain[:5], 1)
	runAll := func() {
		for range 5 {
			a.run()
			b.run()
		}
	}
	runAll()
	for range 3 {
		for _, s := range []*simServer{a, b} {
			tip := chain[4].Header
			hs := wire.NewMsgHeaders()
			_ = hs.AddBlockHeader(&tip)
			s.deliver(hs)
			inv := wire.NewMsgInv()
			h := chain[4].BlockHash()
			_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
			s.deliver(inv)
		}
		runAll()
	}
	got := syncDones(t, n, sub)
	require.Len(t, got, 1, "SyncDone heights %v, want [5]", got)
	require.Equal(t, int32(5), got[0], "SyncDone heights %v, want [5]", got)
	a.setChain(chain)
	b.setChain(chain)
	for _, s := range []*simServer{a, b} {
		inv := wire.NewMsgInv()
		h := chain[5].BlockHash()
		_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
		s.deliver(inv)
	}
	runAll()
	got = syncDones(t, n, sub)
	require.Len(t, got, 1, "after a new block: SyncDone heights %v, want [6]", got)
	require.Equal(t, int32(6), got[0], "after a new block: SyncDone heights %v, want [6]", got)
}
