package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// benchConfig holds the command line of the main bench command.
type benchConfig struct {
	Blocks   int
	Txs      int
	Addrs    int
	Spend    float64
	Runs     int
	Seed     int64
	Purpose  uint32
	Clients  string
	FPRate   float64
	JSONPath string
	LogPath  string

	Scale       bool
	ScaleBlocks []int
	ScaleAddrs  []int
	ScaleGrid   bool
	ScaleRuns   int
	ScaleCli    string

	// Scenarios are the large-wallet, dense-block and check scenarios to run (scenarios.go).
	Scenarios    []string
	ScenarioRuns int
	DenseBlocks  int
	DenseTxs     int
	DenseAddrs   int

	BWRev       string
	BWBase      string
	Headers     int
	HeadersP2P  int
	HeadersCli  string
	SkipCompare bool
	// CPUProfiles is the directory every client run writes a CPU profile
	// into (--cpu-profiles); empty: no profiles.
	CPUProfiles string
}

func parseBenchFlags(args []string) (*benchConfig, error) {
	c := &benchConfig{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&c.Blocks, "blocks", 2000, "blocks of the comparison chain (after 100 maturity blocks)")
	fs.IntVar(&c.Txs, "txs", 10, "noise transactions per block")
	fs.IntVar(&c.Addrs, "addrs", 20, "watched addresses (BIP84 P2WPKH from testnet.Keyring)")
	fs.Float64Var(&c.Spend, "spend", 0.5, "fraction of the wallet's outputs spent later in the chain")
	fs.IntVar(&c.Runs, "runs", 3, "rounds of A B C (medians reported)")
	fs.Int64Var(&c.Seed, "seed", 1, "chain seed")
	fs.StringVar(&c.Clients, "clients", "bloomwatch,minimal,neutrino", "clients to run, in round order: bloomwatch (given the address list), bloomwatch-xpub (given the BIP84 vpub: gap-limit discovery), minimal, neutrino; variants: "+strings.Join(clientNames(), ", "))
	scen := fs.String("scenarios", "", "also run these scenarios (comma-separated, or all): "+strings.Join(scenarioOrder, ", "))
	fs.IntVar(&c.ScenarioRuns, "scenario-runs", 3, "rounds per scenario")
	fs.IntVar(&c.DenseBlocks, "dense-blocks", 60, "dense and checks scenarios: blocks of --dense-txs noise txs")
	fs.IntVar(&c.DenseTxs, "dense-txs", 2000, "dense and checks scenarios: noise txs per block")
	fs.IntVar(&c.DenseAddrs, "dense-addrs", 20, "dense and checks scenarios: watched addresses")
	fs.Float64Var(&c.FPRate, "fp-rate", 0.0001, "minimal loop's filter FP rate")
	fs.StringVar(&c.JSONPath, "json", "", "write all measurements as JSON to this file")
	fs.StringVar(&c.LogPath, "log", "", "client and btcd stderr go here (default: a new file under the user cache dir's bloomwatch/bench-logs, path printed)")
	fs.BoolVar(&c.Scale, "scale", false, "also run the scaling series (bloomwatch and minimal)")
	blocks := fs.String("scale-blocks", "500,2000,8000", "scaling series: chain lengths (at the first --scale-addrs value)")
	addrs := fs.String("scale-addrs", "20,200,2000", "scaling series: watched addresses (at --scale-blocks 2000, or the middle value)")
	fs.BoolVar(&c.ScaleGrid, "scale-grid", false, "scale over the full blocks x addresses grid instead of the two series")
	fs.IntVar(&c.ScaleRuns, "scale-runs", 1, "rounds per scaling point")
	fs.StringVar(&c.ScaleCli, "scale-clients", "bloomwatch,minimal", "clients of the scaling series")
	fs.IntVar(&c.Headers, "headers", 0, "also run a header-only sync of this many generated headers (e.g. 100000)")
	fs.StringVar(&c.BWRev, "bw-rev", "", "build bloomwatch from this git revision of the main module (git archive into a temp dir; e.g. HEAD) instead of the working tree, which may hold others' uncommitted work")
	fs.StringVar(&c.BWBase, "bw-base", "", "also build bloomwatch from this git revision and run it as the clients bloomwatch-base and bloomwatch-xpub-base, alternated with the others in the same rounds (before and after a change in one run); the address scenarios then include them")
	fs.IntVar(&c.HeadersP2P, "headers-p2p", 0, "also run a header-only P2P sync of a chain of this many empty blocks (mined in-process and submitted to btcd once, then cached)")
	fs.StringVar(&c.HeadersCli, "headers-p2p-clients", "bloomwatch,minimal", "clients of the header-only P2P sync (neutrino validates simnet headers slowly, see README)")
	fs.BoolVar(&c.SkipCompare, "no-compare", false, "skip the A B C comparison (run only --scale / --headers)")
	fs.StringVar(&c.CPUProfiles, "cpu-profiles", "", "write a CPU profile of every client run into this directory (bloomwatch's sync --cpuprofile, the minimal loop's and neutrino's job) and print after each series each client's CPU by component and its difference from the minimal loop's (bench cpusplit); the profiler's own cost is in the CPU measured")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("flags: %w", err)
	}
	var err error
	if c.ScaleBlocks, err = parseInts(*blocks); err != nil {
		return nil, fmt.Errorf("--scale-blocks: %w", err)
	}
	if c.ScaleAddrs, err = parseInts(*addrs); err != nil {
		return nil, fmt.Errorf("--scale-addrs: %w", err)
	}
	if c.Runs < 1 || c.Blocks < 1 || c.Addrs < 1 || c.Txs < 0 || c.Spend < 0 || c.Spend > 1 {
		return nil, errors.New("flags: need runs, blocks, addrs >= 1, txs >= 0, 0 <= spend <= 1")
	}
	if c.ScenarioRuns < 1 || c.DenseBlocks < 1 || c.DenseTxs < 0 || c.DenseAddrs < 1 {
		return nil, errors.New("flags: need scenario-runs, dense-blocks, dense-addrs >= 1, dense-txs >= 0")
	}
	for _, name := range strings.Split(c.Clients+","+c.ScaleCli+","+c.HeadersCli, ",") {
		if _, err := lookupClient(name); err != nil {
			return nil, fmt.Errorf("--clients: %w", err)
		}
	}
	for _, n := range strings.Split(*scen, ",") {
		if n = strings.TrimSpace(n); n != "" {
			c.Scenarios = append(c.Scenarios, n)
		}
	}
	if _, err := scenarios(c); err != nil {
		return nil, err
	}
	if c.CPUProfiles != "" {
		if c.CPUProfiles, err = filepath.Abs(c.CPUProfiles); err != nil {
			return nil, fmt.Errorf("--cpu-profiles: %w", err)
		}
		if err := os.MkdirAll(c.CPUProfiles, 0o755); err != nil {
			return nil, fmt.Errorf("--cpu-profiles: %w", err)
		}
	}
	return c, nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// benchEnv is what every measured run shares: the bench's own executable
