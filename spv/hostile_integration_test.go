package spv_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestHostilePeers syncs with a hostile peer listed first and waited for
// (hostileFirstWait, so it serves the download) and an honest btcd: every scenario must end with the
// truth in the watcher, and the violations worth a ban must ban the
// hostile peer.
func TestHostilePeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 40, 3, 11)
	_, tip, _ := h.Node().BestBlock()
	for _, sc := range hostile.Scenarios() {
		t.Run(string(sc), func(t *testing.T) {
			t.Parallel()
			hp, err := hostile.Start(context.Background(), hostile.Config{
				Upstream: h.Node().RPC(), Params: h.Params(), Scenario: sc, ForkHeight: start + 5,
			})
			require.NoError(t, err)
			defer hp.Close()
			w := watchtest.NewMemWatcher(start+1, scripts...)
			dir := t.TempDir()
			dl := newDLLog()
			n, err := spv.New(spv.Config{
				Network: regtest(t), DataDir: dir, Connect: []string{hp.Addr(), h.Node().P2PAddr()},
				Watcher: w, Log: slog.New(dl),
				SpotCheckEvery: 1,
				Tuning:         spv.Tuning{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond, StallTimeout: 2 * time.Second, TickInterval: 200 * time.Millisecond, MinPeers: 2, MinPeersWait: hostileFirstWait(sc)},
			})
			require.NoError(t, err)
			require.NoError(t, n.Start(context.Background()))
			defer n.Stop()
			waitSynced(t, n, tip)
			checkTruth(t, w, truth)
			require.False(t, sc != hostile.NoBloom && !dl.servedFirst(hp.Addr()), "%s: the hostile peer %s was not the first download peer (picked: %v)", sc, hp.Addr(), dl.Picks())
			st := n.Status()
			banned := false
			for _, b := range n.Bans() {
				banned = banned || b.Addr == hp.Addr()
			}
			t.Logf("%s: banned %v, dropped %d, omissions %d, loads %d, peers %d", sc, banned, st.Dropped, st.Omissions, st.Filter.Loads, len(st.Peers))
			require.False(t, sc.Expected() == hostile.ReactBan && !banned, "%s: hostile peer not banned (bans %+v)", sc, n.Bans())
			require.False(t, sc.Expected() == hostile.ReactNone && banned, "honest peer banned: %+v", n.Bans())
			for _, r := range readTranscript(t, dir) {
				require.NotEqual(t, transcript.ReasonFPDrift, r.Reason, "%s: filter reloaded for FP drift: %+v", sc, r)
			}
		})
	}
}

// TestSideBranchFloodIsBounded syncs from a peer that floods valid side
// branches forking deep below the tip, with a side-branch margin of 10
// blocks: the branches are refused (not stored), the peer is scored until
// banned, and the sync from the honest btcd completes with the truth.
func TestSideBranchFloodIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 4)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 40, 1, 12)
	_, tip, _ := h.Node().BestBlock()
	hp, err := hostile.Start(context.Background(), hostile.Config{
		Upstream: h.Node().RPC(), Params: h.Params(), Scenario: hostile.SideBranchFlood, FloodMessages: 15,
	})
	require.NoError(t, err)
	defer hp.Close()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	cfg := hostileFirst(t, hp, hostile.SideBranchFlood, h.Node().P2PAddr(), w, t.TempDir())
	cfg.Tuning.SideBranchMargin = 10
	n := startNodeWith(t, cfg)
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	require.NotEqual(t, 0, hp.Stats().Applied, "the flood was never sent: %+v", hp.Stats())
	banned := false
	for _, b := range n.Bans() {
		banned = banned || b.Addr == hp.Addr()
	}
	require.True(t, banned, "a peer flooding refused side branches was not banned: %+v", n.Bans())
	count, tipH := n.Headers().Count(), tip
	require.LessOrEqual(t, count, int(tipH)+1+10*15, "%d headers stored for a %d-block chain: the flood was not bounded", count, tipH)
}

