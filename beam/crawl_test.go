package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}

// population writes a population's transcripts and chain universe into
// a new directory and returns it with the population and its sessions.
func population(t *testing.T, cfg experiments.PopulationConfig) (string, *experiments.Population, []*experiments.Session) {
	t.Helper()
	pop, err := experiments.NewPopulation(cfg)
	require.NoError(t, err)
	sessions, err := pop.Simulate(experiments.ClientOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, experiments.WriteTranscripts(dir, sessions, 0o600))
	require.NoError(t, experiments.WriteUniverse(dir, pop, 0o600))
	return dir, pop, sessions
}

// crawlOutput is what a crawl wrote, by session name.
type crawlOutput struct {
	sets     map[string][]string
	overlaps map[[2]string]int
	// groups lists each rule's groups as sorted names, sorted.
	anyGroups, sigGroups [][]string
	sum                  summary
	stderr               string
}

// runCrawl runs the crawl with o and reads its outputs back.
func runCrawl(t *testing.T, o *options) *crawlOutput {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := crawl(context.Background(), o, &stdout, &stderr)
	require.NoError(t, err, "crawl: %v\n%s", err, stderr.String())
	t.Logf("%s%s", stderr.String(), stdout.String())
	out := readCrawl(t, o.out)
	out.stderr = stderr.String()
	return out
}

// readCrawl reads the outputs of a crawl under dir.
func readCrawl(t *testing.T, dir string) *crawlOutput {
	t.Helper()
	ctx := context.Background()
	ss, err := readLines[session](ctx, sessionsPath(joinPath(dir, planSubdir)))
	require.NoError(t, err)
	out := &crawlOutput{sets: map[string][]string{}, overlaps: map[[2]string]int{}}
	lines, err := readLines[matchSetLine](ctx, joinPath(dir, matchesFile))
	require.NoError(t, err)
	for _, l := range lines {
		name := ss[l.Session].Name
		_, dup := out.sets[name]
		require.False(t, dup, "%s: two match-set lines", name)
		out.sets[name] = l.Matches
	}
	ols, err := readLines[overlapLine](ctx, joinPath(dir, overlapsFile))
	require.NoError(t, err)
	for _, ol := range ols {
		out.overlaps[[2]string{ss[ol.I].Name, ss[ol.J].Name}] = ol.Common
	}
	links, err := readLines[linkLine](ctx, joinPath(dir, linkingFile))
	require.NoError(t, err)
	anyG, sigG := make([]int, len(links)), make([]int, len(links))
	names := make([]string, len(links))
	for i, l := range links {
		require.Equal(t, i, l.Session, "linking line %d is session %d", i, l.Session)
		anyG[i], sigG[i], names[i] = l.AnyGroup, l.SigGroup, l.Name
	}
	out.anyGroups, out.sigGroups = partition(names, anyG), partition(names, sigG)
	sums, err := readLines[summary](ctx, joinPath(dir, summaryFile))
	require.NoError(t, err, "summary")
	require.Len(t, sums, 1, "summary: %v", err)
	out.sum = sums[0]
	return out
}