// (re-executed for the minimal and neutrino children), the bloomwatch binary
// and the log sink.
type benchEnv struct {
	self       string
	spawn      string
	neutrino   string
	bloomwatch string
	// bloomwatchBase is the --bw-base build the -base clients run.
	bloomwatchBase string
	log            io.Writer
	tmp            string
	cfg            *benchConfig
}

// Report is the JSON document --json writes.
type Report struct {
	Machine Machine `json:"machine"`
	Command string  `json:"command"`
	// Source is the bloomwatch commit measured ("+dirty" when files of
	// the main module differed from it).
	Source string `json:"source"`
	// BaseSource is the commit the -base clients ran (--bw-base).
	BaseSource string         `json:"base_source,omitempty"`
	Started    time.Time      `json:"started"`
	Compare    *SeriesReport  `json:"compare,omitempty"`
	Scale      []SeriesReport `json:"scale,omitempty"`
	Headers    *HeadersReport `json:"headers,omitempty"`
	HeadersP2P *SeriesReport  `json:"headers_p2p,omitempty"`
	// Scenarios are the large-wallet, dense-block and check scenarios run (--scenarios).
	Scenarios  []ScenarioReport `json:"scenarios,omitempty"`
	Mismatches int              `json:"mismatches"`
}

func runBench(ctx context.Context, args []string) error {
	cfg, err := parseBenchFlags(args)
	if err != nil {
		return err
	}
	rep := &Report{Machine: machineInfo(), Command: "go run . " + strings.Join(args, " "), Started: time.Now().UTC()}
	printMachine(os.Stdout, rep.Machine)

	tmp, err := os.MkdirTemp("", "bloomwatch-bench-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	logPath := cfg.LogPath
	if logPath == "" {
		root, err := cacheRoot()
		if err != nil {
			return err
		}
		dir := filepath.Join(filepath.Dir(root), "bench-logs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("log dir: %w", err)
		}
		logPath = filepath.Join(dir, "bench-"+time.Now().UTC().Format("20060102-150405")+".log")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	defer logf.Close()
	fmt.Printf("logs: %s\n", logPath)

	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("own executable: %w", err)
	}
	env := &benchEnv{self: self, log: logf, tmp: tmp, cfg: cfg}
	if env.spawn, err = buildSpawn(ctx, tmp); err != nil {
		return err
	}
	if strings.Contains(cfg.Clients+","+cfg.ScaleCli+","+cfg.HeadersCli, kindNeutrino) {
		if env.neutrino, err = buildNeutrino(ctx, tmp); err != nil {
			return err
		}
	}
	needBW := len(cfg.Scenarios) > 0 || (cfg.Scale && strings.Contains(cfg.ScaleCli, "bloomwatch")) ||
		(cfg.HeadersP2P > 0 && strings.Contains(cfg.HeadersCli, "bloomwatch")) ||
		(!cfg.SkipCompare && strings.Contains(cfg.Clients, "bloomwatch"))
	if needBW {
		if env.bloomwatch, rep.Source, err = buildBloomwatch(ctx, tmp, cfg.BWRev); err != nil {
			return err
		}
		fmt.Printf("bloomwatch built from %s\n", rep.Source)
	}
	if cfg.BWBase != "" {
		dir := filepath.Join(tmp, "base")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("base build dir: %w", err)
		}
		if env.bloomwatchBase, rep.BaseSource, err = buildBloomwatch(ctx, dir, cfg.BWBase); err != nil {
			return err
		}
		fmt.Printf("bloomwatch-base built from %s\n", rep.BaseSource)
	}

	if !cfg.SkipCompare {
		clients := strings.Split(cfg.Clients, ",")
		s, err := runSeries(ctx, env, chainParams{Blocks: cfg.Blocks, Txs: cfg.Txs, Addrs: cfg.Addrs, Spend: cfg.Spend, Seed: cfg.Seed}, clients, cfg.Runs, false)
		if err != nil {
			return err
		}
		rep.Compare = s
		rep.Mismatches += s.Mismatches
		printSeries(os.Stdout, s)
	}
	if cfg.Scale {
		for _, pt := range scalePoints(cfg) {
			s, err := runSeries(ctx, env, pt, strings.Split(cfg.ScaleCli, ","), cfg.ScaleRuns, false)
			if err != nil {
				return err
			}
			rep.Scale = append(rep.Scale, *s)
			rep.Mismatches += s.Mismatches
		}
		printScale(os.Stdout, rep.Scale)
	}
	scs, err := scenarios(cfg)
	if err != nil {
		return err
	}
	for _, sc := range scs {
		r, err := runScenario(ctx, env, sc, cfg.ScenarioRuns)
		if err != nil {
			return err
		}
		rep.Scenarios = append(rep.Scenarios, *r)
		rep.Mismatches += r.Series.Mismatches
	}
	if cfg.HeadersP2P > 0 {
		p := chainParams{Blocks: cfg.HeadersP2P, Seed: cfg.Seed, Empty: true}
		s, err := runSeries(ctx, env, p, strings.Split(cfg.HeadersCli, ","), cfg.Runs, true)
		if err != nil {
			return err
		}
		rep.HeadersP2P = s
		rep.Mismatches += s.Mismatches
		printHeadersP2P(os.Stdout, s)
	}
	if cfg.Headers > 0 {
		h, err := runHeadersBench(ctx, env, cfg.Headers)
		if err != nil {
			return err
		}
		rep.Headers = h
		printHeaders(os.Stdout, h)
	}
	rep.Machine.LoadEnd = loadAvg()
	fmt.Printf("\nload average at the end: %s (on %d cores; other processes share them)\n", rep.Machine.LoadEnd, rep.Machine.Cores)
	if cfg.JSONPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("encode report: %w", err)
		}
		if err := os.WriteFile(cfg.JSONPath, b, 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	if rep.Mismatches > 0 {
		return fmt.Errorf("%d runs failed or found transactions different from the truth (FAILED or MISMATCH above)", rep.Mismatches)
	}
	return nil
}

