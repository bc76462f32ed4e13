// Command crawl is the population-scale privacy scan of bloomwatch (issue
// 31) as an Apache Beam pipeline: Nick's crawl, every candidate of a
// chain tested against the first filter of every light-client session a
// node collected, the sessions linked into wallets by the overlap of
// their match sets.
//
// It reads a directory of transcripts (one per session: `bloomwatch
// privacy experiment population --transcripts DIR`, or captured ones)
// and a universe (an element file, `privacy export-universe` or the
// population's DIR/universe.elements, then --synthetic candidates), cuts
// the filters into groups and the universe into ranges, scans every
// group x range shard with scan.Run and writes under --out: each
// session's match set (matches.jsonl), its wallet groups by both of the
// population experiment's linking rules (linking.jsonl), every
// overlapping pair (overlaps.jsonl) and the summary (summary.json, also
// printed).
//
// With no runner flag it runs on Beam's Prism runner inside this process.
// --runner and --endpoint send the same pipeline elsewhere: a Flink or
// Spark job server (--runner universal --endpoint HOST:PORT), a Prism
// job server, or Dataflow (--runner dataflow and its flags). See
// README.md for the commands and what was tested.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
)

// name prefixes the command's error lines.
const name = "bloomwatch-crawl"

// options are the crawl's own flags (Beam's are its runner's).
type options struct {
	transcripts string
	universe    string
	synthetic   uint64
	seed        uint64
	pubKeys     bool
	out         string
	bothForms   string
	groupBytes  int
	rangeN      uint64
	rangeBytes  int64
	workers     int
	maxHits     int
	inProcess   bool
	asJSON      bool
	every       time.Duration
	verbose     bool
	seedSet     bool
	pubKeysSet  bool
}

// Defaults of the shard sizes.
const (
	defaultGroupBytes = 64 << 20
	defaultRange      = 1 << 24
	defaultRangeBytes = 1 << 30
)

// register adds the options to fs.
func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.transcripts, "transcripts", "", "directory of session transcripts (*.jsonl), one filter each: the first filterload")
	fs.StringVar(&o.universe, "universe", "", "element file of candidates, scanned first (a local path, or gs://... on Dataflow)")
	fs.Uint64Var(&o.synthetic, "synthetic", 0, "then N synthetic candidates (scan.Synthetic)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic candidates")
	fs.BoolVar(&o.pubKeys, "pubkeys", false, "synthetic candidates carry a public-key form too")
	fs.StringVar(&o.out, "out", "", "output directory: plan/, matches.jsonl, linking.jsonl, overlaps.jsonl, summary.json")
	fs.StringVar(&o.bothForms, "both-forms", bothAuto, "which filters get the both-forms test: auto (bitcoinj-like population transcripts), all or none")
	fs.IntVar(&o.groupBytes, "group-bytes", defaultGroupBytes, "filter bytes per group: a shard holds about twice this in memory")
	fs.Uint64Var(&o.rangeN, "range", defaultRange, "synthetic candidates per shard")
	fs.Int64Var(&o.rangeBytes, "range-bytes", defaultRangeBytes, "element-file bytes per shard")
	fs.IntVar(&o.workers, "scan-workers", 0, "scan goroutines per shard (default: all CPUs of the worker)")
	fs.IntVar(&o.maxHits, "max-hits", scan.DefaultMaxHits, "most hits one shard keeps")
	fs.BoolVar(&o.inProcess, "in-process", false, "run the shards in this process without Beam (the baseline)")
	fs.BoolVar(&o.asJSON, "json", false, "print the summary as JSON")
	fs.DurationVar(&o.every, "progress-every", 5*time.Second, "progress line on stderr this often while the scan runs here (0: none)")
	fs.BoolVar(&o.verbose, "verbose", false, "keep Beam's and Prism's informational log lines")
}

