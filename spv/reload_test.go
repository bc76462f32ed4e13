package spv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// The tests of reload.go: no match makes the node send a filter; filters
// go to every peer together at the scheduled points, after the quiet
// window on the live chain; the gap-limit race re-fetches from an aligned
// boundary.

// reserveScript is the test watcher's derived script i.
func reserveScript(i uint32) []byte { return p2wpkh(byte(0x40 + i)) }

// newReserveWatcher returns a gap-limit watcher with a lookahead reserve.
func newReserveWatcher(t *testing.T, gap, reserve int) *watchtest.MemWatcher {
	t.Helper()
	w, err := watchtest.NewMemWatcherGap(1, gap, func(i uint32) ([]byte, error) { return reserveScript(i), nil })
	require.NoError(t, err)
	return w.SetLookahead(reserve)
}

// seedRand makes the schedule's jitter reproducible.
func seedRand(n *Node) { n.rng = rand.New(rand.NewPCG(24, 24)) }

// filterRecords reads the node's transcript's filterload records.
func filterRecords(t *testing.T, n *Node) []transcript.Record {
	t.Helper()
	recs, err := transcript.Read(openFile(t, n.cfg.DataDir+"/"+transcript.FileName))
	require.NoError(t, err)
	return transcript.FilterRecords(recs)
}

// getDataRecords reads the node's transcript's getdata records.
func getDataRecords(t *testing.T, n *Node) []transcript.Record {
	t.Helper()
	recs, err := transcript.Read(openFile(t, n.cfg.DataDir+"/"+transcript.FileName))
	require.NoError(t, err)
	var out []transcript.Record
	for _, r := range recs {
		if r.Kind == transcript.KindGetData {
			out = append(out, r)
		}
	}
	return out
}

// announceBlock makes the peers serve chain and announce its tip.
func announceBlock(chain []*wire.MsgBlock, peers ...*simServer) {
	tip := chain[len(chain)-1].BlockHash()
	for _, s := range peers {
		s.setChain(chain)
		inv := wire.NewMsgInv()
		_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &tip))
		s.deliver(inv)
	}
}

// relay puts tx in the peers' mempools and announces it where their
// filter matches it, as a full node relays a transaction.
func relay(tx *wire.MsgTx, peers ...*simServer) {
	id := tx.TxHash()
	for _, s := range peers {
		if s.mempool == nil {
			s.mempool = make(map[chainhash.Hash]*wire.MsgTx)
		}
		s.mempool[id] = tx
		if s.filter.MatchTxAndUpdate(tx) {
			inv := wire.NewMsgInv()
			_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &id))
			s.deliver(inv)
		}
	}
}

// runAll answers the peers' queues until none has anything left.
func runAll(peers ...*simServer) {
	for busy := true; busy; {
		busy = false
		for _, s := range peers {
			if len(s.queue) > 0 {
				busy = true
				s.run()
			}
		}
	}
}