// partition returns the groups of names as sorted lists, sorted.
func partition(names []string, groups []int) [][]string {
	by := map[int][]string{}
	for i, g := range groups {
		by[g] = append(by[g], names[i])
	}
	var out [][]string
	for _, ns := range by {
		slices.Sort(ns)
		out = append(out, ns)
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// inProcessCrawl is the population experiment's crawl of the same
// population, in this process, as the output of runCrawl.
func inProcessCrawl(t *testing.T, pop *experiments.Population, sessions []*experiments.Session, background, seed uint64) (*crawlOutput, *experiments.CrawlerView) {
	t.Helper()
	v, err := experiments.Crawl(context.Background(), pop, sessions, background, seed, 0)
	require.NoError(t, err)
	out := &crawlOutput{sets: map[string][]string{}, overlaps: map[[2]string]int{}}
	names := make([]string, len(sessions))
	for j, s := range sessions {
		names[j] = s.TranscriptName()
		if len(v.Sets[j]) == 0 {
			continue
		}
		var set []string
		for _, c := range v.Sets[j] {
			set = append(set, candKey(v.Candidates[c]))
		}
		slices.Sort(set)
		out.sets[names[j]] = set
	}
	overlaps := v.Overlaps(sessions)
	for _, o := range overlaps {
		a, b := names[o.I], names[o.J]
		if a > b {
			a, b = b, a
		}
		out.overlaps[[2]string{a, b}] = o.Common
	}
	out.anyGroups = partition(names, v.Link(sessions, overlaps, experiments.LinkAnyOverlap))
	out.sigGroups = partition(names, v.Link(sessions, overlaps, experiments.LinkSignificant))
	return out, v
}

// compareCrawls fails the test where the two crawls differ.
func compareCrawls(t *testing.T, what string, got, want *crawlOutput) {
	t.Helper()
	require.Len(t, got.sets, len(want.sets), "%s: %d sessions with a match, want %d", what, len(got.sets), len(want.sets))
	matches := 0
	for name, w := range want.sets {
		matches += len(w)
		g := got.sets[name]
		require.True(t, slices.Equal(g, w), "%s: %s: %d matches, want %d (first difference in %v vs %v)", what, name, len(g), len(w), head(g), head(w))
	}
	require.Len(t, got.overlaps, len(want.overlaps), "%s: %d overlapping pairs, want %d", what, len(got.overlaps), len(want.overlaps))
	for k, w := range want.overlaps {
		g, ok := got.overlaps[k]
		require.True(t, ok, "%s: overlap %v: %d common, want %d", what, k, g, w)
		require.Equal(t, w, g, "%s: overlap %v: %d common, want %d", what, k, g, w)
	}
	require.True(t, slices.EqualFunc(got.anyGroups, want.anyGroups, slices.Equal), "%s: groups by any overlap differ: %d vs %d groups", what, len(got.anyGroups), len(want.anyGroups))
	require.True(t, slices.EqualFunc(got.sigGroups, want.sigGroups, slices.Equal), "%s: groups by significant overlap differ: %d vs %d groups", what, len(got.sigGroups), len(want.sigGroups))
	t.Logf("%s: %d matches in %d sets, %d overlapping pairs, %d / %d groups", what, matches, len(want.sets), len(want.overlaps),
		len(want.anyGroups), len(want.sigGroups))
}

// head returns the first elements of xs.
func head(xs []string) []string { return xs[:min(2, len(xs))] }

// TestPipelineEqualsExperiment: the pipeline on Prism,
// embedded, over a population of 102 wallets and 10^7 + its chain's
// candidates, cut into several groups of filters and ranges of both the
// element file and the synthetic candidates, finds exactly the match
// sets, overlaps and wallet groups (both rules) of the population
// experiment's crawler run in this process, and its summary scores them
// as the experiment's CountLinks does.
func TestPipelineEqualsExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("scans 10^7 candidates twice")
	}
	const background, seed = 10_000_000, 7
	dir, pop, sessions := population(t, experiments.PopulationConfig{Seed: 3, WalletsPerKind: 34, Blocks: 120})
	require.GreaterOrEqual(t, len(pop.Wallets), 100, "%d wallets", len(pop.Wallets))
	want, v := inProcessCrawl(t, pop, sessions, background, seed)
	o := &options{transcripts: dir, universe: filepath.Join(dir, experiments.UniverseFileName), synthetic: background, seed: seed,
		pubKeys: true, out: t.TempDir(), bothForms: bothAuto, groupBytes: 32 << 10, rangeN: 2_500_000, rangeBytes: 300 << 10,
		maxHits: scan.DefaultMaxHits, every: 200 * time.Millisecond}
	start := time.Now()
	got := runCrawl(t, o)
	elapsed := time.Since(start)
	compareCrawls(t, "prism vs experiment", got, want)
	require.NotEqual(t, 0, len(want.overlaps), "no session overlaps another: the comparison of groups says nothing")
	require.NotEqual(t, len(want.anyGroups), len(sessions), "no session overlaps another: the comparison of groups says nothing")
	require.GreaterOrEqual(t, got.sum.Candidates, uint64(background), "summary counts %d candidates (%d + %d), the experiment %v", got.sum.Candidates, got.sum.OneForm, got.sum.TwoForms, v.FormCounts)
	require.Equal(t, v.FormCounts[1], got.sum.OneForm, "summary counts %d candidates (%d + %d), the experiment %v", got.sum.Candidates, got.sum.OneForm, got.sum.TwoForms, v.FormCounts)
	require.Equal(t, v.FormCounts[2], got.sum.TwoForms, "summary counts %d candidates (%d + %d), the experiment %v", got.sum.Candidates, got.sum.OneForm, got.sum.TwoForms, v.FormCounts)
	// The chance matches the summary expects are the experiment's
	// expected false positives plus the members' own rate terms, which
	// the crawl cannot tell from the rest.
	var expFP, members float64
	for j := range sessions {
		expFP += v.ExpectedFP(j)
		for f := 1; f < 3; f++ {
			members += float64(v.Members[j][f]) * v.Rate[j][f]
		}
	}
	d := got.sum.ChanceMatches - expFP
	require.GreaterOrEqual(t, d, -1e-9, "summary expects %.6g chance matches; the experiment %.6g false positives (+ at most %.3g)", got.sum.ChanceMatches, expFP, members)
	require.LessOrEqual(t, d, members+1e-9, "summary expects %.6g chance matches; the experiment %.6g false positives (+ at most %.3g)", got.sum.ChanceMatches, expFP, members)
	wallets := make([]int, len(sessions))
	for j, s := range sessions {
		wallets[j] = s.Wallet
	}
	overlaps := v.Overlaps(sessions)
	for i, rule := range []experiments.LinkRule{experiments.LinkAnyOverlap, experiments.LinkSignificant} {
		c := experiments.CountLinks(v.Link(sessions, overlaps, rule), wallets, overlaps)
		r := got.sum.Rules[i]
		require.Equal(t, rule.String(), r.Rule, "summary %s: %+v, the experiment %+v", rule, r, c)
		require.NotNil(t, r.Wrong, "summary %s: %+v, the experiment %+v", rule, r, c)
		require.Equal(t, c.Wrong, *r.Wrong, "summary %s: %+v, the experiment %+v", rule, r, c)
		require.Equal(t, c.SameLinked, *r.SameLinked, "summary %s: %+v, the experiment %+v", rule, r, c)
		require.Equal(t, c.SamePairs, *r.SamePairs, "summary %s: %+v, the experiment %+v", rule, r, c)
	}
	seen := map[int]bool{}
	for _, s := range sessions {
		seen[s.Wallet] = true
	}
	require.Equal(t, len(seen), got.sum.Wallets, "summary: %d wallets, %d sessions; the population's sessions: %d wallets, %d sessions", got.sum.Wallets, got.sum.Sessions, len(seen), len(sessions))
	require.Equal(t, len(sessions), got.sum.Sessions, "summary: %d wallets, %d sessions; the population's sessions: %d wallets, %d sessions", got.sum.Wallets, got.sum.Sessions, len(seen), len(sessions))
	require.Contains(t, got.stderr, "on Beam runner prism", "stderr %q", got.stderr)
	require.Contains(t, got.stderr, "probes in", "stderr %q", got.stderr)
	require.False(t, elapsed > 10*o.every && !strings.Contains(got.stderr, "shards scanned"), "no progress line in %s at one every %s: %q", elapsed, o.every, got.stderr)
}

