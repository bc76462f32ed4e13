package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/btcdrpc"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// privacyFixture writes a transcript, a universe and a truth file.
type privacyFixture struct {
	dir, transcript, universe, truth string
	wallet                           []element.Candidate
	universeSize                     int
	filterHex                        string
}

// randomForm returns n pseudorandom bytes.
func randomForm(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// newPrivacyFixture builds a 20-address wallet (hash160 and pubkey), a
// universe of 20,000 others around it, and a transcript of two peers: a
// filterload, a filteradd, and a reload with a fresh tweak.
func newPrivacyFixture(t *testing.T) privacyFixture {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 5))
	fx := privacyFixture{dir: t.TempDir()}
	for range 20 {
		fx.wallet = append(fx.wallet, element.Candidate{Forms: [][]byte{randomForm(rng, 20), randomForm(rng, 33)}})
	}
	var univ []element.Candidate
	for range 20000 {
		univ = append(univ, element.Candidate{Forms: [][]byte{randomForm(rng, 20), randomForm(rng, 33)}})
	}
	univ = append(univ, fx.wallet...)
	fx.universeSize = len(univ)
	build := func(tweak uint32, cands []element.Candidate) *bip37.Filter {
		f, err := bip37.NewFilter(60, 0.01, tweak, bip37.UpdateAll)
		require.NoError(t, err)
		for _, c := range cands {
			for _, form := range c.Forms {
				f.Add(form)
			}
		}
		return f
	}
	f1, f2 := build(1, fx.wallet[:19]), build(2, fx.wallet)
	fx.filterHex = hex.EncodeToString(f2.Serialize())
	recs := []transcript.Record{
		{Seq: 0, Peer: "127.0.0.1:18444", Height: 1, Kind: transcript.KindFilterLoad, Filter: f1.Serialize(), Reason: "initial"},
		{Seq: 1, Peer: "127.0.0.1:18444", Height: 2, Kind: transcript.KindFilterAdd, Data: fx.wallet[19].Forms[0], Reason: "elements"},
		{Seq: 2, Peer: "127.0.0.1:18445", Height: 3, Kind: transcript.KindFilterLoad, Filter: f2.Serialize(), Reason: "reconnect"},
	}
	var tb bytes.Buffer
	for _, r := range recs {
		require.NoError(t, transcript.Write(&tb, r))
	}
	fx.transcript = fx.write(t, "transcript.jsonl", tb.Bytes())
	var ub, wb bytes.Buffer
	ub.WriteString("# candidates: hash160 pubkey\n")
	require.NoError(t, element.WriteCandidates(&ub, univ))
	require.NoError(t, element.WriteCandidates(&wb, fx.wallet))
	fx.universe = fx.write(t, "universe.txt", ub.Bytes())
	fx.truth = fx.write(t, "truth.txt", wb.Bytes())
	return fx
}