// scalePoints lists the scaling chains: by default two series through the
// middle point (blocks at the first address count, addresses at the middle
// chain length), or the full grid.
func scalePoints(cfg *benchConfig) []chainParams {
	mk := func(b, a int) chainParams {
		return chainParams{Blocks: b, Txs: cfg.Txs, Addrs: a, Spend: cfg.Spend, Seed: cfg.Seed}
	}
	var pts []chainParams
	seen := map[chainParams]bool{}
	add := func(p chainParams) {
		if !seen[p] {
			seen[p] = true
			pts = append(pts, p)
		}
	}
	if cfg.ScaleGrid {
		for _, b := range cfg.ScaleBlocks {
			for _, a := range cfg.ScaleAddrs {
				add(mk(b, a))
			}
		}
		return pts
	}
	midB := cfg.ScaleBlocks[len(cfg.ScaleBlocks)/2]
	for _, b := range cfg.ScaleBlocks {
		add(mk(b, cfg.ScaleAddrs[0]))
	}
	for _, a := range cfg.ScaleAddrs {
		add(mk(midB, a))
	}
	return pts
}

// buildBloomwatch builds cmd/bloomwatch once into dir: from the main
// module's working tree, or from git revision rev exported into dir. It
// returns the binary and the source it was built from.
func buildBloomwatch(ctx context.Context, dir, rev string) (string, string, error) {
	root, err := mainModuleRoot(ctx)
	if err != nil {
		return "", "", err
	}
	src, source := root, sourceVersion(ctx)
	if rev != "" {
		hash, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", rev).Output()
		if err != nil {
			return "", "", fmt.Errorf("--bw-rev %s: %w", rev, err)
		}
		source = strings.TrimSpace(string(hash))
		src = filepath.Join(dir, "src-"+source)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return "", "", fmt.Errorf("export %s: %w", rev, err)
		}
		export := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "export", root, source, src)
		if b, err := export.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("export %s: %w\n%s", rev, err, b)
		}
	}
	out := filepath.Join(dir, "bloomwatch")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/bloomwatch")
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build ./cmd/bloomwatch: %w\n%s", err, b)
	}
	return out, source, nil
}

