package spv

import (
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// The tests in this file drive the getheaders fence (headersync.go): a
// ping after every getheaders whose pong, with no headers before it, means
// the peer gave nothing. They use manager_test.go's simulated server with
// getheaders answered by a policy: as btcd and Core do (every reply, even
// empty), as bcoin does (nothing when nothing is new), or not at all (a
// peer in initial block download).

// headersPolicy decides whether the simulated server sends reply, its
// answer to a getheaders.
type headersPolicy func(reply *wire.MsgHeaders) bool

var (
	// answerAll answers every getheaders, an empty reply included (btcd
	// when current, Core).
	answerAll headersPolicy = func(*wire.MsgHeaders) bool { return true }
	// silentWhenNothingNew sends no headers message when nothing follows
	// the locator (bcoin 1.0.2).
	silentWhenNothingNew headersPolicy = func(r *wire.MsgHeaders) bool { return len(r.Headers) > 0 }
	// neverAnswer ignores getheaders altogether (bcoin and btcd while not
	// synced, old Core in initial block download).
	neverAnswer headersPolicy = func(*wire.MsgHeaders) bool { return false }
)

// serveWith answers the manager's queued messages like simServer.run,
// getheaders by policy.
func serveWith(s *simServer, policy headersPolicy) {
	for len(s.queue) > 0 {
		msg := s.queue[0]
		if gh, ok := msg.(*wire.MsgGetHeaders); ok {
			s.queue = s.queue[1:]
			if reply := s.headersAfter(gh.BlockLocatorHashes); policy(reply) {
				s.deliver(reply)
			}
			continue
		}
		serveOne(s, msg)
	}
}

// count returns how many messages of cmd the manager sent the peer.
func (s *simServer) count(cmd string) int {
	n := 0
	for _, m := range s.sent {
		if m.Command() == cmd {
			n++
		}
	}
	return n
}

// claim makes the simulated peer announce height h, as its version
// message's start height would.
func (s *simServer) claim(h int32) { s.ps.p.UpdateLastBlockHeight(h) }

// newFenceManager returns a node and manager on dir with a settable
// clock.
func newFenceManager(t *testing.T, w watch.Watcher, dir string, clk *fakeClock) (*Node, *manager) {
	t.Helper()
	n, err := New(Config{Network: regtestNet(t), DataDir: dir, Watcher: w, SpotCheckEvery: -1, clock: clk})
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Stop() })
	m, err := newManager(n)
	require.NoError(t, err)
	return n, m
}

// regtestNet returns the regtest network.
func regtestNet(t *testing.T) *netparams.Network {
	t.Helper()
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	return net
}

// TestFenceRestartAtTip restarts a synced node against a peer at the same
// tip, for each way a server answers a getheaders with nothing after the
// locator: the node is synced from the answer (an empty headers message,
// or the fence's pong alone) and sends the mempool request, without any
// stall or score.
func TestFenceRestartAtTip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy headersPolicy
	}{
		{"empty headers (btcd, Core)", answerAll},
		{"no headers message (bcoin)", silentWhenNothingNew},
		{"getheaders ignored (not synced, at our tip)", neverAnswer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
			dir := t.TempDir()
			w := watchtest.NewMemWatcher(1, p2wpkh(1))
			n1, m1 := newFenceManager(t, w, dir, clk)
			chain := mineBlocks(t, n1.cfg.Network, genesis(n1), 4, func(i int) []*wire.MsgTx {
				return []*wire.MsgTx{payTo(byte(i), 1000, p2wpkh(1))}
			})
			s1 := addSimPeer(t, m1, "sim:1", chain, 0)
			s1.claim(4)
			serveWith(s1, answerAll)
			require.True(t, m1.st.Synced, "first sync: synced %v at %d", m1.st.Synced, m1.synced.Height)
			require.Equal(t, int32(4), m1.synced.Height, "first sync: synced %v at %d", m1.st.Synced, m1.synced.Height)
			require.NoError(t, n1.Stop())

			n2, m2 := newFenceManager(t, w, dir, clk)
			s2 := addSimPeer(t, m2, "sim:2", chain, 0)
			s2.claim(4)
			pay := payTo(9, 555, p2wpkh(1))
			s2.mempool = map[chainhash.Hash]*wire.MsgTx{pay.TxHash(): pay}
			serveWith(s2, tc.policy)
			require.True(t, m2.st.Synced, "restart at the tip not synced: headersReq %v done %v lagging %v", s2.ps.headersReq, s2.ps.headersDone, s2.ps.lagSince)
			require.Equal(t, 1, s2.count(wire.CmdGetHeaders), "sent getheaders %d mempool %d getdata %d, want 1 each", s2.count(wire.CmdGetHeaders), s2.count(wire.CmdMemPool), s2.count(wire.CmdGetData))
			require.Equal(t, 1, s2.count(wire.CmdMemPool), "sent getheaders %d mempool %d getdata %d, want 1 each", s2.count(wire.CmdGetHeaders), s2.count(wire.CmdMemPool), s2.count(wire.CmdGetData))
			require.Equal(t, 1, s2.count(wire.CmdGetData), "sent getheaders %d mempool %d getdata %d, want 1 each", s2.count(wire.CmdGetHeaders), s2.count(wire.CmdMemPool), s2.count(wire.CmdGetData))
			_, ok := w.Mempool()[pay.TxHash()]
			require.True(t, ok, "mempool payment not offered to the watcher")
			require.False(t, s2.ps.busy(), "busy %v, score %d", s2.ps.busy(), n2.bans.Score("sim:2"))
			require.Equal(t, uint32(0), n2.bans.Score("sim:2"), "busy %v, score %d", s2.ps.busy(), n2.bans.Score("sim:2"))
		})
	}
}