// write stores a file in the fixture's directory.
func (fx privacyFixture) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(fx.dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

// closedLoopbackPort returns a loopback address nobody listens on.
func closedLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestPrivacyAnalyzeCLI(t *testing.T) {
	fx := newPrivacyFixture(t)
	corrupt := fx.write(t, "corrupt.jsonl", []byte("{\"kind\":\"filterload\"}\n{\"seq\":1}\n"))
	noLoad := fx.write(t, "noload.jsonl", []byte("{\"seq\":0,\"peer\":\"a\",\"kind\":\"filterclear\"}\n"))
	badUniverse := fx.write(t, "bad.txt", []byte("aabb\nnot-hex\n"))
	base := []string{"privacy", "analyze", "--transcript", fx.transcript}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	checkCLI(t, []cliCase{
		{name: "table", args: with("--universe", fx.universe, "--truth", fx.truth),
			wantOutSub: []string{"universe: 20020 candidates (20020 with more than one form", "wallet: 20 of its candidates",
				"1 elements revealed by filteradd", "single:", "both-forms:", "intersection:", "filteradd 127.0.0.1:18444"}},
		{name: "synthetic universe adds the truth", args: with("--synthetic", "5000", "--truth", fx.truth, "--attacks", "none"),
			wantOutSub: []string{"universe: 5020 candidates", "universe source: synthetic, seed 1", "wallet: 20 of its candidates", "single:"}},
		{name: "no truth", args: with("--universe", fx.universe, "--attacks", "intersection"),
			wantOutSub: []string{"wallet: unknown", "intersection:"}},
		{name: "no transcript", args: []string{"privacy", "analyze", "--universe", fx.universe}, wantCode: 2, wantErrSub: "--transcript is required"},
		{name: "no universe", args: with(), wantCode: 2, wantErrSub: "exactly one of"},
		{name: "two universes", args: with("--universe", fx.universe, "--synthetic", "10"), wantCode: 2, wantErrSub: "exactly one of"},
		{name: "synthetic zero", args: with("--synthetic", "0"), wantCode: 2, wantErrSub: "--synthetic must be at least 1"},
		{name: "rpc without credentials", args: with("--btcd-rpc", "127.0.0.1:18334"), wantCode: 2, wantErrSub: "--rpcuser and --rpcpass"},
		{name: "unknown server rules", args: with("--synthetic", "10", "--server-rules", "bitcoinj"), wantCode: 2, wantErrSub: "--server-rules \"bitcoinj\": want core or btcd"},
		{name: "rpc off loopback", args: with("--btcd-rpc", "10.0.0.1:18334", "--rpcuser", "u", "--rpcpass", "p"),
			wantCode: 2, wantErrSub: "only a loopback address"},
		{name: "rpc host name", args: with("--btcd-rpc", "example.com:18334", "--rpcuser", "u", "--rpcpass", "p"),
			wantCode: 2, wantErrSub: "only a loopback address"},
		{name: "rpc no port", args: with("--btcd-rpc", "127.0.0.1", "--rpcuser", "u", "--rpcpass", "p"), wantCode: 2, wantErrSub: "want HOST:PORT"},
		{name: "rpc refused", args: with("--btcd-rpc", closedLoopbackPort(t), "--rpcuser", "u", "--rpcpass", "p"),
			wantCode: 1, wantErrSub: "connection refused"},
		{name: "height without rpc", args: with("--universe", fx.universe, "--height", "5"), wantCode: 2, wantErrSub: "go with --btcd-rpc"},
		{name: "seed without synthetic", args: with("--universe", fx.universe, "--seed", "5"), wantCode: 2, wantErrSub: "go with --synthetic"},
		{name: "unknown attack", args: with("--universe", fx.universe, "--attacks", "both-forms,magic"), wantCode: 2, wantErrSub: `unknown attack "magic"`},
		{name: "graph needs a chain", args: with("--universe", fx.universe, "--attacks", "graph"), wantCode: 2, wantErrSub: "need the chain"},
		{name: "missing transcript file", args: []string{"privacy", "analyze", "--transcript", filepath.Join(fx.dir, "nope"), "--universe", fx.universe},
			wantCode: 2, wantErrSub: "--transcript"},
		{name: "corrupt transcript", args: []string{"privacy", "analyze", "--transcript", corrupt, "--universe", fx.universe},
			wantCode: 2, wantErrSub: "bad transcript: line 1"},
		{name: "transcript without filterload", args: []string{"privacy", "analyze", "--transcript", noLoad, "--universe", fx.universe},
			wantCode: 2, wantErrSub: "no filterload"},
		{name: "bad universe file", args: with("--universe", badUniverse), wantCode: 2, wantErrSub: "line 2"},
		{name: "unknown flag", args: with("--universe", fx.universe, "--colour"), wantCode: 2, wantErrSub: "unknown flag"},
		{name: "stray argument", args: with("--universe", fx.universe, "extra"), wantCode: 2, wantErrSub: "unknown command"},
	})
}

func TestPrivacyAnalyzeOutputs(t *testing.T) {
	fx := newPrivacyFixture(t)
	csvPath, pngPath := filepath.Join(fx.dir, "curve.csv"), filepath.Join(fx.dir, "curve.png")
	code, out, errOut := runCLI(t, []string{"privacy", "analyze", "--transcript", fx.transcript, "--universe", fx.universe,
		"--truth", fx.truth, "--json", "--csv", csvPath, "--png", pngPath})
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	require.Equal(t, "", errOut, "exit %d: %s", code, errOut)
	var rep privacy.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	for _, p := range []string{csvPath, pngPath} {
		st, err := os.Stat(p)
		require.NoError(t, err, "%s: %v %v: an analysis with --truth names the wallet's addresses, want 0600", p, st, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s: %v %v: an analysis with --truth names the wallet's addresses, want 0600", p, st, err)
	}
	inter := rep.Curve(privacy.StageIntersection)
	require.NotNil(t, inter, "report: %+v", rep)
	require.Len(t, inter.Points, 3, "report: %+v", rep)
	require.Equal(t, uint64(20), rep.Members, "report: %+v", rep)
	require.True(t, rep.HasTruth, "report: %+v", rep)
	last := inter.Points[2]
	// The wallet's 20th address was only in the second filter (and a
	// filteradd): intersecting both filters loses it.
	require.Equal(t, uint64(19), last.TruePositives, "intersection: tp %d filters %d", last.TruePositives, last.Filters)
	require.Equal(t, 2, last.Filters, "intersection: tp %d filters %d", last.TruePositives, last.Filters)
	single := rep.Curve(privacy.StageSingle).Points[0]
	require.NotEqual(t, uint64(0), single.FalsePositives, "single filter: %d false positives, expected %.1f", single.FalsePositives, single.ExpectedFP)
	require.InDelta(t, single.ExpectedFP, float64(single.FalsePositives), 5*math.Sqrt(single.ExpectedFP)+1, "single filter: %d false positives, expected %.1f", single.FalsePositives, single.ExpectedFP)
	csvData, err := os.ReadFile(csvPath)
	require.NoError(t, err)
	lines := strings.Count(string(csvData), "\n")
	require.Equal(t, 1+3*3, lines, "csv has %d lines: %.80q", lines, csvData)
	require.True(t, strings.HasPrefix(string(csvData), "stage,step,kind"), "csv has %d lines: %.80q", lines, csvData)
	png, err := os.ReadFile(pngPath)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "png: %d bytes", len(png))
	require.GreaterOrEqual(t, len(png), 10000, "png: %d bytes", len(png))
}

func TestPrivacyExperimentCLI(t *testing.T) {
	dir := t.TempDir()
	small := []string{"--universe", "100000", "--trials", "2", "--blocks", "200"}
	checkCLI(t, []cliCase{
		{name: "sizing table", args: append([]string{"privacy", "experiment", "bitcoinj-sizing"}, small...),
			wantOutSub: []string{"bitcoinj-sizing:", "filter bytes", "1269", "+0.0%", srcNickForTest, "not a published figure", "elapsed"}},
		{name: "png", args: append([]string{"privacy", "experiment", "restart-intersection", "--png", filepath.Join(dir, "r.png")}, small...),
			wantOutSub: []string{"p=0.05 r=2 (N=50): false positives per wallet", "independent product", "seed=1", "interval kinds:"}},
		{name: "wallet flags", args: append([]string{"privacy", "experiment", "restart-intersection", "--keys", "40", "--key-step", "10", "--filters", "2"}, small...),
			wantOutSub: []string{"keys=40 key_step=10 filters=2", "p=0.05 r=2 (N=50): false positives"}},
		{name: "one rate", args: append([]string{"privacy", "experiment", "restart-intersection", "--fp-rate", "0.02", "--filters", "2"}, small...),
			wantOutSub: []string{"p=0.02 r=2 (N=50)"}},
		{name: "bad rate", args: []string{"privacy", "experiment", "restart-intersection", "--fp-rate", "1.5"}, wantCode: 2, wantErrSub: "--fp-rate"},
		{name: "negative filters", args: []string{"privacy", "experiment", "restart-intersection", "--filters", "-1"}, wantCode: 2, wantErrSub: "must not be negative"},
		{name: "unknown", args: []string{"privacy", "experiment", "bogus"}, wantCode: 2, wantErrSub: "want one of bitcoinj-sizing"},
		{name: "no name", args: []string{"privacy", "experiment"}, wantCode: 2, wantErrSub: "give one experiment NAME: bitcoinj-sizing"},
		{name: "negative trials", args: []string{"privacy", "experiment", "single-filter", "--trials", "-1"}, wantCode: 2, wantErrSub: "must not be negative"},
		{name: "csv", args: append([]string{"privacy", "experiment", "bitcoinj-sizing", "--csv", "--seed", "4"}, small...),
			wantOutSub: []string{"experiment,seed,quantity,measured", "bitcoinj-sizing,4,filter bytes,1269", ",binomial,"}},
		{name: "json and csv", args: []string{"privacy", "experiment", "bitcoinj-sizing", "--json", "--csv"}, wantCode: 2, wantErrSub: "choose one"},
	})
	// An experiment's figure is synthetic, made to be shared: readable by
	// all (an analysis of a real transcript stays 0600:
	// TestPrivacyAnalyzeOutputs).
	st, err := os.Stat(filepath.Join(dir, "r.png"))
	require.NoError(t, err, "r.png: %v", st)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "r.png: %v %v", st, err)
	code, out, _ := runCLI(t, append([]string{"privacy", "experiment", "saturation", "--json"}, small...))
	var res experiments.Result
	require.Equal(t, 0, code, "exit %d, %.200s", code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &res), "exit %d, %.200s", code, out)
	require.Equal(t, "saturation", res.Name, "exit %d, %.200s", code, out)
	require.NotEmpty(t, res.Rows, "exit %d, %.200s", code, out)
}