// TestMatchesDoNotReload: a wallet with a lookahead reserve, synced with
// two peers (every block checked), is paid in a block during the
// catch-up, then on the live chain in the mempool and in a new block,
// each payment at a fresh address (the last two beyond the gap, inside
// the reserve, so the watcher tops its reserve up): no peer gets a
// filterload after any of them. At the next reload point, once the quiet
// window after the last payment has passed, both peers get one filter,
// the same bytes, with the new keys; the payments are all found.
func TestMatchesDoNotReload(t *testing.T) {
	const gap, reserve = 5, 30
	w, clk, n, m := newLiveTestManager(t, gap, reserve)
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 8, func(i int) []*wire.MsgTx {
		txs := []*wire.MsgTx{payTo(byte(100+i), 7, p2wpkh(0x99))}
		if i == 3 {
			txs = append(txs, payTo(1, 1000, reserveScript(2)))
		}
		return txs
	})
	a := addSimPeer(t, m, "sim:1", chain, 0)
	b := addSimPeer(t, m, "sim:2", chain, 1)
	runAll(a, b)
	require.True(t, m.st.Synced, "synced %v at %d", m.st.Synced, m.synced.Height)
	require.Equal(t, int32(8), m.synced.Height, "synced %v at %d", m.st.Synced, m.synced.Height)
	loads := func() (int, int) { return a.filterLoads(), b.filterLoads() }
	la, lb := loads()
	require.Equal(t, 1, la, "filterloads after the catch-up: %d, %d; want 1 each", la, lb)
	require.Equal(t, 1, lb, "filterloads after the catch-up: %d, %d; want 1 each", la, lb)

	// The live chain: a payment in the mempool beyond the gap...
	clk.now = clk.now.Add(time.Minute)
	pay := payTo(2, 2000, reserveScript(gap+8))
	relay(pay, a, b)
	runAll(a, b)
	_, ok := w.Mempool()[pay.TxHash()]
	require.True(t, ok, "the mempool payment was not offered to the watcher: %+v", w.Mempool())
	// ... and one in a new block, further still.
	clk.now = clk.now.Add(10 * time.Minute)
	chain = append(chain, mineBlocks(t, n.cfg.Network, &chain[len(chain)-1].Header, 1, func(int) []*wire.MsgTx {
		return []*wire.MsgTx{pay, payTo(3, 3000, reserveScript(gap+20))}
	})...)
	announceBlock(chain, a, b)
	runAll(a, b)
	require.Equal(t, int32(9), m.synced.Height, "synced to %d with %d txs; want 9 and 3", m.synced.Height, len(w.Txs()))
	require.Len(t, w.Txs(), 3, "synced to %d with %d txs; want 9 and 3", m.synced.Height, len(w.Txs()))
	la, lb = loads()
	require.Equal(t, 1, la, "filterloads after the payments: %d, %d; a match made the node send a filter", la, lb)
	require.Equal(t, 1, lb, "filterloads after the payments: %d, %d; a match made the node send a filter", la, lb)
	require.NotEqual(t, 0, m.rl.pendingKeys, "the watcher's reserve top-up is not pending")
	payAt := clk.now

	// Within the quiet window nothing is sent even past the reload
	// point; after it, one reload to both peers.
	clk.now = payAt.Add(10 * time.Minute)
	m.rl.atTime = clk.now
	m.onTick(clk.now)
	runAll(a, b)
	la, lb = loads()
	require.Equal(t, 1, la, "filterloads within the quiet window: %d, %d", la, lb)
	require.Equal(t, 1, lb, "filterloads within the quiet window: %d, %d", la, lb)
	// Two more blocks (the block half of the window) and the time.
	for i := range 2 {
		clk.now = clk.now.Add(10 * time.Minute)
		chain = append(chain, mineBlocks(t, n.cfg.Network, &chain[len(chain)-1].Header, 1, func(int) []*wire.MsgTx {
			return []*wire.MsgTx{payTo(byte(200+i), 7, p2wpkh(0x99))}
		})...)
		announceBlock(chain, a, b)
		runAll(a, b)
	}
	m.onTick(clk.now)
	runAll(a, b)
	la, lb = loads()
	require.Equal(t, 2, la, "filterloads after the reload point and the quiet window: %d, %d; want 2 each", la, lb)
	require.Equal(t, 2, lb, "filterloads after the reload point and the quiet window: %d, %d; want 2 each", la, lb)
	recs := filterRecords(t, n)
	last := recs[len(recs)-2:]
	require.Equal(t, transcript.ReasonNewKey, last[0].Reason, "the reload: %s to %s and %s to %s, same bytes %v; want new-key, one filter for both peers", last[0].Reason, last[0].Peer, last[1].Reason, last[1].Peer, bytes.Equal(last[0].Filter, last[1].Filter))
	require.Equal(t, transcript.ReasonNewKey, last[1].Reason, "the reload: %s to %s and %s to %s, same bytes %v; want new-key, one filter for both peers", last[0].Reason, last[0].Peer, last[1].Reason, last[1].Peer, bytes.Equal(last[0].Filter, last[1].Filter))
	require.NotEqual(t, last[1].Peer, last[0].Peer, "the reload: %s to %s and %s to %s, same bytes %v; want new-key, one filter for both peers", last[0].Reason, last[0].Peer, last[1].Reason, last[1].Peer, bytes.Equal(last[0].Filter, last[1].Filter))
	require.True(t, bytes.Equal(last[0].Filter, last[1].Filter), "the reload: %s to %s and %s to %s, same bytes %v; want new-key, one filter for both peers", last[0].Reason, last[0].Peer, last[1].Reason, last[1].Peer, bytes.Equal(last[0].Filter, last[1].Filter))
	gapAfter := last[0].Time.Sub(payAt)
	require.GreaterOrEqual(t, gapAfter, 20*time.Minute, "reloaded %v after the last wallet payment, inside the quiet window", gapAfter)
	// The new filter holds the gap after the last payment (index gap +
	// 20) and at least the reserve beyond it.
	f := m.dl.mirror
	for i := range uint32(gap + 20 + 1 + gap + reserve) {
		require.True(t, f.Matches(reserveScript(i)[2:]), "the reloaded filter lacks key %d", i)
	}
	for _, s := range []*simServer{a, b} {
		score := n.bans.Score(s.ps.addr)
		require.Equal(t, uint32(0), score, "%s scored %d", s.ps.addr, score)
	}
}

