package spv_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// hrObserved is what the node did about one hostile peer.
type hrObserved struct {
	applied, skipped int
	banned           bool
	banReason        string
	disconnects      int
	discReason       string
	fpReloads        int
	dropped          int
	omissions        int
	truthDiffs       []string // the wallet's differences from the truth
	// hostile is the hostile peer's address; downloads the download
	// peers the node picked, in order.
	hostile   string
	downloads []string
}

// hrString renders the observation as a table row (docs/RELIABILITY.md
// section 1 quotes its reasons).
func (o hrObserved) hrString(s hostile.Scenario) string {
	react := "kept"
	switch {
	case o.banned:
		react = "banned (" + o.banReason + ")"
	case o.disconnects > 0:
		react = fmt.Sprintf("disconnected x%d (%s)", o.disconnects, o.discReason)
	}
	return fmt.Sprintf("| %s | %s | %s | applied %d, skipped %d; dropped txs %d, omissions %d, fp reloads %d; wallet = truth: %v |",
		s, s.Expected(), react, o.applied, o.skipped, o.dropped, o.omissions, o.fpReloads, len(o.truthDiffs) == 0)
}

// TestHostileReactions syncs the real watch-only wallet (wallet.Wallet)
// from one hostile peer (listed first, and waited for, so it is the
// download peer: hostileFirstWait) and one honest btcd, for every hostile.Scenario, and checks the node's reaction
// through its events and ban list, that the misbehaviour really happened
// (the hostile peer's own count), and that the wallet ends equal to the
// chain's truth: same transactions at the same heights, same UTXOs, same
// balance. It logs a row per scenario (BLOOMWATCH_REACTIONS_OUT writes
// them to a file): docs/RELIABILITY.md section 1 quotes their reasons.
func TestHostileReactions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	ctx := context.Background()
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{
		Blocks: 30, TxsPerBlock: 4, Keyring: k, WatchAddrs: 4, PaymentsPerAddr: 2, SpendFraction: 0.5, Seed: 77,
	})
	require.NoError(t, err)
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	var rows []string
	for _, sc := range hostile.Scenarios() {
		t.Run(string(sc), func(t *testing.T) {
			o := hrRun(t, h, net, truth, sc)
			rows = append(rows, o.hrString(sc))
			hrCheck(t, sc, o)
		})
	}
	t.Logf("observed reactions:\n%s", strings.Join(rows, "\n"))
	if out := os.Getenv("BLOOMWATCH_REACTIONS_OUT"); out != "" {
		require.NoError(t, os.WriteFile(out, []byte(strings.Join(rows, "\n")+"\n"), 0o644))
	}
}

// hrCheck compares an observation with the scenario's expected reaction.
func hrCheck(t *testing.T, sc hostile.Scenario, o hrObserved) {
	t.Helper()
	require.Empty(t, o.truthDiffs, "wallet differs from the truth")
	// The premise of every row: the peer listed first served the
	// download (a NoBloom peer is refused at its version message).
	require.False(t, sc != hostile.NoBloom && (len(o.downloads) == 0 || o.downloads[0] != o.hostile), "the hostile peer %s was not the first download peer (picked: %v): the sync did not run through it", o.hostile, o.downloads)
	require.False(t, sc != hostile.Honest && o.applied == 0, "the misbehaviour was never applied (skipped %d): the scenario tested nothing", o.skipped)
	require.Equal(t, 0, o.fpReloads, "%d filter reloads for false-positive drift: a peer made the node reload (bitcoinj 876)", o.fpReloads)
	switch sc.Expected() {
	case hostile.ReactNone:
		require.False(t, o.banned, "honest peer banned %v / disconnected %d (%s)", o.banned, o.disconnects, o.discReason)
		require.LessOrEqual(t, o.disconnects, 0, "honest peer banned %v / disconnected %d (%s)", o.banned, o.disconnects, o.discReason)
	case hostile.ReactBan:
		require.True(t, o.banned, "not banned (disconnects %d: %s)", o.disconnects, o.discReason)
	case hostile.ReactDisconnect, hostile.ReactRetry:
		require.False(t, !o.banned && o.disconnects == 0, "neither banned nor disconnected")
	case hostile.ReactIgnore:
		// A valid fork is no offence; failing to serve the blocks of the
		// chain it announced is (misbehaviorNotServed).
		require.False(t, sc == hostile.LowWorkFork && o.banned && !strings.Contains(o.banReason, "not served"), "banned for serving a valid (low-work) fork: %s", o.banReason)
	}
	require.False(t, sc == hostile.OmitMatchedTx && o.omissions == 0, "the omission was not detected by asking the second peer")
}