// TestFenceLaggingPeerNeverSynced connects a node to a peer that claims a
// longer chain and gives no headers (in initial block download), by
// silence or by an empty reply: the node is never synced on its word,
// asks it again every lagRetryInterval (not in a loop), never scores it,
// and drops it unbanned after lagDropAfter.
func TestFenceLaggingPeerNeverSynced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy headersPolicy
	}{
		{"getheaders ignored (bcoin, btcd, old Core in IBD)", neverAnswer},
		{"empty headers (Core below the minimum chain work)", func(*wire.MsgHeaders) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
			w := watchtest.NewMemWatcher(1, p2wpkh(1))
			n, m := newFenceManager(t, w, t.TempDir(), clk)
			s := addSimPeer(t, m, "ibd:1", nil, 0) // serves no header
			s.claim(50)
			serveWith(s, tc.policy)
			require.False(t, m.st.Synced, "synced %v lagging %v lastBlock %d download %v", m.st.Synced, s.ps.lagSince, s.ps.lastBlock, m.dl == s.ps)
			require.False(t, s.ps.lagSince.IsZero(), "synced %v lagging %v lastBlock %d download %v", m.st.Synced, s.ps.lagSince, s.ps.lastBlock, m.dl == s.ps)
			require.Equal(t, noBlocks, s.ps.lastBlock, "synced %v lagging %v lastBlock %d download %v", m.st.Synced, s.ps.lagSince, s.ps.lastBlock, m.dl == s.ps)
			require.Same(t, s.ps, m.dl, "synced %v lagging %v lastBlock %d download %v", m.st.Synced, s.ps.lagSince, s.ps.lastBlock, m.dl == s.ps)
			got := s.count(wire.CmdGetHeaders)
			require.Equal(t, 1, got, "%d getheaders before the retry time", got)
			for i := 2; i <= 4; i++ {
				clk.now = clk.now.Add(lagRetryInterval)
				m.onTick(clk.now)
				serveWith(s, tc.policy)
				require.False(t, m.st.Synced, "retry %d: synced %v getheaders %d ready %v", i, m.st.Synced, s.count(wire.CmdGetHeaders), s.ps.ready)
				require.Equal(t, i, s.count(wire.CmdGetHeaders), "retry %d: synced %v getheaders %d ready %v", i, m.st.Synced, s.count(wire.CmdGetHeaders), s.ps.ready)
				require.True(t, s.ps.ready, "retry %d: synced %v getheaders %d ready %v", i, m.st.Synced, s.count(wire.CmdGetHeaders), s.ps.ready)
			}
			require.Equal(t, 0, s.count(wire.CmdGetData), "asked a lagging peer for blocks (%d) or its mempool (%d)", s.count(wire.CmdGetData), s.count(wire.CmdMemPool))
			require.Equal(t, 0, s.count(wire.CmdMemPool), "asked a lagging peer for blocks (%d) or its mempool (%d)", s.count(wire.CmdGetData), s.count(wire.CmdMemPool))
			clk.now = clk.now.Add(lagDropAfter)
			m.onTick(clk.now)
			require.False(t, s.ps.ready, "lagging peer kept past lagDropAfter")
			_, banned := n.bans.IsBanned("ibd:1")
			require.False(t, banned, "lagging peer scored %d", n.bans.Score("ibd:1"))
			require.Equal(t, uint32(0), n.bans.Score("ibd:1"), "lagging peer scored %d", n.bans.Score("ibd:1"))
		})
	}
}

