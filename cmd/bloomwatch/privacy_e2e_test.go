package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/stretchr/testify/require"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// nodeChain is the adversary's chain read over btcd's RPC client.
type nodeChain struct{ rpc *rpcclient.Client }

// BestHeight implements element.Chain.
func (c nodeChain) BestHeight() (int32, error) {
	n, err := c.rpc.GetBlockCount()
	return int32(n), err
}

// BlockAt implements element.Chain.
func (c nodeChain) BlockAt(h int32) (*wire.MsgBlock, error) {
	hash, err := c.rpc.GetBlockHash(int64(h))
	if err != nil {
		return nil, err
	}
	return c.rpc.GetBlock(hash)
}

// TestPrivacyOfARealSync syncs a wallet from a real btcd with a loose
// filter, then plays the full node: it replays the transcript the sync
// recorded against every output script on that chain, with the wallet's
// real elements as the truth, and checks that the adversary finds every
// wallet element and that the measured false-positive anonymity set agrees
// with the formula's expectation within Poisson bounds.
func TestPrivacyOfARealSync(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth := syncChain(t, testnet.ChainSpec{Blocks: 150, TxsPerBlock: 10, WatchAddrs: 10, SpendFraction: 0.3, Seed: 11})
	dir := filepath.Join(t.TempDir(), "w")
	sum := runSyncJSON(t, "--datadir", dir, "--network", "regtest", "--xpub", truth.Xpub, "--fp-rate", "0.05",
		"--birthday", itoa(truth.StartHeight+1), "--connect", h.Node().P2PAddr())
	checkOneFilterNumber(t, dir, sum)

	f, err := os.Open(session.TranscriptPath(dir))
	require.NoError(t, err)
	defer f.Close()
	records, err := transcript.Read(f)
	require.NoError(t, err, "transcript: %d records", len(records))
	require.NotEmpty(t, records, "transcript: %d records, %v", len(records), err)
	w, err := wallet.Open(dir)
	require.NoError(t, err)
	addrs, err := w.Addresses()
	_ = w.Close()
	require.NoError(t, err)
	var truthCands []element.Candidate
	for _, a := range addrs {
		if !a.Used {
			continue // never on chain: not in the universe
		}
		el, err := hex.DecodeString(a.Element)
		require.NoError(t, err)
		truthCands = append(truthCands, element.Candidate{Forms: [][]byte{el}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	chain := nodeChain{rpc: h.Node().RPC()}
	tip, err := chain.BestHeight()
	require.NoError(t, err)
	universe, err := element.ChainUniverse(ctx, chain, tip)
	require.NoError(t, err)
	rep, err := privacy.Analyze(ctx, privacy.Input{
		Records: records, Universe: element.Stream(universe), Truth: truthCands, Chain: chain,
		Attacks: privacy.Attacks{Intersection: true},
	})
	require.NoError(t, err)
	single := rep.Curve(privacy.StageSingle)
	require.NotNil(t, single, "no single-filter curve: %+v", rep.Curves)
	require.NotEmpty(t, single.Points, "no single-filter curve: %+v", rep.Curves)
	last := single.Points[len(single.Points)-1]
	t.Logf("universe %d candidates, %d wallet elements on chain, %d filters; latest filter: %d matched, %d false positives, %.2f expected, recall %.3f",
		rep.Universe, rep.Members, len(rep.Filters), last.Matched, last.FalsePositives, last.ExpectedFP, last.Recall)
	require.Equal(t, float64(1), last.Recall, "recall %.3f: the adversary must find every used wallet element", last.Recall)
	bound := 4*math.Sqrt(last.ExpectedFP) + 3
	require.InDelta(t, last.ExpectedFP, float64(last.FalsePositives), bound, "false positives %d, expected %.2f: outside +-%.1f", last.FalsePositives, last.ExpectedFP, bound)
	// The requests are in the transcript too (version 3 getdata
	// records): the first block asked is the birthday, and every block
	// from it to the tip was asked.
	q := rep.Requests
	require.NotNil(t, q, "requests %+v: want blocks %d..%d", q, truth.StartHeight+1, truth.TipHeight)
	require.EqualValues(t, truth.StartHeight+1, q.FirstHeight, "requests %+v: want blocks %d..%d", q, truth.StartHeight+1, truth.TipHeight)
	require.GreaterOrEqual(t, q.Blocks, int64(truth.TipHeight-truth.StartHeight), "requests %+v: want blocks %d..%d", q, truth.StartHeight+1, truth.TipHeight)
	t.Logf("requests: %d records, %d blocks from %d; %d blocks asked again from %v", q.Records, q.Blocks, q.FirstHeight, q.ReAskedBlocks, q.ReAsked)
}

// checkOneFilterNumber checks that a filter has one number everywhere: its
// filterload's transcript record number (seq) is sync --json's filter.seq
// for the last one, and privacy analyze's number for each, in the text
// table ("#183") and the JSON (the table said "gen 11" for the dashboard's
// "Filter #183" before).
func checkOneFilterNumber(t *testing.T, dir string, sum *session.Summary) {
	t.Helper()
	var loads []uint64
	for _, r := range readTranscript(t, dir) {
		if r.Kind == transcript.KindFilterLoad {
			loads = append(loads, r.Seq)
		}
	}
	require.NotEmpty(t, loads, "sync --json filter.seq %d, last filterload record %v", sum.Filter.Seq, loads)
	require.Equal(t, loads[len(loads)-1], sum.Filter.Seq, "sync --json filter.seq %d, last filterload record %v", sum.Filter.Seq, loads)
	args := []string{"privacy", "analyze", "--transcript", session.TranscriptPath(dir), "--synthetic", "1000"}
	code, out, errOut := runCLI(t, append(args, "--json"))
	var rep struct {
		Filters []map[string]any `json:"filters"`
	}
	require.Equal(t, 0, code, "privacy analyze --json: exit %d, %d filters for %d filterloads: %s", code, len(rep.Filters), len(loads), errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "privacy analyze --json: exit %d, %d filters for %d filterloads: %s", code, len(rep.Filters), len(loads), errOut)
	require.Len(t, rep.Filters, len(loads), "privacy analyze --json: exit %d, %d filters for %d filterloads: %s", code, len(rep.Filters), len(loads), errOut)
	for i, f := range rep.Filters {
		seq, _ := f["seq"].(float64)
		require.Equal(t, loads[i], uint64(seq), "analyze JSON filter %d: seq %v, want %d", i, f["seq"], loads[i])
		_, ok := f["generation"]
		require.False(t, ok, "analyze JSON filter %d has a second number, generation", i)
	}
	code, out, errOut = runCLI(t, args)
	require.Equal(t, 0, code, "privacy analyze: exit %d: %s", code, errOut)
	for _, seq := range loads {
		require.Contains(t, out, fmt.Sprintf("\n#%d ", seq), "privacy analyze's filter table lacks #%d:\n%s", seq, out)
	}
}

// modelCheckLevel is the Poisson level the end-to-end checks of the
// joint model use (99.9 %).
const modelCheckLevel = 0.999

// supplementaryLevel is the Poisson level of the checks beyond the
// issue's (the two-form test on a real chain).
const supplementaryLevel = 1 - 1e-6

// modelTargetFP is the expected intersection the synthetic universe of
// the end-to-end checks is sized for, when its size allows.
const modelTargetFP = 25

// maxModelUniverse bounds that universe (a scan of a few seconds).
const maxModelUniverse = 20_000_000

// readTranscript reads the transcript of the wallet in dir.
func readTranscript(t *testing.T, dir string) []transcript.Record {
	t.Helper()
	f, err := os.Open(session.TranscriptPath(dir))
	require.NoError(t, err)
	defer f.Close()
	records, err := transcript.Read(f)
	require.NoError(t, err, "transcript: %d records", len(records))
	require.NotEmpty(t, records, "transcript: %d records, %v", len(records), err)
	return records
}

// checkModelAgainstScan plays the colluding peers on a wallet's
// transcript: it scans a synthetic universe (every match a false
// positive) through every filter and checks that the meter's expected
// intersection (the sync's privacy reading, rescaled to the universe)
// and the analyzer's agree with the count measured, inside the 99.9 %
// Poisson range, and that both use the same joint rate. It returns the
// universe size, the expected count and the measured one.
func checkModelAgainstScan(t *testing.T, records []transcript.Record, reading *privacy.Reading) (uint64, float64, uint64) {
	t.Helper()
	require.NotNil(t, reading, "no privacy reading: %+v", reading)
	require.Greater(t, reading.IntersectionRate, float64(0), "no privacy reading: %+v", reading)
	u := uint64(maxModelUniverse)
	if want := math.Ceil(modelTargetFP / reading.IntersectionRate); want < maxModelUniverse {
		u = uint64(want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := privacy.Analyze(ctx, privacy.Input{Records: records, Universe: element.Stream(scan.Synthetic{Seed: 14, Count: u}),
		Attacks: privacy.Attacks{Intersection: true}})
	require.NoError(t, err)
	c := rep.Curve(privacy.StageIntersection)
	p := c.Points[len(c.Points)-1]
	require.Equal(t, reading.IntersectionRate, p.FPRate, "joint rate: analyzer %g, meter %g", p.FPRate, reading.IntersectionRate)
	meter := reading.IntersectionRate * float64(u)
	for _, e := range []struct {
		who      string
		expected float64
	}{{"meter", meter}, {"analyzer", p.ExpectedFP}} {
		lo, hi := stats.PoissonRange(e.expected, modelCheckLevel)
		if e.expected <= 0 {
			lo, hi = 0, 0
		}
		require.GreaterOrEqual(t, p.Matched, lo, "%s: expected %.3g of %d synthetic candidates in the intersection of %d filters, measured %d: outside [%d, %d]", e.who, e.expected, u, p.Filters, p.Matched, lo, hi)
		require.LessOrEqual(t, p.Matched, hi, "%s: expected %.3g of %d synthetic candidates in the intersection of %d filters, measured %d: outside [%d, %d]", e.who, e.expected, u, p.Filters, p.Matched, lo, hi)
	}
	t.Logf("%d filters, %d synthetic candidates: intersection measured %d, expected %.3g (meter %.3g), independent product %.3g",
		p.Filters, u, p.Matched, p.ExpectedFP, meter, p.IndependentFP)
	return u, p.ExpectedFP, p.Matched
}

// TestPrivacyModelOnDemoTranscript runs `bloomwatch demo --until-synced
// --json` (a regtest btcd on 127.0.0.1, the demo's chain and wallet) and
// checks the joint model on its transcript: the meter's reading in the
// summary's privacy block and the analyzer agree with the intersection
// measured on a synthetic universe.
func TestPrivacyModelOnDemoTranscript(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	var out, errb bytes.Buffer
	code := run([]string{"demo", "--until-synced", "--json", "--log-level", "warn", "--datadir", dir}, &out, &errb)
	require.Equal(t, 0, code, "demo exit %d: %s", code, errb.String())
	checkJSONKeys(t, "bloomwatch demo", out.Bytes())
	var sum session.Summary
	require.NoError(t, json.Unmarshal(out.Bytes(), &sum), "decode summary")
	records := readTranscript(t, dir)
	// With the lookahead reserve the demo's first sync needs no
	// reload for new keys: its peers get one filter, so the joint model
	// over several filters is checked by
	// TestPrivacyModelOnRealSyncWithReloads (--lookahead 0) instead.
	require.NotNil(t, sum.Privacy, "privacy block %+v: want a filter and the universe's source", sum.Privacy)
	require.GreaterOrEqual(t, sum.Privacy.Filters, 1, "privacy block %+v: want a filter and the universe's source", sum.Privacy)
	require.Contains(t, sum.Privacy.UniverseSource, session.UniverseFile, "privacy block %+v: want a filter and the universe's source", sum.Privacy)
	checkModelAgainstScan(t, records, sum.Privacy)
	// the meter's N is the wallet's count (21 used addresses on
	// the demo, where it took m^ = 69), not the filter's estimate.
	p := sum.Privacy
	require.True(t, p.WalletKnown, "meter: N %d of %d watched; wallet: %d used of %d derived", p.Members, p.Watched, sum.Addresses.Used, sum.Addresses.Derived)
	require.Equal(t, sum.Addresses.Used, p.Members, "meter: N %d of %d watched; wallet: %d used of %d derived", p.Members, p.Watched, sum.Addresses.Used, sum.Addresses.Derived)
	require.Equal(t, sum.Addresses.Derived, p.Watched, "meter: N %d of %d watched; wallet: %d used of %d derived", p.Members, p.Watched, sum.Addresses.Used, sum.Addresses.Derived)
	checkDemoAnalyze(t, dir, sum)
}

// demoUniverse is the synthetic universe the demo's analyses use.
const demoUniverse = "1000000"

// checkDemoAnalyze runs `privacy analyze` on the demo's transcript as a
// user would: without --truth it prints no
// precision, recall or entropy and says what to pass; with the truth
// `wallet export-truth` writes, N is the wallet's used addresses and the
// precision never falls when the adversary learns more (single filter,
// both forms, intersection), measured or expected.
func checkDemoAnalyze(t *testing.T, dir string, sum session.Summary) {
	t.Helper()
	tr := session.TranscriptPath(dir)
	code, out, errOut := runCLI(t, []string{"privacy", "analyze", "--transcript", tr, "--synthetic", demoUniverse})
	require.Equal(t, 0, code, "analyze without --truth: exit %d: %s", code, errOut)
	for _, line := range strings.Split(out, "\n") {
		require.False(t, strings.HasPrefix(line, "step") && (strings.Contains(line, "prec") || strings.Contains(line, "entropy") || strings.Contains(line, "recall")), "analyze without --truth prints %q", line)
	}
	require.Contains(t, out, "pass --truth FILE (bloomwatch wallet export-truth", "analyze without --truth does not say what to pass:\n%s", out)
	code, out, errOut = runCLI(t, []string{"privacy", "analyze", "--transcript", tr, "--synthetic", demoUniverse, "--json"})
	require.Equal(t, 0, code, "analyze --json without --truth: exit %d (%s), precision or entropy printed", code, errOut)
	require.NotContains(t, out, `"precision"`, "analyze --json without --truth: exit %d (%s), precision or entropy printed", code, errOut)
	require.NotContains(t, out, `"entropy_bits"`, "analyze --json without --truth: exit %d (%s), precision or entropy printed", code, errOut)

	truthPath := filepath.Join(t.TempDir(), "truth.txt")
	code, out, errOut = runCLI(t, []string{"wallet", "export-truth", "--datadir", dir, "--out", truthPath})
	require.Equal(t, 0, code, "export-truth: exit %d: %s", code, errOut)
	t.Log(strings.TrimSpace(out))
	st, err := os.Stat(truthPath)
	require.NoError(t, err, "truth file %v %v: it names the wallet's addresses, want 0600", st, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "truth file %v %v: it names the wallet's addresses, want 0600", st, err)
	code, out, errOut = runCLI(t, []string{"privacy", "analyze", "--transcript", tr, "--synthetic", demoUniverse,
		"--truth", truthPath, "--json"})
	require.Equal(t, 0, code, "analyze --truth: exit %d: %s", code, errOut)
	var rep privacy.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.True(t, rep.HasTruth, "analyze --truth: N %d, want the wallet's %d used addresses", rep.Members, sum.Addresses.Used)
	require.Equal(t, uint64(sum.Addresses.Used), rep.Members, "analyze --truth: N %d, want the wallet's %d used addresses", rep.Members, sum.Addresses.Used)
	single := rep.Curve(privacy.StageSingle)
	for _, stage := range []string{privacy.StageBothForms, privacy.StageIntersection} {
		c := rep.Curve(stage)
		require.NotNil(t, c, "no %s curve", stage)
		require.Len(t, c.Points, len(single.Points), "no %s curve", stage)
		for i, p := range c.Points {
			s := single.Points[i]
			require.True(t, p.Scored, "event %d: %s precision %.4f (expected %.4f) below the single filter's %.4f (%.4f)", i, stage, p.Precision, p.ExpectedPrecision, s.Precision, s.ExpectedPrecision)
			require.GreaterOrEqual(t, p.Precision, s.Precision, "event %d: %s precision %.4f (expected %.4f) below the single filter's %.4f (%.4f)", i, stage, p.Precision, p.ExpectedPrecision, s.Precision, s.ExpectedPrecision)
			require.GreaterOrEqual(t, p.ExpectedPrecision, s.ExpectedPrecision-1e-12, "event %d: %s precision %.4f (expected %.4f) below the single filter's %.4f (%.4f)", i, stage, p.Precision, p.ExpectedPrecision, s.Precision, s.ExpectedPrecision)
			require.NotNil(t, p.PrecisionCI, "event %d: %s precision %.4f (expected %.4f) below the single filter's %.4f (%.4f)", i, stage, p.Precision, p.ExpectedPrecision, s.Precision, s.ExpectedPrecision)
		}
	}
	last := func(st string) privacy.Point { c := rep.Curve(st); return c.Points[len(c.Points)-1] }
	ls, li := last(privacy.StageSingle), last(privacy.StageIntersection)
	require.Equal(t, float64(1), li.Recall, "intersection recall %v: the exported first-seen heights keep every wallet address", li.Recall)
	t.Logf("demo, %s synthetic candidates, N = %d: precision single %.3f %v (expected %.3f), intersection %.3f %v (expected %.3f); false positives %d and %d (expected %.3g and %.3g)",
		demoUniverse, rep.Members, ls.Precision, *ls.PrecisionCI, ls.ExpectedPrecision, li.Precision, *li.PrecisionCI, li.ExpectedPrecision,
		ls.FalsePositives, li.FalsePositives, ls.ExpectedFP, li.ExpectedFP)
	checkDemoGolden(t, sum, &rep)
}

// TestPrivacyModelOnRealSyncWithReloads syncs, from a real btcd, a wallet
// with no lookahead reserve whose receive addresses are paid in order
// past its gap limit, so the node reloads its filter for new keys (the
// gap-limit race) at least four times, at the
// default false-positive rate (and again at a loose rate, whose
// intersection is large enough to measure): the meter's and the
// analyzer's expected intersection agree with the measured one. It also
// runs the estimator attack (each reload's added elements against the
// wallet's) and the two-form test on outpoints, on the chain as the
// adversary reads it.
func TestPrivacyModelOnRealSyncWithReloads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth := syncChain(t, testnet.ChainSpec{Blocks: 150, TxsPerBlock: 8, WatchAddrs: 90, SpendFraction: 0.3, Seed: 14})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	chain := nodeChain{rpc: h.Node().RPC()}
	for _, rate := range []string{"", "0.05"} {
		name := "default rate"
		if rate != "" {
			name = "rate " + rate
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			args := []string{"--datadir", dir, "--network", "regtest", "--xpub", truth.Xpub,
				"--birthday", itoa(truth.StartHeight + 1), "--connect", h.Node().P2PAddr(), "--lookahead", "0"}
			if rate != "" {
				args = append(args, "--fp-rate", rate)
			}
			sum := runSyncJSON(t, args...)
			records := readTranscript(t, dir)
			loads := 0
			for _, r := range records {
				if r.Kind == transcript.KindFilterLoad {
					loads++
				}
			}
			require.GreaterOrEqual(t, loads, 5, "%d filterloads: want the initial one and at least four reloads", loads)
			checkModelAgainstScan(t, records, sum.Privacy)
			used := usedWalletCandidates(t, dir)
			reloadsAndOutpoints(ctx, t, chain, records, used)
		})
	}
}

// usedWalletCandidates returns the elements of the wallet's used
// addresses: the part of the wallet the chain shows.
func usedWalletCandidates(t *testing.T, dir string) []element.Candidate {
	t.Helper()
	w, err := wallet.Open(dir)
	require.NoError(t, err)
	addrs, err := w.Addresses()
	_ = w.Close()
	require.NoError(t, err)
	var out []element.Candidate
	for _, a := range addrs {
		if !a.Used {
			continue
		}
		el, err := hex.DecodeString(a.Element)
		require.NoError(t, err)
		out = append(out, element.Candidate{Forms: [][]byte{el}})
	}
	return out
}

// reloadsAndOutpoints analyzes a real sync's transcript against the
// chain: every estimated reload is checked against the wallet's used
// elements it gained (within four standard errors plus the elements the
// truth does not list: unused lookahead keys and outpoints), and the
// two-form test on outpoints (candidates as of the last filterload) is
// measured beside its expectation.
func reloadsAndOutpoints(ctx context.Context, t *testing.T, chain nodeChain, records []transcript.Record, truth []element.Candidate) {
	t.Helper()
	var at int32
	for _, r := range records {
		if r.Kind == transcript.KindFilterLoad {
			at = r.Height
		}
	}
	u, err := element.ChainOutpointUniverse(ctx, chain, at)
	require.NoError(t, err)
	rep, err := privacy.Analyze(ctx, privacy.Input{Records: records, Universe: element.Stream(u), Truth: truth,
		Attacks: privacy.Attacks{BothForms: true}})
	require.NoError(t, err)
	for _, r := range rep.Reloads {
		require.False(t, r.Nested && r.TrueAdded >= 0 && r.Added+4*r.AddedStdErr+1 < float64(r.TrueAdded), "reload of generation %d: estimated %.1f ± %.1f added, but %d of the wallet's used elements are new", r.Generation, r.Added, r.AddedStdErr, r.TrueAdded)
		t.Logf("reload gen %d after %d (%s, %d -> %d bytes, nested %v): added %.1f ± %.2f, dropped %.1f ± %.2f, net %.1f ± %.1f; used elements new in it: %d",
			r.Generation, r.PrevGeneration, r.Reason, r.PrevBytes, r.Bytes, r.Nested, r.Added, r.AddedStdErr, r.Dropped, r.DroppedStdErr, r.NetChange, r.NetStdErr, r.TrueAdded)
	}
	single, both := rep.Curve(privacy.StageSingle), rep.Curve(privacy.StageBothForms)
	ls, lb := single.Points[len(single.Points)-1], both.Points[len(both.Points)-1]
	// The universe is the chain's (under 2,000 candidates) and the
	// tweak random, so these counts vary from run to run; they are
	// checked at a looser level than the intersection checks,
	// so that the test fails for a wrong model, not once in 250 runs.
	//
	// Both forms: a false positive's outpoint is not matched by chance
	// alone. A server under BLOOM_UPDATE_ALL inserted the outpoint of
	// every output its filter matched, false positives' included, and
	// a reload carries those (a reload that dropped them would
	// show which matched outputs are the wallet's). Such a candidate
	// passes both forms by construction, which the server knew when it
	// sent the transaction; the chance model covers the rest. carried
	// counts the candidates outside the wallet whose push matched an
	// earlier filter of the transcript and whose outpoint the latest
	// filter holds: at most that many both-form false positives are not
	// chance.
	carried := carriedFalsePositives(t, records, u, truth)
	for i, p := range []privacy.Point{ls, lb} {
		lo, hi := stats.PoissonRange(p.ExpectedFP, supplementaryLevel)
		if p.ExpectedFP <= 0 {
			lo, hi = 0, 0
		}
		if i == 1 {
			hi += uint64(carried)
		}
		require.GreaterOrEqual(t, p.FalsePositives, lo, "outpoint universe at height %d: %d false positives, expected %.3g: outside [%d, %d]", at, p.FalsePositives, p.ExpectedFP, lo, hi)
		require.LessOrEqual(t, p.FalsePositives, hi, "outpoint universe at height %d: %d false positives, expected %.3g: outside [%d, %d]", at, p.FalsePositives, p.ExpectedFP, lo, hi)
	}
	funded := rep.MultiForm
	t.Logf("two-form test on outpoints at height %d: %d candidates, %d holding unspent outputs; latest filter alone: %d matched, %d false positives (%.3g expected); both forms required: %d matched, %d false positives (%.3g expected by chance, at most %d carried), recall %.3f",
		at, rep.Universe, funded, ls.Matched, ls.FalsePositives, ls.ExpectedFP, lb.Matched, lb.FalsePositives, lb.ExpectedFP, carried, lb.Recall)
}

// carriedFalsePositives counts the candidates of u outside the wallet
// (truth) whose push matched a filter sent before the latest one and one
// of whose outpoints the latest filter holds: the outputs a server could
// have inserted for a false positive, carried by a reload.
func carriedFalsePositives(t *testing.T, records []transcript.Record, u element.SliceUniverse, truth []element.Candidate) int {
	t.Helper()
	var filters []*bip37.Filter
	for _, r := range records {
		if r.Kind != transcript.KindFilterLoad {
			continue
		}
		f, err := bip37.Deserialize(r.Filter)
		require.NoError(t, err)
		filters = append(filters, f)
	}
	if len(filters) < 2 {
		return 0
	}
	latest, earlier := filters[len(filters)-1], filters[:len(filters)-1]
	wallet := map[string]bool{}
	for _, c := range truth {
		wallet[c.Key()] = true
	}
	n := 0
	for _, c := range u {
		if wallet[c.Key()] || len(c.Forms) < 2 || !latest.Matches(c.Forms[0]) {
			continue
		}
		pushMatched := false
		for _, f := range earlier {
			if f.Matches(c.Forms[0]) {
				pushMatched = true
				break
			}
		}
		if !pushMatched {
			continue
		}
		for _, op := range c.Forms[1:] {
			if latest.Matches(op) {
				n++
				break
			}
		}
	}
	return n
}