// TestHonestReorgAfterSideBranchFlood fills the side-branch bound (scaled
// down to 2,000 headers) with a hostile peer's valid side branches, then
// has the honest btcd reorganise one block deep, double-spending a wallet
// payment the node had already applied: the node must follow the reorg
// (the payment gone, its double spend in), ban no honest peer, and do the
// same again after a restart on the full store. Before eviction the store
// refused the honest branch ("too many side-branch headers"), also after
// the restart, left the double-spent payment confirmed and scored btcd
// for "low-work side-branch headers".
func TestHonestReorgAfterSideBranchFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	const bound = 2000
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 4)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 10, 1, 14)
	_, tip, _ := h.Node().BestBlock()
	hp, err := hostile.Start(context.Background(), hostile.Config{
		Upstream: h.Node().RPC(), Params: h.Params(), Scenario: hostile.SideBranchFlood, FloodMessages: 8,
	})
	require.NoError(t, err)
	defer hp.Close()
	btcd := h.Node().P2PAddr()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	dir := t.TempDir()
	cfg := hostileFirst(t, hp, hostile.SideBranchFlood, btcd, w, dir)
	cfg.Tuning.MaxSideHeaders = bound
	n, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	waitFor(t, func() bool { return n.Headers().SideHeaders() >= bound-bound/8 })
	t.Logf("flood: %+v; %d side headers stored", hp.Stats(), n.Headers().SideHeaders())

	reorg := func(n *spv.Node, round int) {
		t.Helper()
		orphan, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(400_000, scripts[0])})
		require.NoError(t, err)
		winner, err := h.DoubleSpend(orphan, []*wire.TxOut{wire.NewTxOut(350_000, scripts[1])})
		require.NoError(t, err)
		main := h.Node()
		res, err := h.Reorg(context.Background(), 1, testnet.ReorgOptions{
			OrphanTxs: []*wire.MsgTx{orphan}, WinnerTxs: []*wire.MsgTx{winner},
			AfterLosing: func() error {
				losing, _, err := main.BestBlock()
				if err != nil {
					return err
				}
				deadline := time.Now().Add(20 * time.Second)
				for n.Status().WatcherHash != *losing {
					if time.Now().After(deadline) {
						return fmt.Errorf("the node never applied the losing block: %+v", n.Status())
					}
					time.Sleep(20 * time.Millisecond)
				}
				if _, ok := w.Txs()[orphan.TxHash()]; !ok {
					return fmt.Errorf("the payment of the losing block was not applied")
				}
				return nil
			},
		})
		require.NoError(t, err)
		newTip := *res.New[len(res.New)-1]
		deadline := time.Now().Add(30 * time.Second)
		for n.Status().WatcherHash != newTip {
			if time.Now().After(deadline) {
				st := n.Status()
				require.FailNow(t, fmt.Sprintf("round %d: the node did not follow the honest reorg: watcher %d %v, headers %d, want %v at %d; bans %+v",
					round, st.WatcherHeight, st.WatcherHash, st.HeaderHeight, newTip, res.TipHeight, n.Bans()))
			}
			time.Sleep(20 * time.Millisecond)
		}
		got := w.Txs()
		_, ok := got[orphan.TxHash()]
		require.False(t, ok, "round %d: the double-spent payment is still confirmed", round)
		g, ok := got[winner.TxHash()]
		require.True(t, ok, "round %d: the double spend is missing or misplaced: %+v", round, g)
		require.Equal(t, res.ForkHeight+1, g.Height, "round %d: the double spend is missing or misplaced: %+v", round, g)
		for _, b := range n.Bans() {
			require.NotEqual(t, btcd, b.Addr, "round %d: the honest btcd was banned: %+v", round, b)
		}
		side := n.Headers().SideHeaders()
		require.LessOrEqual(t, side, bound, "round %d: %d side headers stored, bound %d", round, side, bound)
	}
	reorg(n, 1)
	require.NoError(t, n.Stop())
	// A restart on the full store, the honest btcd alone.
	cfg.Connect, cfg.Tuning.MinPeers = []string{btcd}, 1
	n2, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n2.Start(context.Background()))
	defer n2.Stop()
	t.Logf("after the restart: %d side headers", n2.Headers().SideHeaders())
	_, tip, _ = h.Node().BestBlock()
	waitSynced(t, n2, tip)
	reorg(n2, 2)
	flooder := false
	for _, b := range n2.Bans() {
		flooder = flooder || b.Addr == hp.Addr()
	}
	t.Logf("flooding peer banned: %v (bans %+v)", flooder, n2.Bans())
}

