package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/stretchr/testify/require"
)

// The sparse-payment measurement of the client's timing.
const (
	// sparseBlocks and sparseAddrs: the history's blocks and the receive
	// addresses paid in it, first payments in index order (each needs a
	// key past the gap limit the wallet had before it).
	sparseBlocks = 600
	sparseAddrs  = 44
	// sparseSpends is the share of payments spent again (wallet
	// transactions with change to the internal branch).
	sparseSpends = 0.2
	// sparseNoise is the other users' transactions per block.
	sparseNoise = 6
	// sparseFPRate is the wallet's filter target: loose enough that a
	// peer's filter sends false positives, so that the base rate is well
	// below 1 and a behaviour that points can be told from one that
	// does not (at bloomwatch's default rate the filter alone names the
	// wallet's blocks, and no behaviour can add to it). At 0.02 the
	// defended client's larger filter (a reserve of keys) sent 10 to 16
	// false positives beside 59 wallet blocks: base rate 0.79 to 0.86,
	// too high to tell anything.
	sparseFPRate = 0.1
	// liveBlocks, liveInterval and livePayEvery: the live phase, a block
	// every interval with a payment to a fresh address every
	// livePayEvery-th block, through the mempool.
	liveBlocks    = 60
	liveInterval  = 300 * time.Millisecond
	livePayEvery  = 10
	behaviourSeed = 24
)

// behaviourFamily is the number of comparisons the measurement makes
// (blocks and transactions, each for the two signals and their union):
// each is tested at 5 % / behaviourFamily, so that a client whose
// behaviour tells nothing fails the test in at most 5 % of runs.
const behaviourFamily = 6