// srcNickForTest is the source the sizing rows' published figures cite.
const srcNickForTest = "Nick, blog"

func TestPrivacyScanCLI(t *testing.T) {
	fx := newPrivacyFixture(t)
	checkCLI(t, []cliCase{
		{name: "filter", args: []string{"privacy", "scan", "--synthetic", "200000", "--filter", fx.filterHex, "--baseline", "10000"},
			wantOutSub: []string{"scanned 200000 synthetic candidates through 1 filter(s)", "ratio", "same matches: true"}},
		{name: "transcript", args: []string{"privacy", "scan", "--synthetic", "1000", "--transcript", fx.transcript},
			wantOutSub: []string{"through 2 filter(s)", "filter 1:"}},
		{name: "no count", args: []string{"privacy", "scan", "--filter", fx.filterHex}, wantCode: 2, wantErrSub: "--synthetic must be at least 1"},
		{name: "no filter", args: []string{"privacy", "scan", "--synthetic", "10"}, wantCode: 2, wantErrSub: "exactly one of --filter or --transcript"},
		{name: "both", args: []string{"privacy", "scan", "--synthetic", "10", "--filter", fx.filterHex, "--transcript", fx.transcript},
			wantCode: 2, wantErrSub: "exactly one of"},
		{name: "bad hex", args: []string{"privacy", "scan", "--synthetic", "10", "--filter", "abc"}, wantCode: 2, wantErrSub: "--filter"},
		{name: "oversized filter", args: []string{"privacy", "scan", "--synthetic", "10", "--filter", "fda18c" + strings.Repeat("00", 36001+9)},
			wantCode: 2, wantErrSub: "larger than 36000"},
	})
	code, out, errOut := runCLI(t, []string{"privacy", "scan", "--synthetic", "300000", "--filter", fx.filterHex, "--json", "--workers", "2"})
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var got scanJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	f := got.Filters[0]
	require.Equal(t, uint64(300000), got.Candidates, "scan: %+v", got)
	require.Equal(t, 2, got.Workers, "scan: %+v", got)
	require.InDelta(t, f.Expected, float64(f.Matched), 5*f.Sigma+1, "scan: %+v", got)
}

