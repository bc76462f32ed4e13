package spv_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
)

// envInt reads a positive integer from the environment, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s=%q: want a positive integer", name, v)
	require.Greater(t, n, 0, "%s=%q: want a positive integer", name, v)
	return n
}

// omissionRun is one cold sync with a lying download peer.
type omissionRun struct {
	omitted      int  // transactions the liar hid (0 or 1)
	walletTx     bool // the hidden one was the wallet's (a payment or a spend)
	detected     bool // the node caught it (Omissions > 0)
	liarBanned   bool
	honestBanned bool
	truth        bool // the watcher ended equal to the chain
	bytes        uint64
}

// TestOmissionDetectionLoop syncs, cold, a regtest chain with payments to
// and spends from the wallet, from a download peer that hides one matched
// transaction of a random block (testnet/hostile OmitRandomMatch, seeded
// per run) and an honest btcd second, checking every block against the
// second peer. Every omission of a wallet transaction must be caught, the
// liar banned, the honest btcd never banned, and the watcher must end
// equal to the chain. BLOOMWATCH_OMISSION_RUNS sets the number of runs
// (the bench loop of the README uses 300).
func TestOmissionDetectionLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	runs := envInt(t, "BLOOMWATCH_OMISSION_RUNS", 6)
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 8)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 60, 2, 21)
	_, tip, _ := h.Node().BestBlock()
	var made, wallet, caught, misses, honestBans int
	var bytes uint64
	for run := 0; run < runs; run++ {
		r := omissionSync(t, h.Node().RPC(), h.Params(), h.Node().P2PAddr(), start, tip, scripts, truth, int64(run), 1)
		bytes += r.bytes
		if r.honestBanned {
			honestBans++
			require.FailNow(t, fmt.Sprintf("run %d: the honest btcd was banned", run))
		}
		if r.omitted == 0 {
			continue
		}
		made++
		if !r.walletTx {
			continue
		}
		wallet++
		if r.detected && r.liarBanned && r.truth {
			caught++
			continue
		}
		misses++
		require.FailNow(t, fmt.Sprintf("run %d: omission of a wallet tx missed: detected %v, liar banned %v, watcher = truth %v", run, r.detected, r.liarBanned, r.truth))
	}
	t.Logf("check every block: %d runs, %d omissions (%d of wallet txs), %d caught, %d missed, %d honest bans, %.0f bytes received per sync",
		runs, made, wallet, caught, misses, honestBans, float64(bytes)/float64(runs))
	require.NotEqual(t, 0, wallet, "no omission of a wallet transaction happened: the loop tested nothing")
}

// sampledCheckEvery is the sampled check rate TestSampledCheckDetectionRate
// measures (the default checks every block).
const sampledCheckEvery = 4

// TestSampledCheckDetectionRate measures a sampled check: each block is
// checked with probability 1/sampledCheckEvery, so a single hidden
// transaction is caught with that probability. The measured rate
// over BLOOMWATCH_SAMPLED_RUNS runs (default 40) must lie inside the 99.9 %
// binomial interval around it; the honest btcd is never banned.
func TestSampledCheckDetectionRate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	runs := envInt(t, "BLOOMWATCH_SAMPLED_RUNS", 40)
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 8)
	_, start, _ := h.Node().BestBlock()
	truth := buildChain(t, h, k, scripts, 60, 2, 22)
	_, tip, _ := h.Node().BestBlock()
	var made, caught int
	for run := 0; run < runs; run++ {
		r := omissionSync(t, h.Node().RPC(), h.Params(), h.Node().P2PAddr(), start, tip, scripts, truth, int64(1000+run), sampledCheckEvery)
		require.False(t, r.honestBanned, "run %d: the honest btcd was banned", run)
		if r.omitted == 0 {
			continue
		}
		made++
		if r.detected {
			caught++
		}
	}
	p := 1 / float64(sampledCheckEvery)
	const z999 = 3.29
	sd := math.Sqrt(float64(made) * p * (1 - p))
	lo, hi := float64(made)*p-z999*sd, float64(made)*p+z999*sd
	t.Logf("sampled 1/%d: %d omissions, %d caught (%.3f; expected %.3f, 99.9%% interval %.1f..%.1f caught)",
		sampledCheckEvery, made, caught, float64(caught)/math.Max(1, float64(made)), p, lo, hi)
	require.GreaterOrEqual(t, float64(caught), lo, "caught %d of %d, outside the 99.9%% interval %.1f..%.1f for p = %.3f", caught, made, lo, hi, p)
	require.LessOrEqual(t, float64(caught), hi, "caught %d of %d, outside the 99.9%% interval %.1f..%.1f for p = %.3f", caught, made, lo, hi, p)
}