// TestGapRaceRefetchesAlignedWindow: a wallet whose reserve runs out
// between two reload points (a payment at the last key the filter holds,
// index gap + reserve - 1) still finds a payment in the next block at
// index gap + reserve + 1: the node reloads every peer and fetches the
// blocks again, and the re-fetch starts at a multiple of the window,
// before the paying block, which is applied again.
func TestGapRaceRefetchesAlignedWindow(t *testing.T) {
	const gap, reserve, window = 5, 10, 8
	w := newReserveWatcher(t, gap, reserve)
	n, m := newTestManager(t, w, Config{RefetchWindow: window, ReloadEvery: 1000, Tuning: Tuning{BatchSize: 4, Window: 8}})
	seedRand(n)
	m.drawSchedule(m.n.clock.Now())
	const paying = 13 // block 13 pays the last key; 14 the key past the filter
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 20, func(i int) []*wire.MsgTx {
		txs := []*wire.MsgTx{payTo(byte(100+i), 7, p2wpkh(0x99))}
		switch i + 1 {
		case paying:
			txs = append(txs, payTo(1, 1000, reserveScript(gap+reserve-1)))
		case paying + 1:
			txs = append(txs, payTo(2, 2000, reserveScript(gap+reserve+1)))
		}
		return txs
	})
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	require.Len(t, w.Txs(), 2, "watcher has %d of 2 txs, synced to %d (%v)", len(w.Txs()), m.synced.Height, m.st.Synced)
	require.Equal(t, int32(20), m.synced.Height, "watcher has %d of 2 txs, synced to %d (%v)", len(w.Txs()), m.synced.Height, m.st.Synced)
	require.True(t, m.st.Synced, "watcher has %d of 2 txs, synced to %d (%v)", len(w.Txs()), m.synced.Height, m.st.Synced)
	require.Equal(t, 1, m.st.GapRaces, "%d gap races, want 1", m.st.GapRaces)
	_, again := w.Applied()
	require.NotEqual(t, 0, again, "the paying block was not applied again")
	recs, err := transcript.Read(openFile(t, n.cfg.DataDir+"/"+transcript.FileName))
	require.NoError(t, err)
	// The first getdata after the gap-race filterload is the re-fetch.
	raced := false
	for _, r := range recs {
		switch {
		case r.Kind == transcript.KindFilterLoad && r.Reason == transcript.ReasonGapRace:
			raced = true
		case raced && r.Kind == transcript.KindGetData:
			require.Equal(t, int32(0), r.Height%window, "the re-fetch starts at %d (%s): want a multiple of %d at or below the paying block %d", r.Height, r.Reason, window, paying)
			require.LessOrEqual(t, r.Height, int32(paying), "the re-fetch starts at %d (%s): want a multiple of %d at or below the paying block %d", r.Height, r.Reason, window, paying)
			require.Equal(t, transcript.ReasonRefetch, r.Reason, "the re-fetch starts at %d (%s): want a multiple of %d at or below the paying block %d", r.Height, r.Reason, window, paying)
			require.Greater(t, r.Height+int32(r.Count), int32(paying), "the re-fetch covers %d blocks from %d: not the paying block", r.Count, r.Height)
			return
		}
	}
	require.FailNow(t, fmt.Sprintf("no re-fetch after a gap-race filterload in %d records", len(recs)))
}

