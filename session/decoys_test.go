package session_test

import (
	"bytes"
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
)

// syncWith runs one session of cfg (its Wallet opened from spec in dir)
// until it is synced and returns its summary.
func syncWith(t *testing.T, ctx context.Context, dir string, spec wallet.CreateConfig, cfg session.Config) *session.Summary {
	t.Helper()
	w, _, err := session.OpenWallet(dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cfg.Wallet, cfg.UntilSynced, cfg.PeerTimeout, cfg.Stderr = w, true, time.Minute, testWriter{t}
	s, err := session.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	werr := s.Wait(ctx)
	sum, serr := s.Summary()
	if err := errors.Join(werr, s.Stop(), serr); err != nil {
		t.Fatal(err)
	}
	return sum
}

// decoyScript returns an output script whose data push is decoy d.
func decoyScript(t *testing.T, d []byte) []byte {
	t.Helper()
	s, err := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(d).Script()
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: 30, TxsPerBlock: 3, Keyring: key, WatchAddrs: 6,
		SpendFraction: 0.5, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "w")
	spec := wallet.CreateConfig{Network: "regtest", Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
		GapExternal: wallet.DefaultGapExternal, GapInternal: wallet.DefaultGapInternal}
	cfg := session.Config{Node: spv.Config{Connect: []string{h.Node().P2PAddr()}, MaxPeers: 1, Decoys: 3, FullBlockEvery: 1}}

	sum := syncWith(t, ctx, dir, spec, cfg)
	checkTruth(t, "first sync", sum, truth)
	decoys, err := spv.ReadDecoys(session.NodePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(decoys) != 3 || sum.Decoys != 3 {
		t.Fatalf("%d decoys persisted, summary %d; want 3", len(decoys), sum.Decoys)
	}
	// The meter counts the decoys of the filter the peer holds (the last
	// one sent): decoys chosen after it wait for the next reload point,
	// and this short sync may end before one (the restart below loads
	// all three).
	checkMeterDecoys(t, "first sync", sum, heldDecoys(t, dir, decoys))
	// The funder pays from one reused address: chosen as a decoy, it
	// brings the funder's traffic until it is retired (it brought
	// 104-120 false positives before decoys were retired).
	retired, err := spv.ReadRetiredDecoys(session.NodePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(retired) != sum.DecoysRetired {
		t.Fatalf("%d decoys retired on disk, summary %d", len(retired), sum.DecoysRetired)
	}
	if limit := (sum.Decoys + sum.DecoysRetired) * (spv.DecoyBusyLimit + 5); sum.DecoyMatches > limit {
		t.Fatalf("decoy matches %d above %d for %d decoys (%d retired)", sum.DecoyMatches, limit, sum.Decoys, sum.DecoysRetired)
	}
	firstRecs := readRecords(t, dir)

	// Pay the last decoy (a counterparty's script), mine it, restart.
	pay, err := h.Pay([]*wire.TxOut{wire.NewTxOut(70_000, decoyScript(t, decoys[2]))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Mine(1); err != nil {
		t.Fatal(err)
	}
	again := syncWith(t, ctx, dir, spec, cfg)
	after, err := spv.ReadDecoys(session.NodePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(decoys) || again.Decoys != 3 {
		t.Fatalf("after the restart %d decoys (summary %d), want the same 3", len(after), again.Decoys)
	}
	for i := range decoys {
		if !bytes.Equal(after[i], decoys[i]) {
			t.Fatalf("decoy %d changed across the restart: %x -> %x", i, decoys[i], after[i])
		}
	}
	if held := heldDecoys(t, dir, decoys); held != 3 {
		t.Fatalf("the restart's last filter holds %d of the 3 decoys", held)
	}
	checkMeterDecoys(t, "restart", again, 3)
	if again.BalanceSat != truth.Balance || len(again.Txs) != len(truth.Txs) || !sameUTXOs(again, truth) {
		t.Fatalf("after the decoy payment: balance %d txs %d; truth %d %d", again.BalanceSat, len(again.Txs), truth.Balance, len(truth.Txs))
	}
	id := pay.TxHash().String()
	if !slices.Contains(again.FalsePosTxids, id) {
		t.Fatalf("decoy payment %s not among the false positives %v", id, again.FalsePosTxids)
	}
	for _, tx := range again.Txs {
		if tx.Txid == id {
			t.Fatalf("decoy payment %s in the wallet", id)
		}
	}
	if again.DecoyMatches < 1 || again.DecoyMatches > again.FalsePositives {
		t.Fatalf("decoy matches %d of %d false positives", again.DecoyMatches, again.FalsePositives)
	}
	if again.Omissions != 0 || len(again.Bans) != 0 || again.FullBlockChecks == 0 {
		t.Fatalf("omissions %d, bans %v, full-block checks %d", again.Omissions, again.Bans, again.FullBlockChecks)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range decoys {
			if !f.Matches(d) {
				t.Errorf("filterload %d (%s) lacks decoy %x", r.Seq, r.Reason, d)
			}
		}
		for _, d := range retired {
			if f.Matches(d) {
				t.Errorf("filterload %d (%s) holds retired decoy %x", r.Seq, r.Reason, d)
			}
		}
	}
	if n == 0 {
		t.Fatal("the restart sent no filter")
	}
	t.Logf("decoys %x, retired %x; first sync %d false positives (%d decoy matches); restart %d (%d)",
		decoys, retired, sum.FalsePositives, sum.DecoyMatches, again.FalsePositives, again.DecoyMatches)
}

// checkTruth compares a summary with the truth of a built chain.
func checkTruth(t *testing.T, what string, sum *session.Summary, truth *testnet.Truth) {
	t.Helper()
	if sum.TipHash != truth.TipHash.String() || sum.BalanceSat != truth.Balance || len(sum.Txs) != len(truth.Txs) || !sameUTXOs(sum, truth) {
		t.Fatalf("%s: tip %s balance %d txs %d utxos %d; truth %s %d %d %d", what, sum.TipHash, sum.BalanceSat,
			len(sum.Txs), len(sum.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
	}
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
	if p := sum.Privacy; p == nil || p.Decoys != held || p.IntersectionFP < float64(held) || p.Members == 0 ||
		p.Precision > float64(p.Members)/float64(p.Members+held)+1e-9 {
		t.Fatalf("%s: meter with %d decoys in the last filter: %+v", what, held, p)
	}
}

// lastFilter returns the filter of the last filterload of dir's
// transcript (nil when there is none).
func lastFilter(t *testing.T, dir string) *bip37.Filter {
	t.Helper()
	recs := readRecords(t, dir)
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == transcript.KindFilterLoad {
			f, err := recs[i].Bloom()
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return nil
}

// readRecords reads the transcript of the wallet in dir.
func readRecords(t *testing.T, dir string) []transcript.Record {
	t.Helper()
	raw, err := os.ReadFile(session.TranscriptPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := transcript.Read(bytesReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