// TestBehaviourAttackOnSparsePayments syncs an xpub wallet from a real
// btcd regtest chain on which payments are sparse (at most one block in
// ten holds a wallet transaction; 44 payments each to the next unused
// receive address, crossing the gap limit; spends with change), with two
// btcd peers (every block checked against the second, the default), then
// follows a live chain whose payments reach the wallet through the
// mempool, and runs the behaviour attack on the transcript as the peer
// would: its precision, for blocks and for transactions, by each signal
// and together, must be inside the range a random pick of as many
// candidates gives (two-sided exact test, Bonferroni over the six
// comparisons, family level 5 %). The live meter, fed what the client
// received, must read the same as the analyzer, which rebuilt it.
func TestBehaviourAttackOnSparsePayments(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: sparseBlocks, TxsPerBlock: sparseNoise, Keyring: key, Purpose: 84,
		WatchAddrs: sparseAddrs, SpendFraction: sparseSpends, Seed: behaviourSeed})
	require.NoError(t, err)
	walletBlocks := map[int32]bool{}
	for _, tx := range truth.Txs {
		walletBlocks[tx.Height] = true
	}
	require.LessOrEqual(t, len(walletBlocks)*10, sparseBlocks, "chain not sparse: %d wallet blocks of %d, %d addresses paid", len(walletBlocks), sparseBlocks, len(truth.Addresses))
	require.GreaterOrEqual(t, len(truth.Addresses), 40, "chain not sparse: %d wallet blocks of %d, %d addresses paid", len(walletBlocks), sparseBlocks, len(truth.Addresses))
	t.Logf("history: %d blocks (%d-%d), %d wallet transactions in %d blocks, %d addresses; built in %s",
		sparseBlocks, truth.StartHeight+1, truth.TipHeight, len(truth.Txs), len(walletBlocks), len(truth.Addresses), time.Since(start).Round(time.Millisecond))

	// A second btcd that follows the first: the light node's second peer,
	// which every block is checked against (the default), as in the demo.
	secondLog, err := os.Create(filepath.Join(t.TempDir(), "btcd2.log"))
	require.NoError(t, err)
	defer secondLog.Close()
	// --nobanning: with a block every 300 ms, the follower asks for
	// transactions the first node announced and mined away at once;
	// btcd v0.25.0 scores each notfound and banned the first node after
	// two (2 of 4 runs lost their second peer before this).
	second, err := testnet.StartNode(ctx, testnet.Config{Network: "regtest", Log: secondLog, Args: []string{"--nobanning"}})
	require.NoError(t, err)
	defer func() { _ = second.Stop() }()
	require.NoError(t, second.ConnectToCtx(ctx, h.Node()))
	require.NoError(t, second.WaitSynced(ctx, h.Node()))
	dir := filepath.Join(t.TempDir(), "w")
	w, err := wallet.Create(dir, wallet.CreateConfig{Network: "regtest", Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1})
	require.NoError(t, err)
	s, err := session.New(session.Config{Wallet: w,
		Node:     spv.Config{Connect: []string{h.Node().P2PAddr(), second.P2PAddr()}, MaxPeers: 2, FPRate: sparseFPRate},
		LogLevel: slog.LevelWarn, Stderr: io.Discard})
	require.NoError(t, err)
	require.NoError(t, s.Start(ctx))
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()
	waitWatcher(ctx, t, s, h)
	t.Logf("synced in %s", time.Since(start).Round(time.Millisecond))

	drv, err := testnet.StartDriver(ctx, h, testnet.DriverConfig{Interval: liveInterval, Keyring: key, Purpose: 84,
		NextIndex: sparseAddrs, NoisePerBlock: sparseNoise, PayEvery: livePayEvery, SpendEvery: -1, ReorgEvery: -1, Seed: behaviourSeed})
	require.NoError(t, err)
	for drv.Blocks() < liveBlocks && drv.Err() == nil && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, drv.Stop())
	_, err = h.Mine(1) // confirms the last payment
	require.NoError(t, err)
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := second.WaitSynced(wctx, h.Node()); err != nil {
		b, _ := os.ReadFile(secondLog.Name())
		require.NoError(t, err, "second btcd's log:\n%s", b[max(0, len(b)-6000):])
	}
	waitWatcher(ctx, t, s, h)
	stopped = true
	require.NoError(t, s.Stop())
	meter := s.Reading()
	require.NoError(t, w.Close())
	t.Logf("live phase of %d blocks done at %s", liveBlocks, time.Since(start).Round(time.Millisecond))

	records := readTranscript(t, dir)
	// The truth as a user writes it: wallet export-truth.
	truthFile := filepath.Join(t.TempDir(), "truth.txt")
	var out, errb bytes.Buffer
	code := run([]string{"wallet", "export-truth", "--datadir", dir, "--out", truthFile}, &out, &errb)
	require.Equal(t, 0, code, "wallet export-truth exit %d: %s", code, errb.String())
	used, err := readElementFile("--truth", truthFile)
	require.NoError(t, err)
	// The peer is btcd: it filters with btcd's relevance rules.
	rep, err := behaviour.Analyze(ctx, records, nodeChain{rpc: h.Node().RPC()}, used, behaviour.Options{Rules: bip37.RulesBtcd})
	require.NoError(t, err)
	logBehaviour(t, rep)
	checkAnalyzeCommand(t, h, dir, truthFile, rep)
	require.NotNil(t, meter, "the meter has no behaviour reading: %+v", meter)
	require.NotNil(t, meter.Behaviour, "the meter has no behaviour reading: %+v", meter)
	mb := meter.Behaviour
	t.Logf("meter: %d reloads (%d pointed, %d ambiguous), %d re-fetches; blocks %d of %d the wallet's, %v; txs %d of %d, %v",
		mb.Reloads, mb.Pointed, mb.Ambiguous, mb.Refetches, mb.Blocks.Wallet, mb.Blocks.Candidates, mb.Blocks.Score(behaviour.SignalAny),
		mb.Txs.Wallet, mb.Txs.Candidates, mb.Txs.Score(behaviour.SignalAny))
	sameReading(t, mb, rep)
	judgeBehaviour(t, rep)
}

