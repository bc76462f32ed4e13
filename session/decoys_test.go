package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// syncWith runs one session of cfg (its Wallet opened from spec in dir)
// until it is synced and returns its summary.
func syncWith(t *testing.T, ctx context.Context, dir string, spec wallet.CreateConfig, cfg session.Config) *session.Summary {
	t.Helper()
	w, _, err := session.OpenWallet(dir, spec)
	require.NoError(t, err)
	defer w.Close()
	cfg.Wallet, cfg.UntilSynced, cfg.PeerTimeout, cfg.Stderr = w, true, time.Minute, testWriter{t}
	s, err := session.New(cfg)
	require.NoError(t, err)
	require.NoError(t, s.Start(ctx))
	werr := s.Wait(ctx)
	sum, serr := s.Summary()
	require.NoError(t, errors.Join(werr, s.Stop(), serr))
	return sum
}

// decoyScript returns an output script whose data push is decoy d.
func decoyScript(t *testing.T, d []byte) []byte {
	t.Helper()
	s, err := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(d).Script()
	require.NoError(t, err)
	return s
}

// TestSessionDecoys syncs a wallet with three graph-near decoys against
// a regtest btcd: the wallet equals the truth, the decoys come from its
// counterparties and are persisted, a restart keeps them and puts them
// in its filter, and a payment to a decoy is a false positive the wallet
// does not take, counted as a decoy match, with no omission and no ban
// under a full-block check of every block.
func TestSessionDecoys(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: 30, TxsPerBlock: 3, Keyring: key, WatchAddrs: 6,
		SpendFraction: 0.5, Seed: 11})
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "w")
	spec := wallet.CreateConfig{Network: "regtest", Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
		GapExternal: wallet.DefaultGapExternal, GapInternal: wallet.DefaultGapInternal}
	cfg := session.Config{Node: spv.Config{Connect: []string{h.Node().P2PAddr()}, MaxPeers: 1, Decoys: 3, FullBlockEvery: 1}}

	sum := syncWith(t, ctx, dir, spec, cfg)
	checkTruth(t, "first sync", sum, truth)
	decoys, err := spv.ReadDecoys(session.NodePath(dir))
	require.NoError(t, err)
	require.Len(t, decoys, 3, "%d decoys persisted, summary %d; want 3", len(decoys), sum.Decoys)
	require.Equal(t, 3, sum.Decoys, "%d decoys persisted, summary %d; want 3", len(decoys), sum.Decoys)
	// The meter counts the decoys of the filter the peer holds (the last
	// one sent): decoys chosen after it wait for the next reload point,
	// and this short sync may end before one (the restart below loads
	// all three).
	checkMeterDecoys(t, "first sync", sum, heldDecoys(t, dir, decoys))
	// The funder pays from one reused address: chosen as a decoy, it
	// brings the funder's traffic until it is retired (it brought
	// 104-120 false positives before decoys were retired).
	retired, err := spv.ReadRetiredDecoys(session.NodePath(dir))
	require.NoError(t, err)
	require.Len(t, retired, sum.DecoysRetired, "%d decoys retired on disk, summary %d", len(retired), sum.DecoysRetired)
	limit := (sum.Decoys + sum.DecoysRetired) * (spv.DecoyBusyLimit + 5)
	require.LessOrEqual(t, sum.DecoyMatches, limit, "decoy matches %d above %d for %d decoys (%d retired)", sum.DecoyMatches, limit, sum.Decoys, sum.DecoysRetired)
	firstRecs := readRecords(t, dir)

	// Pay the last decoy (a counterparty's script), mine it, restart.
	pay, err := h.Pay([]*wire.TxOut{wire.NewTxOut(70_000, decoyScript(t, decoys[2]))})
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	again := syncWith(t, ctx, dir, spec, cfg)
	after, err := spv.ReadDecoys(session.NodePath(dir))
	require.NoError(t, err)
	require.Len(t, after, len(decoys), "after the restart %d decoys (summary %d), want the same 3", len(after), again.Decoys)
	require.Equal(t, 3, again.Decoys, "after the restart %d decoys (summary %d), want the same 3", len(after), again.Decoys)
	for i := range decoys {
		require.Equal(t, decoys[i], after[i], "decoy %d changed across the restart: %x -> %x", i, decoys[i], after[i])
	}
	held := heldDecoys(t, dir, decoys)
	require.Equal(t, 3, held, "the restart's last filter holds %d of the 3 decoys", held)
	checkMeterDecoys(t, "restart", again, 3)
	require.Equal(t, truth.Balance, again.BalanceSat, "after the decoy payment: balance %d txs %d; truth %d %d", again.BalanceSat, len(again.Txs), truth.Balance, len(truth.Txs))
	require.Len(t, again.Txs, len(truth.Txs), "after the decoy payment: balance %d txs %d; truth %d %d", again.BalanceSat, len(again.Txs), truth.Balance, len(truth.Txs))
	require.True(t, sameUTXOs(again, truth), "after the decoy payment: balance %d txs %d; truth %d %d", again.BalanceSat, len(again.Txs), truth.Balance, len(truth.Txs))
	id := pay.TxHash().String()
	require.True(t, slices.Contains(again.FalsePosTxids, id), "decoy payment %s not among the false positives %v", id, again.FalsePosTxids)
	for _, tx := range again.Txs {
		require.NotEqual(t, id, tx.Txid, "decoy payment %s in the wallet", id)
	}
	require.GreaterOrEqual(t, again.DecoyMatches, 1, "decoy matches %d of %d false positives", again.DecoyMatches, again.FalsePositives)
	require.LessOrEqual(t, again.DecoyMatches, again.FalsePositives, "decoy matches %d of %d false positives", again.DecoyMatches, again.FalsePositives)
	require.Equal(t, 0, again.Omissions, "omissions %d, bans %v, full-block checks %d", again.Omissions, again.Bans, again.FullBlockChecks)
	require.Len(t, again.Bans, 0, "omissions %d, bans %v, full-block checks %d", again.Omissions, again.Bans, again.FullBlockChecks)
	require.NotEqual(t, 0, again.FullBlockChecks, "omissions %d, bans %v, full-block checks %d", again.Omissions, again.Bans, again.FullBlockChecks)
	// The restart's filters hold every decoy (the transcript is what the
	// peers received).
	recs := readRecords(t, dir)
	n := 0
	for _, r := range recs[len(firstRecs):] {
		if r.Kind != transcript.KindFilterLoad {
			continue
		}
		n++
		f, err := bip37.Deserialize(r.Filter)
		require.NoError(t, err)
		for _, d := range decoys {
			require.True(t, f.Matches(d), "filterload %d (%s) lacks decoy %x", r.Seq, r.Reason, d)
		}
		for _, d := range retired {
			require.False(t, f.Matches(d), "filterload %d (%s) holds retired decoy %x", r.Seq, r.Reason, d)
		}
	}
	require.NotEqual(t, 0, n, "the restart sent no filter")
	t.Logf("decoys %x, retired %x; first sync %d false positives (%d decoy matches); restart %d (%d)",
		decoys, retired, sum.FalsePositives, sum.DecoyMatches, again.FalsePositives, again.DecoyMatches)
}