// hrRun runs one scenario and returns what happened.
func hrRun(t *testing.T, h *testnet.Harness, net *netparams.Network, truth *testnet.Truth, sc hostile.Scenario) hrObserved {
	t.Helper()
	hp, err := hostile.Start(context.Background(), hostile.Config{
		Upstream: h.Node().RPC(), Params: h.Params(), Scenario: sc, ForkHeight: truth.StartHeight + 5,
	})
	require.NoError(t, err)
	defer hp.Close()
	dir := t.TempDir()
	w, err := wallet.Create(filepath.Join(dir, "wallet"), wallet.CreateConfig{
		Network: net.Name, Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
	})
	require.NoError(t, err)
	defer w.Close()
	spvDir := filepath.Join(dir, "spv")
	dl := newDLLog()
	wait := hostileFirstWait(sc)
	n, err := spv.New(spv.Config{
		Network: net, DataDir: spvDir, Connect: []string{hp.Addr(), h.Node().P2PAddr()}, Watcher: w,
		SpotCheckEvery: 1,
		Log:            slog.New(dl),
		Tuning:         spv.Tuning{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond, StallTimeout: 2 * time.Second, TickInterval: 200 * time.Millisecond, MinPeers: 2, MinPeersWait: wait},
	})
	require.NoError(t, err)
	sub := n.Subscribe()
	defer sub.Cancel()
	require.NoError(t, n.Start(context.Background()))
	defer func() {
		require.NoError(t, n.Stop(), "stop")
	}()

	o := hrObserved{hostile: hp.Addr()}
	ctx, cancel := context.WithTimeout(context.Background(), wait+60*time.Second)
	defer cancel()
	for synced := false; !synced; {
		select {
		case ev, ok := <-sub.Events():
			require.True(t, ok, "event stream closed before sync")
			hrNote(&o, hp.Addr(), ev)
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("not synced: status %+v", n.Status()))
		}
		st := n.Status()
		synced = st.Synced && st.WatcherHeight >= truth.TipHeight && st.WatcherHash == truth.TipHash
	}
	// Events already queued belong to the sync too.
	for drained := false; !drained; {
		select {
		case ev := <-sub.Events():
			hrNote(&o, hp.Addr(), ev)
		default:
			drained = true
		}
	}
	for _, b := range n.Bans() {
		if b.Addr == hp.Addr() && !o.banned {
			o.banned, o.banReason = true, b.Reason
		}
	}
	st := n.Status()
	o.dropped, o.omissions = st.Dropped, st.Omissions
	hs := hp.Stats()
	o.applied, o.skipped = hs.Applied, hs.Skipped
	o.downloads = dl.Picks()
	require.NoError(t, w.Flush())
	o.truthDiffs = hrWalletDiffs(t, w, truth)
	o.fpReloads = hrFPReloads(t, spvDir)
	return o
}

// hrNote records one event about the hostile peer.
func hrNote(o *hrObserved, addr string, ev spv.Event) {
	switch e := ev.(type) {
	case spv.PeerBanned:
		if e.Addr == addr && !o.banned {
			o.banned, o.banReason = true, e.Reason
		}
	case spv.PeerDisconnected:
		if e.Addr == addr {
			o.disconnects++
			if o.discReason == "" {
				o.discReason = e.Reason
			}
		}
	}
}