// TestInProcessEqualsPipeline: --in-process, the baseline the pipeline
// is timed against, writes what the pipeline writes.
func TestInProcessEqualsPipeline(t *testing.T) {
	dir, _, _ := population(t, experiments.PopulationConfig{Seed: 4, WalletsPerKind: 4, Blocks: 100})
	base := options{transcripts: dir, universe: filepath.Join(dir, experiments.UniverseFileName), synthetic: 200_000, seed: 2,
		pubKeys: true, bothForms: bothAuto, groupBytes: 4 << 10, rangeN: 70_000, rangeBytes: 100 << 10, maxHits: scan.DefaultMaxHits}
	pipe, local := base, base
	pipe.out, local.out, local.inProcess = t.TempDir(), t.TempDir(), true
	got, want := runCrawl(t, &pipe), runCrawl(t, &local)
	compareCrawls(t, "prism vs in-process", got, want)
	g, w := jsonOf(t, got.sum), jsonOf(t, want.sum)
	require.Equal(t, w, g, "summaries differ:\n%s\n%s", g, w)
	require.Contains(t, want.stderr, "this process, without Beam", "in-process stderr %q", want.stderr)
}

// TestLineRanges: the byte ranges of an element file read each line
// exactly once, whatever the cuts (at a line's start, inside it, at its
// newline, past the end).
func TestLineRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var lines []string
	var b strings.Builder
	for i := range 500 {
		l := strings.Repeat(fmt.Sprintf("%x", i), 1+rng.IntN(30))
		if i%17 == 0 {
			l = "# a comment"
		}
		lines = append(lines, l)
		b.WriteString(l + "\n")
	}
	b.WriteString("last-line-without-newline")
	lines = append(lines, "last-line-without-newline")
	path := filepath.Join(t.TempDir(), "u")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	size := int64(b.Len())
	for _, step := range []int64{1, 2, 7, 40, 333, size - 1, size, size + 10} {
		var got []string
		for lo := int64(0); lo < size; lo += step {
			r, err := openLineRange(context.Background(), path, lo, min(size, lo+step))
			require.NoError(t, err)
			var buf bytes.Buffer
			_, err = buf.ReadFrom(r)
			require.NoError(t, err)
			_ = r.Close()
			if s := buf.String(); s != "" {
				got = append(got, strings.Split(strings.TrimSuffix(s, "\n"), "\n")...)
			}
		}
		require.True(t, slices.Equal(got, lines), "ranges of %d bytes: %d lines, want %d", step, len(got), len(lines))
	}
}