// checkAnalyzeCommand runs the attack as a user would, `bloomwatch
// privacy analyze --attacks behaviour` against the node's RPC with a
// truth file (wallet export-truth's), and checks that its JSON names what behaviour.Analyze named
// and that its table prints the stage.
func checkAnalyzeCommand(t *testing.T, h *testnet.Harness, dir, truth string, want *behaviour.Report) {
	t.Helper()
	user, pass := h.Node().RPCCredentials()
	args := []string{"privacy", "analyze", "--transcript", session.TranscriptPath(dir), "--btcd-rpc", h.Node().RPCAddr(),
		"--rpcuser", user, "--rpcpass", pass, "--attacks", "behaviour", "--server-rules", "btcd", "--truth", truth}
	var out, errb bytes.Buffer
	code := run(append(args, "--json"), &out, &errb)
	require.Equal(t, 0, code, "privacy analyze exit %d: %s", code, errb.String())
	var rep privacy.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	got := rep.Behaviour
	// The scores' suspects and hits agree; their Holm-adjusted p-values
	// and powers are the report's family's, not the attack's alone.
	require.NotNil(t, got, "privacy analyze --json: no behaviour stage")
	gs, ws := got.Blocks.Score(behaviour.SignalAny), want.Blocks.Score(behaviour.SignalAny)
	require.Len(t, got.SuspectBlocks, len(want.SuspectBlocks), "privacy analyze --json: behaviour %+v, want %+v", got, want.Reading)
	require.Equal(t, ws.Suspects, gs.Suspects, "privacy analyze --json: behaviour %+v, want %+v", got, want.Reading)
	require.Equal(t, ws.Hits, gs.Hits, "privacy analyze --json: behaviour %+v, want %+v", got, want.Reading)
	require.Equal(t, ws.PValue, gs.PValue, "privacy analyze --json: behaviour %+v, want %+v", got, want.Reading)
	out.Reset()
	code = run(args, &out, &errb)
	require.Equal(t, 0, code, "privacy analyze exit %d: %s", code, errb.String())
	text := out.String()
	i := strings.Index(text, "behaviour attack")
	require.GreaterOrEqual(t, i, 0, "privacy analyze prints no behaviour stage:\n%s", text)
	require.Contains(t, text[i:], "refetch-start", "privacy analyze prints no behaviour stage:\n%s", text)
	t.Logf("privacy analyze:\n%s", text[i:])
}