// TestPrivacyResearchExperimentsCLI runs the population experiments at a small
// size: tables with verdicts, PNG and SVG figures labelled with their
// command, one transcript per session, progress on stderr.
func TestPrivacyResearchExperimentsCLI(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "transcripts")
	quiet := []string{"--progress", "none"}
	checkCLI(t, []cliCase{
		{name: "population", args: append([]string{"privacy", "experiment", "population", "--wallets", "3", "--blocks", "60", "--universe", "20000",
			"--png", filepath.Join(dir, "pop.png"), "--svg", filepath.Join(dir, "pop.svg"), "--transcripts", tr}, quiet...),
			wantOutSub: []string{"population:", "wrong merges", "cluster-bootstrap", "another setting: compare in form", "verdicts: "}},
		{name: "tweak policy", args: append([]string{"privacy", "experiment", "tweak-policy", "--wallets", "3", "--peers", "3", "--keys", "5",
			"--fp-rate", "0.01", "--universe", "20000", "--hash-funcs", "5"}, quiet...),
			wantOutSub: []string{"tweak per peer: a wallet's filter pairs linked by significant overlap", "mainnet: "}},
		{name: "peers", args: append([]string{"privacy", "experiment", "peers", "--peers", "2", "--keys", "4", "--universe", "20000", "--trials", "1"}, quiet...),
			wantOutSub: []string{"2 of 2 peers collude, elements sharded over the peers"}},
		{name: "pprl", args: append([]string{"privacy", "experiment", "pprl", "--records", "200000", "--hash-funcs", "30"}, quiet...),
			wantOutSub: []string{"records=200000", "hash_funcs=[30]", "k=30: never-aligned names re-identified exactly (correct 1-1)"}},
	})
	for _, f := range []string{"pop.png", "pop.svg"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, "%s", f)
		require.GreaterOrEqual(t, st.Size(), int64(5000), "%s: %v", f, err)
	}
	// The caption beside the figure names the command that made it; the
	// image's legend does not carry it.
	caption, _ := os.ReadFile(filepath.Join(dir, "pop.caption.txt"))
	require.True(t, bytes.Contains(caption, []byte("measured here: bloomwatch privacy")), "the caption does not name the command that made the figure: %q", caption)
	require.True(t, bytes.Contains(caption, []byte("--wallets 3")), "the caption does not name the command that made the figure: %q", caption)
	svg, _ := os.ReadFile(filepath.Join(dir, "pop.svg"))
	require.False(t, bytes.Contains(svg, []byte("measured here: bloomwatch privacy")), "the figure's legend carries its provenance: it belongs in the caption")
	files, err := filepath.Glob(filepath.Join(tr, "wallet-*-session-*.jsonl"))
	require.NoError(t, err, "%d transcripts (%v)", len(files), err)
	require.GreaterOrEqual(t, len(files), 9, "%d transcripts (%v)", len(files), err)
	recs, err := readTranscriptFile(files[0])
	require.NoError(t, err, "transcript %s: %d records", files[0], len(recs))
	require.GreaterOrEqual(t, len(recs), 2, "transcript %s: %d records, %v", files[0], len(recs), err)
	require.Equal(t, transcript.KindFilterLoad, recs[0].Kind, "transcript %s: %d records, %v", files[0], len(recs), err)
	// The chain's candidates beside them, for a crawl elsewhere (beam/).
	chain, err := readElementFile("universe", filepath.Join(tr, experiments.UniverseFileName))
	require.NoError(t, err, "%s: %d candidates", experiments.UniverseFileName, len(chain))
	require.GreaterOrEqual(t, len(chain), 1000, "%s: %d candidates, %v", experiments.UniverseFileName, len(chain), err)
	// A session transcript, getdata records and all, goes through the
	// analyzer.
	code, out, errOut := runCLI(t, []string{"privacy", "analyze", "--transcript", files[0], "--synthetic", "1000", "--attacks", "none"})
	require.Equal(t, 0, code, "analyze a session transcript: exit %d, %s %s", code, out, errOut)
	require.Contains(t, out, "single:", "analyze a session transcript: exit %d, %s %s", code, out, errOut)
	// Progress: plain lines on a pipe.
	code, _, errOut = runCLI(t, []string{"privacy", "experiment", "peers", "--peers", "2", "--keys", "4", "--universe", "20000", "--trials", "1"})
	require.Equal(t, 0, code, "progress: exit %d, stderr %q", code, errOut)
	require.Contains(t, errOut, "scan: ", "progress: exit %d, stderr %q", code, errOut)
	require.Contains(t, errOut, "(100%)", "progress: exit %d, stderr %q", code, errOut)
	require.NotContains(t, errOut, "\r", "progress: exit %d, stderr %q", code, errOut)
}