// TestKeepAliveStallIsReplaced syncs from a download peer that stops
// answering its batch half-way and then sends an empty headers message
// every second (hostile StallKeepAlive), with an idle honest btcd beside
// it: messages that make no progress must not reset the stall timer, so
// the peer is dropped as stalled after StallTimeout and btcd finishes the
// sync. Before, every headers message reset the timer and the sync stayed
// stuck half-way for as long as the peer kept it up.
func TestKeepAliveStallIsReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 4)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 40, 1, 15)
	_, tip, _ := h.Node().BestBlock()
	hp, err := hostile.Start(context.Background(), hostile.Config{
		Upstream: h.Node().RPC(), Params: h.Params(), Scenario: hostile.StallKeepAlive, KeepAliveInterval: time.Second,
	})
	require.NoError(t, err)
	defer hp.Close()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	cfg := hostileFirst(t, hp, hostile.StallKeepAlive, h.Node().P2PAddr(), w, t.TempDir())
	cfg.Tuning.StallTimeout, cfg.Tuning.TickInterval = 3*time.Second, 200*time.Millisecond
	n, err := spv.New(cfg)
	require.NoError(t, err)
	sub := n.Subscribe()
	defer sub.Cancel()
	require.NoError(t, n.Start(context.Background()))
	defer n.Stop()
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	st := hp.Stats()
	require.NotEqual(t, 0, st.Applied, "the stall with keep-alive never happened: %+v", st)
	require.GreaterOrEqual(t, st.Sent["headers"], 2, "the stall with keep-alive never happened: %+v", st)
	deadline := time.After(10 * time.Second)
	for stalled := false; !stalled; {
		select {
		case ev := <-sub.Events():
			if d, ok := ev.(spv.PeerDisconnected); ok && d.Addr == hp.Addr() && d.Reason == "stalled" {
				stalled = true
			}
		case <-deadline:
			require.FailNow(t, "the stalling peer was not dropped as stalled")
		}
	}
}

// TestTwoLiarsOfThreeCannotHide syncs from a lying download peer, a second
// liar whose address sorts below the honest btcd's (a client that asked
// the lowest address for its checks would ask only liars, who agree) and
// an honest btcd. Both liars hide the last wallet transaction of every
// block (hostile OmitMatchedTx). Each block is asked of two second peers,
// so btcd's answer shows both lies: the wallet must end equal to the
// chain and both liars must be banned, btcd not.
func TestTwoLiarsOfThreeCannotHide(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 40, 1, 16)
	_, tip, _ := h.Node().BestBlock()
	btcd := h.Node().P2PAddr()
	liar := func(port uint16) (*hostile.Peer, error) {
		hp, err := hostile.Start(context.Background(), hostile.Config{
			Upstream: h.Node().RPC(), Params: h.Params(), Scenario: hostile.OmitMatchedTx, Port: port,
		})
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { hp.Close() })
		return hp, nil
	}
	primary, err := liar(0)
	require.NoError(t, err)
	// The second liar's address sorts below btcd's, so a client that
	// asks the lowest address for its checks asks only liars. btcd's
	// port is an ephemeral one (32768 and up): the ports 20000 to 20999
	// all sort below it as text.
	var low *hostile.Peer
	for port := uint16(20000); port < 21000 && low == nil; port++ {
		if hp, err := liar(port); err == nil {
			low = hp
		}
	}
	require.NotNil(t, low, "no listening port sorts below btcd's %s", btcd)
	require.False(t, low.Addr() >= btcd, "no listening port sorts below btcd's %s", btcd)
	w := watchtest.NewMemWatcher(start+1, scripts...)
	n, err := spv.New(spv.Config{
		Network: regtest(t), DataDir: t.TempDir(), Connect: []string{primary.Addr(), low.Addr(), btcd},
		Watcher: w, Log: testLogger(),
		// All three must be connected before the sync starts: with btcd
		// late (a loaded machine took more than 5 s for its handshake) the
		// two liars check each other, agree on the same omission, and no
		// client could tell. The wait ends as soon as the three are ready.
		SpotCheckEvery: 1,
		Tuning:         spv.Tuning{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond, MinPeers: 3, MinPeersWait: time.Minute},
	})
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	defer n.Stop()
	waitSynced(t, n, tip)
	got := len(w.Txs())
	checkTruth(t, w, truth)
	banned := map[string]bool{}
	for _, b := range n.Bans() {
		banned[b.Addr] = true
	}
	st := n.Status()
	t.Logf("wallet %d of %d txs; omissions %d, unchecked %d, bans %+v", got, len(truth.txs), st.Omissions, st.Unchecked, n.Bans())
	require.True(t, banned[primary.Addr()], "bans: primary %v, low liar %v, btcd %v; want the two liars and not btcd", banned[primary.Addr()], banned[low.Addr()], banned[btcd])
	require.True(t, banned[low.Addr()], "bans: primary %v, low liar %v, btcd %v; want the two liars and not btcd", banned[primary.Addr()], banned[low.Addr()], banned[btcd])
	require.False(t, banned[btcd], "bans: primary %v, low liar %v, btcd %v; want the two liars and not btcd", banned[primary.Addr()], banned[low.Addr()], banned[btcd])
}