// waitWatcher waits until the light node's watcher reaches btcd's tip.
func waitWatcher(ctx context.Context, t *testing.T, s *session.Session, h *testnet.Harness) {
	t.Helper()
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)
	for {
		st := s.Node().Status()
		require.NoError(t, st.Err, "light node")
		if st.WatcherHeight >= tip && st.Synced {
			return
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("watcher at %d, tip %d: %v", st.WatcherHeight, tip, ctx.Err()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logBehaviour logs the attack's figures.
func logBehaviour(t *testing.T, rep *behaviour.Report) {
	t.Helper()
	t.Logf("servings %d, new blocks %d, relays %d; reloads %d (%d added elements, %d pointed, %d ambiguous, median delay %.3f s); re-fetches %d",
		rep.Servings, rep.LiveBlocks, rep.Relays, rep.Reloads, rep.PointingReloads, rep.Pointed, rep.Ambiguous, rep.MedianDelay, rep.Refetches)
	for _, r := range rep.ReloadList {
		t.Logf("  reload seq %d at %d: added %.2f ± %.2f (points %v): pointer %d (-1 relay, -2 none), %d txs, %.3f s after it",
			r.Seq, r.Height, r.Added, r.AddedStdErr, r.Pointing, r.Pointer, r.PointerTxs, r.DelaySeconds)
	}
	for _, r := range rep.RefetchList {
		t.Logf("  re-fetch seq %d: %d-%d, pointer %d", r.Seq, r.From, r.To, r.Pointer)
	}
	t.Logf("  suspect blocks: %v", rep.SuspectBlocks)
	for _, lv := range []struct {
		name string
		l    behaviour.Level
	}{{"blocks", rep.Blocks}, {"txs", rep.Txs}} {
		t.Logf("%s: %d candidates, %d the wallet's, base rate %.3f", lv.name, lv.l.Candidates, lv.l.Wallet, lv.l.BaseRate)
		for _, s := range lv.l.Scores {
			t.Logf("  %v (p %.2g)", s, s.PValue)
		}
	}
}

// sameReading checks that the live meter (fed what the client received)
// and the analyzer (which rebuilt what the peers sent from the
// transcript and the chain, with btcd's relevance rules) read the same:
// the same reloads and re-fetches, the same candidates, the same
// verdicts, suspect blocks and hits within relayDating of each other
// (suspect transactions are logged, not compared: the meter groups the
// relays that came between two records, the rebuild those of one new
// block, and at a loose rate a relay carries many false positives): the
// chain does not date a mempool relay. The rebuild places the relays of
// a new block after the request before that block's own; a payment that
// reached the client before it asked for the block below made the client
// reload before that point, so the rebuild names an earlier sending
// there (one reload in one of four runs), and it names a false positive
// relayed after a reload with the payment relayed before it. (With
// Bitcoin Core's rules against btcd peers the rebuild also missed the
// saturation of btcd's filters once their bits covered the empty
// element: 338 blocks and 1,218 transactions against the 399 and 2,516
// the peers sent, on one run.)
func sameReading(t *testing.T, meter *behaviour.Reading, an *behaviour.Report) {
	t.Helper()
	mb, ab := meter.Blocks.Score(behaviour.SignalAny), an.Blocks.Score(behaviour.SignalAny)
	mt, at := meter.Txs.Score(behaviour.SignalAny), an.Txs.Score(behaviour.SignalAny)
	t.Logf("meter vs analyzer: blocks %d vs %d candidates, %d vs %d the wallet's, %d/%d vs %d/%d suspects hit; txs %d vs %d candidates, %d/%d vs %d/%d",
		meter.Blocks.Candidates, an.Blocks.Candidates, meter.Blocks.Wallet, an.Blocks.Wallet, mb.Hits, mb.Suspects, ab.Hits, ab.Suspects,
		meter.Txs.Candidates, an.Txs.Candidates, mt.Hits, mt.Suspects, at.Hits, at.Suspects)
	near := func(a, b int) bool { return a-b <= relayDating && b-a <= relayDating }
	require.Equal(t, an.Reloads, meter.Reloads, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.Equal(t, an.Pointed, meter.Pointed, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.Equal(t, an.Refetches, meter.Refetches, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.Equal(t, an.Blocks.Candidates, meter.Blocks.Candidates, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.Equal(t, an.Blocks.Wallet, meter.Blocks.Wallet, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.Equal(t, an.Txs.Candidates, meter.Txs.Candidates, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.Equal(t, an.Txs.Wallet, meter.Txs.Wallet, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.Equal(t, ab.Verdict, mb.Verdict, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.Equal(t, at.Verdict, mt.Verdict, "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.True(t, near(mb.Suspects, ab.Suspects), "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.True(t, near(mb.Hits, ab.Hits), "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
	require.True(t, near(mt.Hits, at.Hits), "the meter and the analyzer differ: %d vs %d reloads (%d vs %d pointed), %d vs %d re-fetches; verdicts %q/%q vs %q/%q", meter.Reloads, an.Reloads, meter.Pointed, an.Pointed, meter.Refetches, an.Refetches, mb.Verdict, mt.Verdict, ab.Verdict, at.Verdict)
}

// relayDating is how far apart sameReading lets the meter's and the
// analyzer's suspects and hits be (see there).
const relayDating = 2

// judgeBehaviour fails every comparison whose precision is outside
// chance at the family level.
func judgeBehaviour(t *testing.T, rep *behaviour.Report) {
	t.Helper()
	for _, lv := range []struct {
		name string
		l    behaviour.Level
	}{{"blocks", rep.Blocks}, {"txs", rep.Txs}} {
		require.GreaterOrEqual(t, lv.l.Candidates, 50, "%s: %d candidates, base rate %.3f: too few, or too many the wallet's, to tell an attack that points", lv.name, lv.l.Candidates, lv.l.BaseRate)
		require.LessOrEqual(t, lv.l.BaseRate, 0.5, "%s: %d candidates, base rate %.3f: too few, or too many the wallet's, to tell an attack that points", lv.name, lv.l.Candidates, lv.l.BaseRate)
		for _, s := range lv.l.Scores {
			require.False(t, s.Suspects > 0 && s.PValue < 0.05/behaviourFamily, "%s, %s: precision %.3f [%.3f, %.3f] of %d suspects against a base rate of %.3f (a random pick: %.3f-%.3f): %s, p = %.2g < %.4f", lv.name, s.Signal, s.Precision, s.PrecisionCI.Lo, s.PrecisionCI.Hi, s.Suspects, lv.l.BaseRate, s.Chance.Lo, s.Chance.Hi, s.Verdict, s.PValue, 0.05/behaviourFamily)
		}
	}
}