// TestPrivacyExperimentBadParameters checks that bad parameters give one
// error line and exit 2, before anything runs.
func TestPrivacyExperimentBadParameters(t *testing.T) {
	exp := func(args ...string) []string { return append([]string{"privacy", "experiment"}, args...) }
	checkCLI(t, []cliCase{
		{name: "negative wallets", args: exp("population", "--wallets", "-3"), wantCode: 2, wantErrSub: "must not be negative"},
		{name: "negative peers", args: exp("peers", "--peers", "-1"), wantCode: 2, wantErrSub: "must not be negative"},
		{name: "negative blocks", args: exp("noise", "--blocks", "-10"), wantCode: 2, wantErrSub: "must not be negative"},
		{name: "rate below 0", args: exp("tweak-policy", "--fp-rate", "-0.1"), wantCode: 2, wantErrSub: "outside [0, 1]"},
		{name: "rate above 1", args: exp("requests", "--fp-rate", "1.5"), wantCode: 2, wantErrSub: "outside [0, 1]"},
		{name: "rate NaN", args: exp("peers", "--fp-rate", "NaN"), wantCode: 2, wantErrSub: "outside [0, 1]"},
		{name: "rate exactly 1", args: exp("peers", "--fp-rate", "1"), wantCode: 2, wantErrSub: "strictly between 0 and 1"},
		{name: "51 hash functions", args: exp("tweak-policy", "--hash-funcs", "51"), wantCode: 2, wantErrSub: "at most 50 hash functions"},
		{name: "bad progress", args: exp("peers", "--progress", "loud"), wantCode: 2, wantErrSub: "--progress"},
		{name: "transcripts elsewhere", args: exp("peers", "--transcripts", t.TempDir()), wantCode: 2, wantErrSub: "--transcripts goes with population"},
		{name: "more peers than keys", args: exp("peers", "--peers", "5", "--keys", "2", "--universe", "10"), wantCode: 2, wantErrSub: "at least one key per peer"},
		{name: "export without out", args: []string{"privacy", "export-universe", "--synthetic", "10"}, wantCode: 2, wantErrSub: "--out is required"},
		{name: "export two sources", args: []string{"privacy", "export-universe", "--out", "x", "--synthetic", "10", "--btcd-rpc", "127.0.0.1:1"},
			wantCode: 2, wantErrSub: "exactly one of"},
		{name: "export remote node", args: []string{"privacy", "export-universe", "--out", filepath.Join(t.TempDir(), "u"), "--btcd-rpc", "192.0.2.1:18334",
			"--rpcuser", "u", "--rpcpass", "p"}, wantCode: 2, wantErrSub: "loopback"},
		{name: "export partitions", args: []string{"privacy", "export-universe", "--out", "x", "--synthetic", "10", "--partitions", "0"}, wantCode: 2, wantErrSub: "--partitions"},
	})
}