// TestFenceSwitchesFromLaggingDownloadPeer gives the node two peers that
// claim the same height: the first listed (picked as download peer)
// ignores getheaders. The other takes over, the node syncs from it and
// is synced; the lagging one stays connected, unscored.
func TestFenceSwitchesFromLaggingDownloadPeer(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newFenceManager(t, w, t.TempDir(), clk)
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 6, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 1000, p2wpkh(1))}
	})
	lag := addSimPeer(t, m, "ibd:1", chain, 0)
	lag.claim(6)
	good := addSimPeer(t, m, "good:2", chain, 1)
	good.claim(6)
	require.Same(t, lag.ps, m.dl, "the first listed peer is not the download peer")
	serveWith(lag, neverAnswer)
	require.Same(t, good.ps, m.dl, "the lagging peer is still the download peer")
	serveWith(good, answerAll)
	require.True(t, m.st.Synced, "synced %v at %d with %d txs", m.st.Synced, m.synced.Height, len(w.Txs()))
	require.Equal(t, int32(6), m.synced.Height, "synced %v at %d with %d txs", m.st.Synced, m.synced.Height, len(w.Txs()))
	require.Len(t, w.Txs(), 6, "synced %v at %d with %d txs", m.st.Synced, m.synced.Height, len(w.Txs()))
	require.True(t, lag.ps.ready, "lagging peer: ready %v score %d getdata %d", lag.ps.ready, n.bans.Score("ibd:1"), lag.count(wire.CmdGetData))
	require.Equal(t, uint32(0), n.bans.Score("ibd:1"), "lagging peer: ready %v score %d getdata %d", lag.ps.ready, n.bans.Score("ibd:1"), lag.count(wire.CmdGetData))
	require.Equal(t, 0, lag.count(wire.CmdGetData), "lagging peer: ready %v score %d getdata %d", lag.ps.ready, n.bans.Score("ibd:1"), lag.count(wire.CmdGetData))
	// Still lagging at its next retry while it claims more than our tip
	// (50 > 6): the node stays synced on the other peer's word.
	lag.claim(50)
	clk.now = clk.now.Add(lagRetryInterval)
	m.onTick(clk.now)
	serveWith(lag, neverAnswer)
	require.True(t, m.st.Synced, "synced %v lagging %v", m.st.Synced, lag.ps.lagSince)
	require.False(t, lag.ps.lagSince.IsZero(), "synced %v lagging %v", m.st.Synced, lag.ps.lagSince)
	require.Same(t, good.ps, m.dl, "synced %v lagging %v", m.st.Synced, lag.ps.lagSince)
}

// TestFenceAnnouncedBlockWithheld: a synced peer announces a block the
// node lacks and then gives no headers for it. The node is no longer
// synced and does not become synced on that peer's word; when the peer
// finally serves the block (at its retry), the node syncs again.
func TestFenceAnnouncedBlockWithheld(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newFenceManager(t, w, t.TempDir(), clk)
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 4, func(int) []*wire.MsgTx { return nil })
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.claim(4)
	serveWith(s, silentWhenNothingNew)
	require.True(t, m.st.Synced, "not synced")
	next := mineBlocks(t, n.cfg.Network, &chain[3].Header, 1, func(int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(7, 4242, p2wpkh(1))}
	})
	inv := wire.NewMsgInv()
	h := next[0].BlockHash()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
	s.deliver(inv)
	serveWith(s, silentWhenNothingNew) // the chain it serves still ends at 4
	require.False(t, m.st.Synced, "synced %v lagging %v after a withheld announcement", m.st.Synced, s.ps.lagSince)
	require.False(t, s.ps.lagSince.IsZero(), "synced %v lagging %v after a withheld announcement", m.st.Synced, s.ps.lagSince)
	s.setChain(append(chain, next...))
	clk.now = clk.now.Add(lagRetryInterval)
	m.onTick(clk.now)
	serveWith(s, silentWhenNothingNew)
	require.True(t, m.st.Synced, "synced %v at %d, lagging %v, balance %d", m.st.Synced, m.synced.Height, s.ps.lagSince, w.Balance())
	require.Equal(t, int32(5), m.synced.Height, "synced %v at %d, lagging %v, balance %d", m.st.Synced, m.synced.Height, s.ps.lagSince, w.Balance())
	require.True(t, s.ps.lagSince.IsZero(), "synced %v at %d, lagging %v, balance %d", m.st.Synced, m.synced.Height, s.ps.lagSince, w.Balance())
	require.Equal(t, int64(4242), w.Balance(), "synced %v at %d, lagging %v, balance %d", m.st.Synced, m.synced.Height, s.ps.lagSince, w.Balance())
	require.Equal(t, uint32(0), n.bans.Score("sim:1"), "scored %d", n.bans.Score("sim:1"))
}