// buildSpawn builds the measuring helper ./spawn of the bench module.
func buildSpawn(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate the bench module (run the bench from bench/): %w", err)
	}
	out := filepath.Join(dir, "spawn")
	build := exec.CommandContext(ctx, "go", "build", "-o", out, "./spawn")
	build.Dir = strings.TrimSpace(string(b))
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./spawn: %w\n%s", err, b)
	}
	return out, nil
}

// buildNeutrino builds the neutrino client (bench/neutrino, a module of its
// own on btcd v0.24.2) into dir.
func buildNeutrino(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate the bench module (run the bench from bench/): %w", err)
	}
	out := filepath.Join(dir, "neutrino")
	build := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
	build.Dir = filepath.Join(strings.TrimSpace(string(b)), "neutrino")
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build bench/neutrino: %w\n%s", err, b)
	}
	return out, nil
}

// sourceVersion names the main module's commit, "+dirty" when its tracked
// Go files outside bench/ differ from it.
func sourceVersion(ctx context.Context) string {
	root, err := mainModuleRoot(ctx)
	if err != nil {
		return "unknown"
	}
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	v := strings.TrimSpace(string(out))
	st, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench").Output()
	if err == nil && len(bytes.TrimSpace(st)) > 0 {
		v += "+dirty"
	}
	return v
}

// mainModuleRoot finds the bloomwatch module directory through the replace
// directive of the bench module.
func mainModuleRoot(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{if .Replace}}{{.Replace.Dir}}{{else}}{{.Dir}}{{end}}", "github.com/bloomwatch/bloomwatch")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate the bloomwatch module (run the bench from bench/): %w", err)
	}
	dir := strings.TrimSpace(string(b))
	if !filepath.IsAbs(dir) {
		wd, _ := os.Getwd()
		dir = filepath.Join(wd, dir)
	}
	return dir, nil
}