// checkTruth compares a summary with the truth of a built chain.
func checkTruth(t *testing.T, what string, sum *session.Summary, truth *testnet.Truth) {
	t.Helper()
	require.Equal(t, truth.TipHash.String(), sum.TipHash, "%s: tip %s balance %d txs %d utxos %d; truth %s %d %d %d", what, sum.TipHash, sum.BalanceSat, len(sum.Txs), len(sum.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
	require.Equal(t, truth.Balance, sum.BalanceSat, "%s: tip %s balance %d txs %d utxos %d; truth %s %d %d %d", what, sum.TipHash, sum.BalanceSat, len(sum.Txs), len(sum.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
	require.Len(t, sum.Txs, len(truth.Txs), "%s: tip %s balance %d txs %d utxos %d; truth %s %d %d %d", what, sum.TipHash, sum.BalanceSat, len(sum.Txs), len(sum.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
	require.True(t, sameUTXOs(sum, truth), "%s: tip %s balance %d txs %d utxos %d; truth %s %d %d %d", what, sum.TipHash, sum.BalanceSat, len(sum.Txs), len(sum.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
}

// sameUTXOs reports whether the summary's unspent outputs are the truth's.
func sameUTXOs(sum *session.Summary, truth *testnet.Truth) bool {
	if len(sum.UTXOs) != len(truth.UTXOs) {
		return false
	}
	have := map[string]int64{}
	for _, u := range sum.UTXOs {
		have[u.Outpoint] = u.ValueSat
	}
	for _, u := range truth.UTXOs {
		op := u.OutPoint()
		if v, ok := have[op.String()]; !ok || v != u.Value {
			return false
		}
	}
	return true
}

// heldDecoys counts the decoys the last filter of dir's transcript holds.
func heldDecoys(t *testing.T, dir string, decoys [][]byte) int {
	t.Helper()
	held := 0
	if last := lastFilter(t, dir); last != nil {
		for _, d := range decoys {
			if last.Matches(d) {
				held++
			}
		}
	}
	return held
}

// checkMeterDecoys checks that the meter counts the held decoys of the
// peer's filter as certain false positives: they cap the expected
// precision at N/(N+D).
func checkMeterDecoys(t *testing.T, what string, sum *session.Summary, held int) {
	t.Helper()
	p := sum.Privacy
	require.NotNil(t, p, "%s: meter with %d decoys in the last filter: %+v", what, held, p)
	require.Equal(t, held, p.Decoys, "%s: meter with %d decoys in the last filter: %+v", what, held, p)
	require.GreaterOrEqual(t, p.IntersectionFP, float64(held), "%s: meter with %d decoys in the last filter: %+v", what, held, p)
	require.NotEqual(t, 0, p.Members, "%s: meter with %d decoys in the last filter: %+v", what, held, p)
	require.LessOrEqual(t, p.Precision, float64(p.Members)/float64(p.Members+held)+1e-9, "%s: meter with %d decoys in the last filter: %+v", what, held, p)
}

// lastFilter returns the filter of the last filterload of dir's
// transcript (nil when there is none).
func lastFilter(t *testing.T, dir string) *bip37.Filter {
	t.Helper()
	recs := readRecords(t, dir)
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == transcript.KindFilterLoad {
			f, err := recs[i].Bloom()
			require.NoError(t, err)
			return f
		}
	}
	return nil
}

// readRecords reads the transcript of the wallet in dir.
func readRecords(t *testing.T, dir string) []transcript.Record {
	t.Helper()
	raw, err := os.ReadFile(session.TranscriptPath(dir))
	require.NoError(t, err)
	recs, err := transcript.Read(bytesReader(raw))
	require.NoError(t, err)
	return recs
}