// omissionSync runs one cold sync with a liar (seed) listed first and the
// honest btcd second, checking blocks with probability 1/checkEvery.
func omissionSync(t *testing.T, up hostile.Upstream, params *chaincfg.Params, honest string, start, tip int32,
	scripts [][]byte, truth *chainTruth, seed int64, checkEvery int) omissionRun {
	t.Helper()
	hp, err := hostile.Start(context.Background(), hostile.Config{
		Upstream: up, Params: params, Scenario: hostile.OmitRandomMatch, Times: 1, Seed: seed, OmitRate: 0.3,
	})
	require.NoError(t, err)
	defer hp.Close()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	cfg := hostileFirst(t, hp, hostile.OmitRandomMatch, honest, w, t.TempDir())
	cfg.Tuning.StallTimeout, cfg.Tuning.TickInterval = 2*time.Second, 200*time.Millisecond
	cfg.SpotCheckEvery, cfg.FullBlockEvery = checkEvery, -1
	n, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	defer n.Stop()
	waitSynced(t, n, tip)
	st := n.Status()
	out := omissionRun{detected: st.Omissions > 0, bytes: st.BytesReceived}
	for _, b := range n.Bans() {
		out.liarBanned = out.liarBanned || b.Addr == hp.Addr()
		out.honestBanned = out.honestBanned || b.Addr == honest
	}
	if hid := hp.Stats().Omitted; len(hid) > 0 {
		out.omitted = len(hid)
		_, out.walletTx = truth.txs[hid[0]]
	}
	out.truth = sameAsTruth(w, truth)
	return out
}

// sameAsTruth reports whether the watcher holds exactly the chain's wallet
// transactions and coins.
func sameAsTruth(w *watchtest.MemWatcher, truth *chainTruth) bool {
	got := w.Txs()
	if len(got) != len(truth.txs) {
		return false
	}
	for id, h := range truth.txs {
		if g, ok := got[id]; !ok || g.Height != h {
			return false
		}
	}
	coins := w.Coins()
	if len(coins) != len(truth.coins) {
		return false
	}
	for op, v := range truth.coins {
		if coins[op] != v {
			return false
		}
	}
	return true
}

// TestOmissionCheckCost measures what the checks cost in bytes received,
// syncing the same chain cold from two honest btcd-backed peers with no
// check, with every block checked against the second peer, and with every
// block asked whole from the first. No peer may be banned.
func TestOmissionCheckCost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 8)
	_, start, _ := h.Node().BestBlock()
	buildChain(t, h, k, scripts, 60, 4, 23)
	_, tip, _ := h.Node().BestBlock()
	honest, err := hostile.Start(context.Background(), hostile.Config{Upstream: h.Node().RPC(), Params: h.Params()})
	require.NoError(t, err)
	defer honest.Close()
	honest2, err := hostile.Start(context.Background(), hostile.Config{Upstream: h.Node().RPC(), Params: h.Params()})
	require.NoError(t, err)
	defer honest2.Close()
	two := []string{honest.Addr(), h.Node().P2PAddr()}
	sync := func(cross, full int, peers []string) uint64 {
		w := watchtest.NewMemWatcher(start+1, scripts...)
		n, err := spv.New(spv.Config{
			Network: regtest(t), DataDir: t.TempDir(), Connect: peers, Watcher: w,
			Log: testLogger(), SpotCheckEvery: cross, FullBlockEvery: full,
			Tuning: spv.Tuning{MinPeers: len(peers), MinPeersWait: 5 * time.Second},
		})
		require.NoError(t, err)
		require.NoError(t, n.Start(context.Background()))
		defer n.Stop()
		waitSynced(t, n, tip)
		bans := n.Bans()
		require.LessOrEqual(t, len(bans), 0, "honest peers banned: %+v", bans)
		st := n.Status()
		t.Logf("%d peers, cross %d full %d: spot checks %d, full-block checks %d, omissions %d, dropped %d", len(peers), cross, full, st.SpotChecks, st.FullBlockChecks, st.Omissions, st.Dropped)
		return st.BytesReceived
	}
	none, cross, full := sync(-1, -1, two), sync(1, -1, two), sync(-1, 1, two)
	cross2 := sync(1, -1, append(two, honest2.Addr()))
	t.Logf("bytes received, %d blocks: no check %d; every block from a second peer %d (%.2fx); from two second peers (3 peers) %d (%.2fx); every block whole %d (%.2fx)",
		tip-start, none, cross, float64(cross)/float64(none), cross2, float64(cross2)/float64(none), full, float64(full)/float64(none))
	require.Greater(t, cross, none, "checks cost nothing? none %d, cross %d, two second peers %d, full %d", none, cross, cross2, full)
	require.Greater(t, full, none, "checks cost nothing? none %d, cross %d, two second peers %d, full %d", none, cross, cross2, full)
	require.Greater(t, cross2, cross, "checks cost nothing? none %d, cross %d, two second peers %d, full %d", none, cross, cross2, full)
}
