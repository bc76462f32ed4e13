package spv

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestSideBranchThatWinsIsNeverScored: a peer still on a competing tip
// serves a side branch (as much work as ours), which later becomes the
// best chain: it is never scored. A peer that serves branch after branch
// that never wins is scored once its branches hold more than its share
// (a quarter of MaxSideHeaders) and for each branch the bound evicts.
func TestSideBranchThatWinsIsNeverScored(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{Tuning: Tuning{MaxSideHeaders: 16}}) // share 4
	net := n.cfg.Network
	noTxs := func(int) []*wire.MsgTx { return nil }
	chain := mineBlocks(t, net, genesis(n), 10, noTxs)
	honest := addSimPeer(t, m, "sim:1", chain, 0)
	honest.run()
	require.Equal(t, int32(10), m.synced.Height, "synced to %d", m.synced.Height)
	// The competitor's branch: 3 blocks from 7, as much work as ours.
	rival := append(append([]*wire.MsgBlock(nil), chain[:7]...), mineBlocks(t, net, &chain[6].Header, 3, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(200+i), 9, p2wpkh(0x66))}
	})...)
	competitor := addSimPeer(t, m, "sim:2", rival, 1)
	competitor.run()
	announce := func(s *simServer, b *wire.MsgBlock) {
		inv := wire.NewMsgInv()
		h := b.BlockHash()
		_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
		s.deliver(inv)
		for len(honest.queue)+len(s.queue) > 0 {
			honest.run()
			s.run()
		}
	}
	announce(competitor, rival[9])
	got := n.store.SideHeaders()
	require.Equal(t, 3, got, "%d side headers, %d side tips of the competitor", got, len(competitor.ps.sideTips))
	require.Len(t, competitor.ps.sideTips, 1, "%d side headers, %d side tips of the competitor", got, len(competitor.ps.sideTips))
	// Its branch grows and wins.
	rival = append(rival, mineBlocks(t, net, &rival[9].Header, 1, noTxs)...)
	competitor.setChain(rival)
	tip := rival[10].BlockHash()
	announce(competitor, rival[10])
	require.True(t, n.store.IsBest(tip), "the winning branch was not followed: synced %d %v", m.synced.Height, m.synced.Hash)
	require.Equal(t, tip, m.synced.Hash, "the winning branch was not followed: synced %d %v", m.synced.Height, m.synced.Hash)
	score := n.bans.Score(competitor.ps.addr)
	require.Equal(t, uint32(0), score, "the peer whose branch won was scored %d (tips %d)", score, len(competitor.ps.sideTips))
	require.Len(t, competitor.ps.sideTips, 0, "the peer whose branch won was scored %d (tips %d)", score, len(competitor.ps.sideTips))

	// A flooder: branches of 3 from ever lower forks, none ever best.
	flooder := addSimPeer(t, m, "sim:3", rival, 2)
	flooder.run()
	for i := range 6 {
		fork := rival[9-i]
		branch := mineBlocks(t, net, &fork.Header, 3, func(j int) []*wire.MsgTx {
			return []*wire.MsgTx{payTo(byte(100+10*i+j), 9, p2wpkh(0x67))}
		})
		msg := wire.NewMsgHeaders()
		for _, b := range branch {
			_ = msg.AddBlockHeader(&b.Header)
		}
		flooder.deliver(msg)
		flooder.run()
	}
	score = n.bans.Score(flooder.ps.addr)
	require.NotEqual(t, uint32(0), score, "a peer flooding side branches that never win was not scored")
	side := n.store.SideHeaders()
	require.LessOrEqual(t, side, 16, "%d side headers, bound 16", side)
	for _, p := range []*simServer{honest, competitor} {
		score := n.bans.Score(p.ps.addr)
		require.Equal(t, uint32(0), score, "honest peer %s scored %d", p.ps.addr, score)
	}
	t.Logf("flooder scored %d, %d side headers", n.bans.Score(flooder.ps.addr), n.store.SideHeaders())
}

// TestDeepReorgLongerThanOneHeadersMessage: a reorg whose branch forks
// more than 2,000 blocks down (inside the side-branch margin) arrives in
// two headers messages; the second getheaders must ask from the end of
// the first (as Core does), not from our tip, which got the same 2,000
// headers again forever.
func TestDeepReorgLongerThanOneHeadersMessage(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	net := n.cfg.Network
	noTxs := func(int) []*wire.MsgTx { return nil }
	chain := mineBlocks(t, net, genesis(n), 2100, noTxs)
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	require.Equal(t, int32(2100), m.synced.Height, "synced to %d", m.synced.Height)
	// 2,011 blocks from height 90: one more than ours.
	branch := append(append([]*wire.MsgBlock(nil), chain[:90]...), mineBlocks(t, net, &chain[89].Header, 2011, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 9, p2wpkh(0x68))}
	})...)
	s.setChain(branch)
	tip := branch[len(branch)-1].BlockHash()
	inv := wire.NewMsgInv()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &tip))
	s.deliver(inv)
	for len(s.queue) > 0 {
		got := s.count(wire.CmdGetHeaders)
		require.LessOrEqual(t, got, 20, "%d getheaders: the same headers asked again and again", got)
		s.runOne()
	}
	require.True(t, n.store.IsBest(tip), "the deep reorg was not followed: synced %d", m.synced.Height)
	require.Equal(t, tip, m.synced.Hash, "the deep reorg was not followed: synced %d", m.synced.Height)
}