// check refuses bad options.
func (o *options) check() error {
	switch {
	case o.transcripts == "":
		return usagef("--transcripts is required")
	case o.out == "":
		return usagef("--out is required")
	case o.universe == "" && o.synthetic == 0:
		return usagef("give --universe, --synthetic N or both")
	case o.synthetic == 0 && (o.seedSet || o.pubKeysSet):
		return usagef("--seed and --pubkeys go with --synthetic")
	case o.bothForms != bothAuto && o.bothForms != bothAll && o.bothForms != bothNone:
		return usagef("--both-forms %q: want auto, all or none", o.bothForms)
	case o.groupBytes < 1 || o.rangeN < 1 || o.rangeBytes < 1:
		return usagef("--group-bytes, --range and --range-bytes must be positive")
	case o.workers < 0 || o.maxHits < 0:
		return usagef("--scan-workers and --max-hits must not be negative")
	case o.inProcess && (*runners.Runner != "" || *jobopts.Endpoint != ""):
		return usagef("--in-process runs without Beam: drop --runner and --endpoint")
	}
	return nil
}

func main() {
	o := &options{}
	o.register(flag.CommandLine)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s --transcripts DIR (--universe FILE | --synthetic N) --out DIR [--runner R --endpoint HOST:PORT]\n"+
			"  With no --runner the pipeline runs on Beam's Prism runner inside this process.\n", name)
		flag.PrintDefaults()
	}
	flag.Parse()
	flag.Visit(func(f *flag.Flag) {
		o.seedSet = o.seedSet || f.Name == "seed"
		o.pubKeysSet = o.pubKeysSet || f.Name == "pubkeys"
	})
	// A worker that a runner starts from this binary runs the harness
	// here and never returns.
	beam.Init()
	if err := o.check(); err != nil {
		fail(err)
	}
	if flag.NArg() > 0 {
		fail(usagef("unexpected argument %q", flag.Arg(0)))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !o.verbose {
		quietLogs()
	}
	if path := os.Getenv("CRAWL_CPUPROFILE"); path != "" {
		// Diagnostics: a CPU profile of this process.
		f, err := os.Create(path)
		if err != nil {
			fail(fmt.Errorf("cpu profile: %w", err))
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(fmt.Errorf("cpu profile: %w", err))
		}
		defer pprof.StopCPUProfile()
	}
	if err := crawl(ctx, o, os.Stdout, os.Stderr); err != nil {
		pprof.StopCPUProfile()
		stop()
		fail(err)
	}
}

// fail prints err as one line and exits: 2 for bad input, 1 otherwise.
func fail(err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, strings.TrimPrefix(err.Error(), ErrUsage.Error()+": "))
	if errors.Is(err, ErrUsage) {
		os.Exit(2)
	}
	os.Exit(1)
}

// quietLogs keeps Beam's and Prism's warnings and errors on stderr and
// drops their informational lines (job states, bundles, artifacts).
func quietLogs() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// scansHere reports whether the pipeline's DoFns run in this process:
// --in-process, Prism embedded, or any runner with the loopback
// environment.
func (o *options) scansHere() bool {
	r, env := strings.ToLower(*runners.Runner), strings.ToLower(*jobopts.EnvironmentType)
	return o.inProcess || env == "loopback" || ((r == "" || r == "prism") && *jobopts.Endpoint == "" && env == "")
}