// TestFencePongsAreNotBatchPongs checks that a fence and a batch's ping
// never stand for each other: a peer that serves a long sync in order
// (getheaders, fence, getdata batches, their pings) is never scored for
// unserved blocks, and a stale fence's pong (the fence of a getheaders
// answered by headers) closes no batch.
func TestFencePongsAreNotBatchPongs(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newFenceManager(t, w, t.TempDir(), clk)
	m.n.cfg.Tuning.BatchSize, m.n.cfg.Tuning.Window = 3, 6
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 20, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 100, p2wpkh(1))}
	})
	s := addSimPeer(t, m, "sim:1", chain, 0)
	// Hold the fence's pong back: the getheaders is answered (headers),
	// batches are sent; the stale fence's pong then comes last.
	var fences []*wire.MsgPing
	for len(s.queue) > 0 {
		msg := s.queue[0]
		if p, ok := msg.(*wire.MsgPing); ok && p.Nonce == s.ps.fence && len(fences) == 0 {
			s.queue = s.queue[1:]
			fences = append(fences, p)
			continue
		}
		serveOne(s, msg)
	}
	require.Len(t, fences, 1, "held %d fences, %d requests outstanding", len(fences), len(s.ps.reqs))
	require.Empty(t, s.ps.reqs, "held %d fences, %d requests outstanding", len(fences), len(s.ps.reqs))
	s.deliver(wire.NewMsgPong(fences[0].Nonce))
	serveWith(s, answerAll)
	require.True(t, m.st.Synced, "synced %v at %d, %d txs, score %d", m.st.Synced, m.synced.Height, len(w.Txs()), n.bans.Score("sim:1"))
	require.Equal(t, int32(20), m.synced.Height, "synced %v at %d, %d txs, score %d", m.st.Synced, m.synced.Height, len(w.Txs()), n.bans.Score("sim:1"))
	require.Len(t, w.Txs(), 20, "synced %v at %d, %d txs, score %d", m.st.Synced, m.synced.Height, len(w.Txs()), n.bans.Score("sim:1"))
	require.Equal(t, uint32(0), n.bans.Score("sim:1"), "synced %v at %d, %d txs, score %d", m.st.Synced, m.synced.Height, len(w.Txs()), n.bans.Score("sim:1"))
}

// serveOne answers msg, the first queued message, as simServer.run does;
// what the manager sends meanwhile is queued after the rest.
func serveOne(s *simServer, msg wire.Message) {
	rest := s.queue[1:]
	var out []wire.Message
	hook := s.ps.sendHook
	s.ps.sendHook = func(m wire.Message) { out = append(out, m); s.sent = append(s.sent, m) }
	s.queue = []wire.Message{msg}
	s.run()
	s.ps.sendHook = hook
	s.queue = append(rest, out...)
}

func TestStaleAnnouncementIsNotLagging(t *testing.T) {
	// A peer announces a block we never get (it reorganized away from
	// it) and then answers our getheaders: by an explicit empty headers
	// message (btcd, Core: nothing on its best chain follows our tip),
	// the announcement is stale and the peer is caught up, so it can
	// check the next block; by silence (bcoin's way, also a peer in
	// initial block download) it stays lagging, as before.
	for _, tc := range []struct {
		name    string
		policy  headersPolicy
		lagging bool
	}{
		{"empty headers (btcd, Core)", answerAll, false},
		{"no headers message (bcoin)", silentWhenNothingNew, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watchtest.NewMemWatcher(1, p2wpkh(1))
			n, m := newTestManager(t, w, Config{SpotCheckEvery: 1})
			chain := mineBlocks(t, n.cfg.Network, genesis(n), 5, func(i int) []*wire.MsgTx {
				return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
			})
			dl := addSimPeer(t, m, "a:1", chain, 0)
			other := addSimPeer(t, m, "b:1", chain, 1)
			for range 5 {
				dl.run()
				serveWith(other, tc.policy)
			}
			require.Equal(t, int32(5), m.synced.Height, "synced %d of 5", m.synced.Height)
			stale := chainhash.Hash{0x5a, 0x1e}
			inv := wire.NewMsgInv()
			_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &stale))
			other.deliver(inv)
			for range 3 {
				serveWith(other, tc.policy)
				dl.run()
			}
			got := !other.ps.lagSince.IsZero()
			require.Equal(t, tc.lagging, got, "lagging %v, want %v", got, tc.lagging)
			cands := m.checkCandidates(dl.ps, 5, nil)
			require.False(t, !tc.lagging && (other.ps.lastBlock != 5 || len(cands) != 1 || cands[0] != other.ps), "caught-up peer: last block %d, second peers for block 5 %v", other.ps.lastBlock, cands)
			// The peers table shows what the node knows the peer has,
			// not the version's start height (0 here).
			if !tc.lagging {
				shown := other.ps.info(n, false).LastBlock
				require.Equal(t, int32(5), shown, "caught-up peer shown at height %d, want 5", shown)
			}
			score := n.bans.Score("b:1")
			require.Equal(t, uint32(0), score, "scored %d", score)
		})
	}
}