// TestSwitchWaitsForUnheldOutpoints: a download-peer switch (the peer
// lags) reloads every peer at once only when the new download peer's
// filter lacks an outpoint another peer's filter holds (it would miss a
// spend the node saw before). An outpoint no filter holds (a pending
// payment's guard, which no server inserts) waits for the next reload
// point: before, every switch after a mempool payment reloaded both
// peers within 0.4 s of the relay (seen in TestBehaviourAttackOnSparsePayments,
// reason outpoints), a reload only the payment explained.
func TestSwitchWaitsForUnheldOutpoints(t *testing.T) {
	m, peers := syncedLivePeers(t, 3)
	loads := func() []int {
		var l []int
		for _, p := range peers {
			l = append(l, p.filterLoads())
		}
		return l
	}
	before := loads()
	byState := func(ps *peerState) *simServer {
		for _, p := range peers {
			if p.ps == ps {
				return p
			}
		}
		require.FailNow(t, fmt.Sprintf("no sim peer for %s", ps.addr))
		return nil
	}

	// A guard: in the set, in no peer's filter.
	guard := wire.OutPoint{Hash: chainhash.Hash{0x6a, 0x01}, Index: 3}
	m.els.ops[guard] = struct{}{}
	first := m.dl
	m.lagging(first, 10, 6, "test")
	runAll(peers...)
	require.NotSame(t, first, m.dl, "no switch: download peer %v", m.dl)
	require.NotNil(t, m.dl, "no switch: download peer %v", m.dl)
	got := loads()
	require.True(t, slices.Equal(got, before), "filterloads after a switch with an outpoint no filter holds: %v, before %v", got, before)
	r := m.pendingReason()
	require.Equal(t, transcript.ReasonOutPoints, r, "pending reason %q: the guard must wait for the next point", r)

	// An outpoint the lagging first peer's filter holds (its server
	// inserted it) and the others lack: the next switch reloads at once.
	held := wire.OutPoint{Hash: chainhash.Hash{0x6a, 0x02}, Index: 0}
	m.els.ops[held] = struct{}{}
	first.mirror.AddOutPoint(&held)
	second := m.dl
	m.lagging(second, 10, 6, "test")
	runAll(peers...)
	require.NotSame(t, second, m.dl, "download peer %s: want the third", m.dl.addr)
	require.NotSame(t, first, m.dl, "download peer %s: want the third", m.dl.addr)
	after := loads()
	for i := range after {
		require.Equal(t, before[i]+1, after[i], "filterloads after a switch to a peer lacking a held outpoint: %v, before %v; want one more each", after, before)
	}
	require.True(t, m.outpointsHeld(byState(m.dl).ps.mirror), "the new download peer's filter lacks an outpoint after the reload")
}

// TestLaterAnnouncerMirrorsTheRelay: a mempool payment is announced by
// both peers (both filters match it, both servers insert its outpoint)
// and fetched from the first only. The second announcer's mirror must
// hold the insertion too, replayed from the body kept, without a second
// download; otherwise a download-peer switch to it right after the
// payment finds an outpoint the other peer's filter holds and reloads
// every peer at once (seen in TestBehaviourAttackOnSparsePayments' live
// phase: a reload 0.3 s after the relay). Before, the switch reloaded.
func TestLaterAnnouncerMirrorsTheRelay(t *testing.T) {
	m, peers := syncedLivePeers(t, 2)
	a, b := peers[0], peers[1]
	pay := payTo(2, 2000, reserveScript(1))
	op := wire.OutPoint{Hash: pay.TxHash(), Index: 0}
	getdatas := func(s *simServer) int {
		k := 0
		for _, msg := range s.sent {
			if gd, ok := msg.(*wire.MsgGetData); ok {
				for _, iv := range gd.InvList {
					if iv.Hash == op.Hash {
						k++
					}
				}
			}
		}
		return k
	}
	relay(pay, a)
	runAll(a, b)
	relay(pay, b)
	runAll(a, b)
	require.Equal(t, 1, getdatas(a), "the payment was asked %d times of the first announcer, %d of the second; want 1 and 0", getdatas(a), getdatas(b))
	require.Equal(t, 0, getdatas(b), "the payment was asked %d times of the first announcer, %d of the second; want 1 and 0", getdatas(a), getdatas(b))
	for _, s := range []*simServer{a, b} {
		require.True(t, s.filter.MatchesOutPoint(&op), "%s's server did not insert the payment's outpoint", s.ps.addr)
		require.True(t, s.ps.mirror.MatchesOutPoint(&op), "%s's mirror lacks the outpoint its server inserted", s.ps.addr)
	}
	before := []int{a.filterLoads(), b.filterLoads()}
	m.lagging(m.dl, 10, 6, "test")
	runAll(a, b)
	after := []int{a.filterLoads(), b.filterLoads()}
	require.True(t, slices.Equal(after, before), "filterloads after a switch right after the payment: %v, before %v", after, before)
}