// TestBadInput: bad options and transcripts are usage errors (exit 2)
// that write nothing.
func TestBadInput(t *testing.T) {
	good := func() *options {
		return &options{transcripts: t.TempDir(), out: filepath.Join(t.TempDir(), "out"), synthetic: 10, bothForms: bothAuto,
			groupBytes: 1, rangeN: 1, rangeBytes: 1}
	}
	bad := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.MkdirAll(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "x.jsonl"), []byte("{not json\n"), 0o600))
	noLoad := filepath.Join(t.TempDir(), "noload")
	require.NoError(t, os.MkdirAll(noLoad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(noLoad, "x.jsonl"), []byte(`{"v":2,"seq":1,"time":"2026-01-01T00:00:00Z","peer":"p","height":1,"kind":"filterclear"}`+"\n"), 0o600))
	ok := filepath.Join(t.TempDir(), "ok")
	f, err := bip37.NewFilter(10, 0.001, 1, bip37.UpdateNone)
	require.NoError(t, err)
	require.NoError(t, experiments.WriteTranscripts(ok, []*experiments.Session{{Wallet: 1, Kind: experiments.KindBloomwatch,
		Records: []transcript.Record{{Seq: 1, Peer: "p", Kind: transcript.KindFilterLoad, Filter: f.Serialize()}}}}, 0o600))
	cases := []struct {
		name string
		edit func(*options)
		want string
	}{
		{"no transcripts flag", func(o *options) { o.transcripts = "" }, "--transcripts is required"},
		{"no out", func(o *options) { o.out = "" }, "--out is required"},
		{"no universe", func(o *options) { o.synthetic = 0 }, "give --universe"},
		{"seed without synthetic", func(o *options) { o.synthetic, o.universe, o.seedSet = 0, "u", true }, "go with --synthetic"},
		{"both forms", func(o *options) { o.bothForms = "some" }, "--both-forms"},
		{"zero range", func(o *options) { o.rangeN = 0 }, "must be positive"},
		{"negative workers", func(o *options) { o.workers = -1 }, "must not be negative"},
		{"empty transcripts", func(*options) {}, "no *.jsonl transcript"},
		{"malformed transcript", func(o *options) { o.transcripts = bad }, "x.jsonl"},
		{"no filterload", func(o *options) { o.transcripts = noLoad }, "x.jsonl"},
		{"missing universe", func(o *options) { o.transcripts, o.universe = ok, filepath.Join(bad, "none") }, "--universe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := good()
			tc.edit(o)
			err := o.check()
			if err == nil {
				err = crawl(context.Background(), o, &bytes.Buffer{}, &bytes.Buffer{})
			}
			require.Error(t, err, "err %v, want a usage error with %q", err, tc.want)
			require.Contains(t, err.Error(), tc.want, "err %v, want a usage error with %q", err, tc.want)
			require.True(t, strings.HasPrefix(err.Error(), ErrUsage.Error()), "err %v, want a usage error with %q", err, tc.want)
			_, err = os.Stat(o.out)
			require.Error(t, err, "%s written", o.out)
		})
	}
}

// jsonOf returns v as JSON.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// onlyLoopback reports whether every network interface up is a loopback
// one (the loopback-only namespace).
func onlyLoopback(t *testing.T) bool {
	t.Helper()
	ifs, err := net.Interfaces()
	require.NoError(t, err)
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			return false
		}
	}
	return true
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitPort waits until 127.0.0.1:port accepts a connection or the
// deadline passes.
func waitPort(t *testing.T, port int, deadline time.Duration, what string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		require.False(t, time.Now().After(end), "%s does not listen on 127.0.0.1:%d after %s: %v", what, port, deadline, err)
		time.Sleep(50 * time.Millisecond)
	}
}

// startServer starts a long-running child that the test stops at its
// end, its output in dir/name.log.
func startServer(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	require.NoError(t, err)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("%s's log:\n%s", name, b)
		}
	})
}

// workerPoolPort is the port the Go SDK's boot loader serves its worker
// pool on (container/boot.go: pool.New(ctx, 50000, ...)): fixed, on
// every interface.
const workerPoolPort = 50000

