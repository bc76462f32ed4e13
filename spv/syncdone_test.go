package spv

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// syncDones drains sub's queued events and returns the SyncDone heights.
func syncDones(t *testing.T, sub *Subscription) []int32 {
	t.Helper()
	var out []int32
	for {
		select {
		case e := <-sub.Events():
			if sd, ok := e.(SyncDone); ok {
				out = append(out, sd.Height)
			}
		case <-time.After(200 * time.Millisecond):
			return out
		}
	}
}

func TestSyncDoneOncePerTip(t *testing.T) {
	// A peer announcing the block the node already has makes it ask for
	// headers, and "synced" waits for the answer; the tip did not move,
	// so the node must not say synced again. A new block does.
	w := NewMemWatcher(1, p2wpkh(1))
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
	if got := syncDones(t, sub); len(got) != 1 || got[0] != 5 {
		t.Fatalf("SyncDone heights %v, want [5]", got)
	}
	a.setChain(chain)
	b.setChain(chain)
	for _, s := range []*simServer{a, b} {
		inv := wire.NewMsgInv()
		h := chain[5].BlockHash()
		_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
		s.deliver(inv)
	}
	runAll()
	if got := syncDones(t, sub); len(got) != 1 || got[0] != 6 {
		t.Fatalf("after a new block: SyncDone heights %v, want [6]", got)
	}
}