// TestPrivacyExportAndStreamedUniverse exports a synthetic universe and
// analyzes against it streamed; a malformed universe file fails with the
// line named.
func TestPrivacyExportAndStreamedUniverse(t *testing.T) {
	fx := newPrivacyFixture(t)
	u := filepath.Join(fx.dir, "export.txt")
	code, out, errOut := runCLI(t, []string{"privacy", "export-universe", "--synthetic", "5000", "--out", u, "--progress", "none"})
	require.Equal(t, 0, code, "export: exit %d, %s %s", code, out, errOut)
	require.Contains(t, out, "5000 candidates", "export: exit %d, %s %s", code, out, errOut)
	code, out, errOut = runCLI(t, []string{"privacy", "analyze", "--transcript", fx.transcript, "--universe", u, "--truth", fx.truth, "--attacks", "none"})
	require.Equal(t, 0, code, "analyze a streamed universe: exit %d, %.300s %s", code, out, errOut)
	require.Contains(t, out, "universe: 5000 candidates", "analyze a streamed universe: exit %d, %.300s %s", code, out, errOut)
}

// TestPrivacyExportFromBtcd exports the universe of a real btcd regtest
// chain (on 127.0.0.1) in bounded memory, both kinds, and checks it equals
// the universes the analyzer builds in memory from the same chain.
func TestPrivacyExportFromBtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, _ := syncChain(t, testnet.ChainSpec{Blocks: 120, TxsPerBlock: 6, WatchAddrs: 8, SpendFraction: 0.4, Seed: 21})
	chain := nodeChain{rpc: h.Node().RPC()}
	ctx := context.Background()
	for _, outpoints := range []bool{false, true} {
		var want element.SliceUniverse
		var err error
		if outpoints {
			want, err = element.ChainOutpointUniverse(ctx, chain, -1)
		} else {
			want, err = element.ChainUniverse(ctx, chain, -1)
		}
		require.NoError(t, err)
		var out bytes.Buffer
		st, err := btcdrpc.ExportUniverse(ctx, chain, btcdrpc.ExportConfig{UpTo: -1, Outpoints: outpoints, Partitions: 8, TempDir: t.TempDir()}, &out)
		require.NoError(t, err)
		u := element.NewFileUniverse(&out)
		got := map[string]string{}
		var c element.Candidate
		for u.Next(&c) {
			var b bytes.Buffer
			require.NoError(t, element.WriteCandidates(&b, []element.Candidate{c}))
			got[c.Key()] = b.String()
		}
		require.NoError(t, u.Err())
		t.Logf("outpoints=%v: %d candidates (%d multi-form) from %d blocks, %d observations, at most %d in memory",
			outpoints, st.Candidates, st.MultiForm, st.Blocks, st.Observations, st.MaxPartition)
		require.Len(t, got, len(want), "outpoints=%v: %d candidates exported, %d in memory", outpoints, len(got), len(want))
		for _, w := range want {
			var b bytes.Buffer
			require.NoError(t, element.WriteCandidates(&b, []element.Candidate{w}))
			require.Equal(t, b.String(), got[w.Key()], "outpoints=%v: candidate %x: exported %q, want %q", outpoints, w.Key(), got[w.Key()], b.String())
		}
	}
}