// syncedLivePeers syncs a manager over a reserve watcher (gap 5, reserve
// 30) with k simulated peers serving a 6-block chain, reload points far
// away (1,000 blocks, an hour).
func syncedLivePeers(t *testing.T, k int) (*manager, []*simServer) {
	t.Helper()
	_, _, n, m := newLiveTestManager(t, 5, 30)
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 6, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(100+i), 7, p2wpkh(0x99))}
	})
	peers := make([]*simServer, k)
	for i := range peers {
		peers[i] = addSimPeer(t, m, fmt.Sprintf("sim:%d", i+1), chain, i)
	}
	runAll(peers...)
	require.True(t, m.st.Synced, "synced %v at %d", m.st.Synced, m.synced.Height)
	require.Equal(t, int32(6), m.synced.Height, "synced %v at %d", m.st.Synced, m.synced.Height)
	return m, peers
}

// TestTwoNamedPeersBothCheckTheFirstSync: with two --connect peers and no
// MinPeers set, the first sync waits for both before it picks a download
// peer, so every block of a short catch-up is checked. Before, the
// default was one peer: the demo's 30-block chain went 30 of 30
// unchecked in one run of two (one btcd reached over v2, the other after
// a v1 fallback, a few milliseconds apart).
func TestTwoNamedPeersBothCheckTheFirstSync(t *testing.T) {
	w := newReserveWatcher(t, 5, 30)
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	n, m := newTestManager(t, w, Config{
		SpotCheckEvery: 1, Connect: []string{"sim:1", "sim:2"},
		clock: clk,
	})
	require.Equal(t, 2, n.cfg.Tuning.MinPeers, "MinPeers %d with two peers named; want 2", n.cfg.Tuning.MinPeers)
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 6, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(100+i), 7, p2wpkh(0x99))}
	})
	a := addSimPeer(t, m, "sim:1", chain, 0)
	runAll(a)
	require.Nil(t, m.dl, "download peer %v, synced to %d with one of two named peers ready", m.dl, m.synced.Height)
	require.LessOrEqual(t, m.synced.Height, int32(0), "download peer %v, synced to %d with one of two named peers ready", m.dl, m.synced.Height)
	b := addSimPeer(t, m, "sim:2", chain, 1)
	runAll(a, b)
	require.Equal(t, int32(6), m.synced.Height, "synced to %d, %d unchecked, %d checks; want 6 blocks all checked", m.synced.Height, m.st.Unchecked, m.st.SpotChecks)
	require.Equal(t, 0, m.st.Unchecked, "synced to %d, %d unchecked, %d checks; want 6 blocks all checked", m.synced.Height, m.st.Unchecked, m.st.SpotChecks)
	require.NotEqual(t, 0, m.st.SpotChecks, "synced to %d, %d unchecked, %d checks; want 6 blocks all checked", m.synced.Height, m.st.Unchecked, m.st.SpotChecks)
}

// newLiveTestManager builds a manager over a reserve watcher (gap,
// reserve) with every block checked, reload points far away (1,000
// blocks, an hour) and a quiet window of 2 blocks and 20 minutes, on a
// fake clock, its schedule drawn from a fixed seed.
func newLiveTestManager(t *testing.T, gap, reserve int) (*watchtest.MemWatcher, *fakeClock, *Node, *manager) {
	t.Helper()
	w := newReserveWatcher(t, gap, reserve)
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	n, m := newTestManager(t, w, Config{
		SpotCheckEvery: 1, ReloadEvery: 1000,
		clock: clk, Tuning: Tuning{ReloadInterval: time.Hour, QuietBlocks: 2, QuietTime: 20 * time.Minute},
	})
	seedRand(n)
	m.drawSchedule(clk.now)
	return w, clk, n, m
}