// crawl plans the crawl, runs it and prints the summary.
func crawl(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	ss, err := readSessions(o.transcripts, o.bothForms)
	if err != nil {
		return err
	}
	fs, err := filters(ss)
	if err != nil {
		return err
	}
	u := universe{File: o.universe, Seed: o.seed, Count: o.synthetic, PubKeys: o.pubKeys}
	if u.File != "" {
		if u.FileSize, err = fileSize(ctx, u.File); err != nil {
			return usagef("--universe %s: %v", u.File, err)
		}
	}
	plan := joinPath(o.out, planSubdir)
	shards, err := makeShards(ctx, ss, u, planConfig{GroupBytes: o.groupBytes, Range: o.rangeN, RangeBytes: o.rangeBytes}, plan)
	if err != nil {
		return err
	}
	cfg := scanConfig{Universe: u, Workers: o.workers, MaxHits: o.maxHits}
	crawlProgress.reset()
	start := time.Now()
	where := "Beam runner " + runnerName()
	if o.inProcess {
		where = "this process, without Beam"
	}
	fmt.Fprintf(stderr, "crawl: %d sessions in %d groups, %d shards, on %s\n", len(ss), countGroups(shards), len(shards), where)
	pctx, stopProgress := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if o.scansHere() {
			reportProgress(pctx, stderr, o.every, len(shards), start)
		}
	}()
	if !o.scansHere() {
		fmt.Fprintln(stderr, "crawl: the shards run on the runner's workers: its interface shows the counters bloomwatch/probes and bloomwatch/shards")
	}
	var res beam.PipelineResult
	if o.inProcess {
		_, err = runInProcess(ctx, cfg, shards, ss, fs, o.out)
	} else {
		if !o.scansHere() {
			useSelfAsWorker()
		}
		res, err = beamx.RunWithMetrics(ctx, buildPipeline(cfg, shards, len(ss), plan, o.out))
		if err == nil && res != nil {
			// What the workers counted, wherever they ran.
			for _, c := range res.Metrics().AllMetrics().Counters() {
				if c.Namespace() == counterNamespace {
					fmt.Fprintf(stderr, "crawl: the runner's counter %s/%s: %d\n", c.Namespace(), c.Name(), c.Result())
				}
			}
		}
	}
	stopProgress()
	<-done
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	if !o.inProcess && (*jobopts.Async || res == nil) {
		// --async, or Dataflow's --dry_run: nothing ran here.
		_, err := fmt.Fprintf(stdout, "crawl: not waited for (--async or --dry_run): the outputs appear in %s when the job ends\n", o.out)
		return err
	}
	elapsed := time.Since(start)
	sums, err := readLines[summary](ctx, joinPath(o.out, summaryFile))
	if err != nil || len(sums) != 1 {
		return fmt.Errorf("crawl finished but its summary cannot be read: %v", err)
	}
	sum := sums[0]
	fmt.Fprintf(stderr, "crawl: %.4g probes in %s (%.3g probes/s)\n", float64(sum.Probes), elapsed.Round(time.Millisecond),
		float64(sum.Probes)/elapsed.Seconds())
	if o.asJSON {
		return writeJSON(stdout, sum)
	}
	if err := sum.writeText(stdout); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "\noutputs in %s: %s, %s, %s, %s\n", o.out, matchesFile, linkingFile, overlapsFile, summaryFile)
	return err
}

// useSelfAsWorker makes this binary the worker the runner stages, unless
// --worker_binary names one or the workers run in this process: Beam
// v2.77.0 otherwise compiles the main package from source at submission
// (runnerlib.IsWorkerCompatibleBinary is always false), which needs the
// source tree and a Go toolchain where the job is submitted. Runners'
// workers are linux/amd64: a submitter on another platform leaves the
// compile to Beam.
func useSelfAsWorker() {
	if *jobopts.WorkerBinary != "" || runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	if exe, err := os.Executable(); err == nil {
		*jobopts.WorkerBinary = exe
	}
}

// runnerName is the runner the pipeline goes to.
func runnerName() string {
	r := *runners.Runner
	if r == "" {
		r = "prism"
	}
	switch {
	case strings.EqualFold(r, "prism") && *jobopts.Endpoint == "":
		return "prism, embedded in this process"
	case *jobopts.Endpoint != "":
		return r + " at " + *jobopts.Endpoint
	}
	return r
}

// countGroups counts the distinct groups of shards.
func countGroups(shards []shard) int {
	seen := map[string]bool{}
	for _, s := range shards {
		seen[s.Group] = true
	}
	return len(seen)
}