// TestWitnessCannotChooseDecoys syncs with decoys on from a download peer
// that rewrites the witness of every transaction it sends (hostile
// RewriteWitness: its own key where a P2WPKH spend reveals the payer's;
// the txid does not cover the witness). Decoys must come from data the
// txid commits to, so the peer's key is never one. Before, the payer's key
// was read from the witness and the peer's key was the first decoy in
// decoys.json: the peer knew which filter element was fake.
func TestWitnessCannotChooseDecoys(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 30, 1, 17)
	_, tip, _ := h.Node().BestBlock()
	hp, err := hostile.Start(context.Background(), hostile.Config{
		Upstream: h.Node().RPC(), Params: h.Params(), Scenario: hostile.RewriteWitness,
	})
	require.NoError(t, err)
	defer hp.Close()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	dir := t.TempDir()
	cfg := hostileFirst(t, hp, hostile.RewriteWitness, h.Node().P2PAddr(), w, dir)
	cfg.Decoys = 5
	n := startNodeWith(t, cfg)
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	require.NotEqual(t, 0, hp.Stats().Applied, "no witness was rewritten: %+v", hp.Stats())
	decoys, err := spv.ReadDecoys(dir)
	require.NoError(t, err)
	retired, err := spv.ReadRetiredDecoys(dir)
	require.NoError(t, err)
	require.NotEqual(t, 0, len(decoys), "no decoy chosen: the test shows nothing")
	peerKey := btcutil.Hash160(hostile.WitnessPubKey)
	for i, d := range append(decoys, retired...) {
		require.False(t, bytes.Equal(d, peerKey), "decoy %d of %d is the download peer's key hash %x: the peer chose it", i, len(decoys), d)
	}
	t.Logf("%d decoys, %d retired, none the peer's", len(decoys), len(retired))
}

// TestDeletedFilterStateKeepsTheTweak syncs, deletes filter.json (the
// persistent tweak) and syncs again: the next filters must carry the
// tweak the transcript recorded, not a new random one (which would hand
// the peer a filter independent of the one it holds, and make the
// transcript describe two wallets). Before, a new tweak was drawn silently.
func TestDeletedFilterStateKeepsTheTweak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 4)
	_, start, _ := h.Node().BestBlock()
	buildChain(t, h, k, scripts, 5, 1, 18)
	_, tip, _ := h.Node().BestBlock()
	dir := t.TempDir()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	sync := func() {
		n, err := spv.New(spv.Config{Network: regtest(t), DataDir: dir, Connect: []string{h.Node().P2PAddr()}, Watcher: w, Log: testLogger()})
		require.NoError(t, err)
		require.NoError(t, n.Start(context.Background()))
		waitSynced(t, n, tip)
		require.NoError(t, n.Stop())
	}
	sync()
	require.NoError(t, os.Remove(filepath.Join(dir, "filter.json")))
	sync()
	tweaks := map[uint32]int{}
	for _, r := range readTranscript(t, dir) {
		if r.Kind != transcript.KindFilterLoad {
			continue
		}
		var msg wire.MsgFilterLoad
		require.NoError(t, msg.BtcDecode(bytes.NewReader(r.Filter), wire.ProtocolVersion, wire.BaseEncoding))
		tweaks[msg.Tweak]++
	}
	require.Len(t, tweaks, 1, "filterloads with %d tweaks %v: filter.json's loss changed the tweak", len(tweaks), tweaks)
}