// hrWalletDiffs compares the wallet's transactions, UTXOs and balance
// with the truth and returns every difference.
func hrWalletDiffs(t *testing.T, w *wallet.Wallet, truth *testnet.Truth) []string {
	t.Helper()
	var diffs []string
	txs, err := w.Txs()
	require.NoError(t, err)
	got := map[chainhash.Hash]int32{}
	for _, tx := range txs {
		got[tx.Txid] = tx.Height
	}
	for _, tx := range truth.Txs {
		if h, found := got[tx.Txid]; !found || h != tx.Height {
			diffs = append(diffs, fmt.Sprintf("wallet tx %v: height %d (found %v), truth %d", tx.Txid, h, found, tx.Height))
		}
		delete(got, tx.Txid)
	}
	for id, h := range got {
		diffs = append(diffs, fmt.Sprintf("wallet has tx %v at %d that the truth lacks", id, h))
	}
	utxos, err := w.UTXOs()
	require.NoError(t, err)
	var have, want []string
	for _, u := range utxos {
		have = append(have, fmt.Sprintf("%v:%d=%d", u.Txid, u.Index, int64(u.Amount)))
	}
	for _, u := range truth.UTXOs {
		want = append(want, fmt.Sprintf("%v:%d=%d", u.Txid, u.Vout, u.Value))
	}
	sort.Strings(have)
	sort.Strings(want)
	if !slices.Equal(have, want) {
		diffs = append(diffs, fmt.Sprintf("utxos %v, truth %v", have, want))
	}
	bal, err := w.Balance()
	require.NoError(t, err)
	if int64(bal.Confirmed) != truth.Balance || bal.Unconfirmed != 0 {
		diffs = append(diffs, fmt.Sprintf("balance %+v, truth %d", bal, truth.Balance))
	}
	return diffs
}

// hrFPReloads counts filterloads sent for false-positive drift.
func hrFPReloads(t *testing.T, dir string) int {
	t.Helper()
	recs := readTranscript(t, dir)
	n := 0
	for _, r := range recs {
		if r.Reason == transcript.ReasonFPDrift {
			n++
		}
	}
	return n
}

// TestHostileStreamSimnet runs the byte-stream scenarios on simnet: btcd's
// peer package forgives malformed messages from localhost on regtest (its
// isAllowedReadError, meant for btcd's own regression tests), so on regtest
// the node only drops such a peer when it stalls; on any other network the
// read error must disconnect it at once.
func TestHostileStreamSimnet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{Network: "simnet"})
	k, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(context.Background(), testnet.ChainSpec{
		Blocks: 20, TxsPerBlock: 3, Keyring: k, WatchAddrs: 3, PaymentsPerAddr: 1, Seed: 78,
	})
	require.NoError(t, err)
	net, err := netparams.Lookup("simnet")
	require.NoError(t, err)
	var rows []string
	for _, sc := range []hostile.Scenario{hostile.Garbage, hostile.Oversized} {
		t.Run(string(sc), func(t *testing.T) {
			o := hrRun(t, h, net, truth, sc)
			rows = append(rows, o.hrString(sc))
			hrCheck(t, sc, o)
			require.False(t, o.banned, "want an immediate disconnect on the read error, got banned %v, %d disconnects (%s)", o.banned, o.disconnects, o.discReason)
			require.NotEqual(t, 0, o.disconnects, "want an immediate disconnect on the read error, got banned %v, %d disconnects (%s)", o.banned, o.disconnects, o.discReason)
			require.NotContains(t, o.discReason, "stall", "want an immediate disconnect on the read error, got banned %v, %d disconnects (%s)", o.banned, o.disconnects, o.discReason)
		})
	}
	t.Logf("observed reactions (simnet):\n%s", strings.Join(rows, "\n"))
}