// TestPrivacyAnalyzeCapsTables analyzes a transcript of a filterload and
// 30 filteradds (a curve row each): the text output caps each table at
// privacy.DefaultTableRows rows and says how many more there are;
// --full-table prints them all.
func TestPrivacyAnalyzeCapsTables(t *testing.T) {
	fx := newPrivacyFixture(t)
	f, err := bip37.NewFilter(60, 0.01, 3, bip37.UpdateAll)
	require.NoError(t, err)
	recs := []transcript.Record{{Seq: 0, Peer: "127.0.0.1:18444", Height: 1, Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: "initial"}}
	for i := range 30 {
		recs = append(recs, transcript.Record{Seq: uint64(i + 1), Peer: "127.0.0.1:18444", Height: int32(2 + i),
			Kind: transcript.KindFilterAdd, Data: fx.wallet[i%20].Forms[0], Reason: "elements"})
	}
	var tb bytes.Buffer
	for _, r := range recs {
		require.NoError(t, transcript.Write(&tb, r))
	}
	tr := fx.write(t, "adds.jsonl", tb.Bytes())
	args := []string{"privacy", "analyze", "--transcript", tr, "--universe", fx.universe, "--truth", fx.truth, "--attacks", "single"}
	code, capped, errOut := runCLI(t, args)
	require.Zero(t, code, errOut)
	code, full, errOut := runCLI(t, append(args, "--full-table"))
	require.Zero(t, code, errOut)
	require.Contains(t, capped, "more rows (--full-table prints them; --csv writes every point)")
	require.NotContains(t, full, "more rows")
	require.Greater(t, strings.Count(full, "\n"), strings.Count(capped, "\n")+5)
}