// TestJobServer sends the crawl the way it goes to a
// Flink or Spark job server: the runner "universal" with --endpoint, to
// a job server of its own process (Beam's Prism, built from the module
// cache: no Flink or Spark job server can be had here), whose workers run
// in a worker pool of another process (the Go SDK's boot loader with
// --worker_pool, the EXTERNAL environment Flink's Beam deployments use),
// which fetches the staged worker binary (this crawl, --worker_binary
// defaulted to itself) from the job server and runs it. The outputs
// equal --in-process's. Then Dataflow's --dry_run translates the same
// pipeline into a Dataflow job, offline. Prism and the worker pool listen on every
// interface: the test runs only in a network namespace with nothing but
// loopback (.ci/run's, or /work/shared/tools/loopback-only).
func TestJobServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three binaries")
	}
	if !onlyLoopback(t) {
		t.Skip("Prism and the worker pool listen on every interface: run inside the loopback-only namespace")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), ".",
		"github.com/apache/beam/sdks/v2/go/cmd/prism", "github.com/apache/beam/sdks/v2/go/container")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %v\n%s", err, out)
	work := t.TempDir()
	jobPort := freePort(t)
	startServer(t, work, "prism", filepath.Join(bin, "prism"), "--job_port", fmt.Sprint(jobPort), "--serve_http=false")
	startServer(t, work, "pool", filepath.Join(bin, "container"), "--worker_pool")
	waitPort(t, jobPort, 2*time.Minute, "the Prism job server")
	waitPort(t, workerPoolPort, 2*time.Minute, "the worker pool")

	dir, _, _ := population(t, experiments.PopulationConfig{Seed: 6, WalletsPerKind: 4, Blocks: 100})
	args := []string{"--transcripts", dir, "--universe", filepath.Join(dir, experiments.UniverseFileName), "--synthetic", "200000",
		"--seed", "2", "--pubkeys", "--group-bytes", "4096", "--range", "70000", "--range-bytes", "102400"}
	remote := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "beam"), append(args, "--out", remote, "--runner", "universal",
		"--endpoint", fmt.Sprintf("localhost:%d", jobPort), "--environment_type", "EXTERNAL",
		"--environment_config", fmt.Sprintf("localhost:%d", workerPoolPort))...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	require.NoError(t, err, "crawl on the job server: %v\n%s%s", err, stderr.String(), stdout.String())
	t.Logf("%s%s", stderr.String(), stdout.String())
	for _, want := range []string{fmt.Sprintf("on Beam runner universal at localhost:%d", jobPort), "the runner's counter bloomwatch/probes: ",
		"the runner's counter bloomwatch/shards: "} {
		require.Contains(t, stderr.String(), want, "stderr lacks %q", want)
	}
	require.NotContains(t, stderr.String(), "shards scanned", "progress lines printed by the submitter, whose process scans nothing")
	got := readCrawl(t, remote)
	local := options{transcripts: dir, universe: filepath.Join(dir, experiments.UniverseFileName), synthetic: 200_000, seed: 2,
		pubKeys: true, bothForms: bothAuto, groupBytes: 4096, rangeN: 70_000, rangeBytes: 100 << 10, maxHits: scan.DefaultMaxHits,
		out: t.TempDir(), inProcess: true}
	want := runCrawl(t, &local)
	compareCrawls(t, "job server vs in-process", got, want)
	g, w := jsonOf(t, got.sum), jsonOf(t, want.sum)
	require.Equal(t, w, g, "summaries differ:\n%s\n%s", g, w)
	probes := fmt.Sprintf("the runner's counter bloomwatch/probes: %d\n", want.sum.Probes)
	require.Contains(t, stderr.String(), probes, "stderr lacks %q", probes)

	// Dataflow cannot be reached from here: its --dry_run translates the
	// same pipeline into a Dataflow job and prints it, submitting
	// nothing.
	dry := exec.CommandContext(ctx, filepath.Join(bin, "beam"), append(args, "--out", t.TempDir(), "--runner", "dataflow",
		"--project", "example-project", "--region", "us-central1", "--staging_location", "gs://example-bucket/staging",
		"--dry_run", "--verbose")...)
	out, err = dry.CombinedOutput()
	require.NoError(t, err, "Dataflow dry run: %v\n%s", err, out)
	require.True(t, bytes.Contains(out, []byte("Dry-run: not submitting job!")), "Dataflow dry run: %v\n%s", err, out)
	require.True(t, bytes.Contains(out, []byte("use_runner_v2")), "Dataflow dry run: %v\n%s", err, out)
	require.True(t, bytes.Contains(out, []byte("not waited for")), "Dataflow dry run: %v\n%s", err, out)
}
