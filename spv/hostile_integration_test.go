package spv_test

import (
	"context"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
)

// TestHostilePeers syncs with a hostile peer listed first (so it serves
// the download) and an honest btcd: every scenario must end with the
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
			if err != nil {
				t.Fatal(err)
			}
			defer hp.Close()
			w := watchtest.NewMemWatcher(start+1, scripts...)
			dir := t.TempDir()
			n, err := spv.New(spv.Config{
				Network: regtest(t), DataDir: dir, Connect: []string{hp.Addr(), h.Node().P2PAddr()},
				Watcher: w, Log: testLogger(), RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond,
				StallTimeout: 2 * time.Second, TickInterval: 200 * time.Millisecond, SpotCheckEvery: 1, MinPeers: 2, MinPeersWait: 5 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := n.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer n.Stop()
			waitSynced(t, n, tip)
			checkTruth(t, w, truth)
			st := n.Status()
			banned := false
			for _, b := range n.Bans() {
				banned = banned || b.Addr == hp.Addr()
			}
			t.Logf("%s: banned %v, dropped %d, omissions %d, loads %d, peers %d", sc, banned, st.Dropped, st.Omissions, st.Filter.Loads, len(st.Peers))
			if sc.Expected() == hostile.ReactBan && !banned {
				t.Errorf("%s: hostile peer not banned (bans %+v)", sc, n.Bans())
			}
			if sc.Expected() == hostile.ReactNone && banned {
				t.Errorf("honest peer banned: %+v", n.Bans())
			}
			for _, r := range readTranscript(t, dir) {
				if r.Reason == transcript.ReasonFPDrift {
					t.Errorf("%s: filter reloaded for FP drift: %+v", sc, r)
				}
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
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	n, err := spv.New(spv.Config{
		Network: regtest(t), DataDir: t.TempDir(), Connect: []string{hp.Addr(), h.Node().P2PAddr()},
		Watcher: w, Log: testLogger(), RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond,
		MinPeers: 2, MinPeersWait: 5 * time.Second, SideBranchMargin: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	waitSynced(t, n, tip)
	checkTruth(t, w, truth)
	if hp.Stats().Applied == 0 {
		t.Fatalf("the flood was never sent: %+v", hp.Stats())
	}
	banned := false
	for _, b := range n.Bans() {
		banned = banned || b.Addr == hp.Addr()
	}
	if !banned {
		t.Fatalf("a peer flooding refused side branches was not banned: %+v", n.Bans())
	}
	if count, tipH := n.Headers().Count(), tip; count > int(tipH)+1+10*15 {
		t.Fatalf("%d headers stored for a %d-block chain: the flood was not bounded", count, tipH)
	}
}
