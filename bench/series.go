package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bloomwatch/bloomwatch/filterpolicy"

	"github.com/bloomwatch/bloomwatch/bench/clientjob"
)

// RunRecord is one measured client run.
type RunRecord struct {
	Client      string  `json:"client"`
	Round       int     `json:"round"`
	WallMS      float64 `json:"wall_ms"`
	CPUMS       float64 `json:"cpu_ms"`
	ServerCPUMS float64 `json:"server_cpu_ms"`
	MaxRSS      int64   `json:"max_rss_bytes"`
	Bytes       uint64  `json:"bytes_received"`
	Tip         int32   `json:"tip_height"`
	Found       int     `json:"txs_found"`
	FP          int     `json:"false_positives"`
	FPUnit      string  `json:"fp_unit"`
	Missing     int     `json:"missing,omitempty"`
	Match       bool    `json:"match"`
	Failed      bool    `json:"failed,omitempty"`
	Detail      string  `json:"detail,omitempty"`
	// Phases are the client's own phase timings in ms, when it reports
	// them.
	Phases map[string]float64 `json:"phases,omitempty"`
	// Filter is how a BIP37 client's filter ended up.
	Filter *FilterReport `json:"filter,omitempty"`
	// SpotChecks and Omissions are bloomwatch's cross-peer checks and
	// what they found.
	SpotChecks int `json:"spot_checks,omitempty"`
	Omissions  int `json:"omissions,omitempty"`
}

// Summary is the median of a client's runs in one series.
type Summary struct {
	Client      string  `json:"client"`
	Runs        int     `json:"runs"`
	WallMS      float64 `json:"wall_ms"`
	CPUMS       float64 `json:"cpu_ms"`
	ServerCPUMS float64 `json:"server_cpu_ms"`
	MaxRSS      int64   `json:"max_rss_bytes"`
	Bytes       uint64  `json:"bytes_received"`
	Found       int     `json:"txs_found"`
	FP          int     `json:"false_positives"`
	FPUnit      string  `json:"fp_unit"`
	AllMatch    bool    `json:"all_match"`
	// SyncMS is the median of the client's own "p2p sync" phase: from its
	// first filter (or header request) to synced, without process
	// start-up and shutdown; 0 when the client does not report it.
	SyncMS float64 `json:"p2p_sync_ms"`
	// Filter holds the medians of the runs' filter figures (each run
	// draws a new tweak; Capped is true when any run's filter was).
	Filter *FilterReport `json:"filter,omitempty"`
	// SpotChecks is the median count of blocks bloomwatch asked again
	// from a second peer; Omissions the total omissions found.
	SpotChecks int `json:"spot_checks,omitempty"`
	Omissions  int `json:"omissions,omitempty"`
}

// SeriesReport is every run on one chain, with medians.
type SeriesReport struct {
	Chain      chainParams `json:"chain"`
	Tip        int32       `json:"tip_height"`
	TruthTxs   int         `json:"truth_txs"`
	ChainBuild string      `json:"chain_build"`
	HeaderOnly bool        `json:"header_only,omitempty"`
	Runs       []RunRecord `json:"runs"`
	Medians    []Summary   `json:"medians"`
	Mismatches int         `json:"mismatches"`
}

// runSeries serves the chain for p and runs the clients alternately, rounds
// times: A B C A B C ...
func runSeries(ctx context.Context, env *benchEnv, p chainParams, clients []string, rounds int, headerOnly bool) (*SeriesReport, error) {
	fx, err := prepareChain(ctx, env, p)
	if err != nil {
		return nil, err
	}
	for _, c := range clients {
		if _, err := lookupClient(c); err != nil {
			return nil, err
		}
	}
	srv, err := fx.serve(ctx, env, peersNeeded(clients))
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	fmt.Printf("chain %s: tip %d, %d wallet txs, %d addresses (%s); served by btcd pid %v at %s\n",
		p, srv.tip, len(fx.truth), len(fx.addresses), fx.build, srv.pids(), strings.Join(srv.peers(len(srv.more)+1), ", "))

	var birthday int32
	if headerOnly {
		// A birthday past the tip: every client fetches headers only.
		birthday = srv.tip + 1
	}
	truth := truthFrom(fx.truth, birthday)
	rep := &SeriesReport{Chain: p, Tip: srv.tip, TruthTxs: len(truth), ChainBuild: fx.build, HeaderOnly: headerOnly}
	for r := 1; r <= rounds; r++ {
		for _, c := range clients {
			rec, err := runClientOnce(ctx, env, fx, srv, c, r, birthday, truth)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				// One failed run is a result, not the end of the bench.
				rec = RunRecord{Client: c, Round: r, Failed: true, Detail: err.Error()}
				fmt.Printf("  round %d %-18s FAILED: %v\n", r, c, err)
				rep.Runs = append(rep.Runs, rec)
				rep.Mismatches++
				continue
			}
			status := "ok"
			if !rec.Match {
				status = "MISMATCH " + rec.Detail
				rep.Mismatches++
			}
			extra := ""
			if f := rec.Filter; f != nil {
				extra = fmt.Sprintf("  filter %s loads %d end rate %.1e", filterCell(f), f.Loads, f.EndFPRate)
			}
			if rec.SpotChecks > 0 {
				extra += fmt.Sprintf("  checks %d", rec.SpotChecks)
			}
			fmt.Printf("  round %d %-18s wall %8.0f ms  cpu %8.0f ms  rss %6.1f MiB  recv %9d B  txs %d/%d  fp %d %s  %s%s%s\n",
				r, c, rec.WallMS, rec.CPUMS, float64(rec.MaxRSS)/(1<<20), rec.Bytes, rec.Found, len(truth), rec.FP, rec.FPUnit, status, phases(rec.Phases), extra)
			rep.Runs = append(rep.Runs, rec)
		}
	}
	for _, c := range clients {
		rep.Medians = append(rep.Medians, summarize(c, rep.Runs))
	}
	if env.cfg.CPUProfiles != "" {
		var paths []string
		for _, c := range clients {
			for r := 1; r <= rounds; r++ {
				if path := profilePath(env, fx, c, r); fileExists(path) {
					paths = append(paths, path)
				}
			}
		}
		splits, err := splitFiles(paths)
		if err != nil {
			return nil, err
		}
		for i := range splits {
			splits[i].client = strings.TrimPrefix(splits[i].client, profileStem(fx)+"-")
		}
		fmt.Printf("\nCPU by component, chain %s (profiles in %s):\n", p, env.cfg.CPUProfiles)
		printCPUSplit(os.Stdout, splits, "minimal")
	}
	return rep, nil
}

// profileStem names a chain's profiles in --cpu-profiles.
func profileStem(fx *chainFixture) string {
	p := fx.params
	return fmt.Sprintf("b%d-t%d-a%d-s%d", p.Blocks, p.Txs, p.Addrs, p.Seed)
}

// profilePath is where a client run writes its CPU profile under
// --cpu-profiles: STEM-CLIENT.ROUND.pprof.
func profilePath(env *benchEnv, fx *chainFixture, client string, round int) string {
	return filepath.Join(env.cfg.CPUProfiles, fmt.Sprintf("%s-%s.%d.pprof", profileStem(fx), client, round))
}

// fileExists reports whether path names a file (a failed run may have
// written no profile).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// runClientOnce runs one client as a child process in a fresh data dir.
// truthFrom keeps the wallet transactions at or above birthday.
func truthFrom(all []FoundTx, birthday int32) []FoundTx {
	var out []FoundTx
	for _, t := range all {
		if t.Height >= birthday {
			out = append(out, t)
		}
	}
	return out
}

func runClientOnce(ctx context.Context, env *benchEnv, fx *chainFixture, srv *servedChain, client string, round int,
	birthday int32, truth []FoundTx) (RunRecord, error) {
	dir, err := os.MkdirTemp(env.tmp, client+"-")
	if err != nil {
		return RunRecord{}, fmt.Errorf("run dir: %w", err)
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(env.log, "=== %s round %d chain %s\n", client, round, fx.params)

	spec, err := lookupClient(client)
	if err != nil {
		return RunRecord{}, err
	}
	var (
		m   Measure
		out []byte
	)
	switch spec.kind {
	case kindBloomwatch:
		args := []string{"sync", "--datadir", filepath.Join(dir, "data"), "--network", "simnet", "--until-synced", "--json", "--no-tui"}
		for _, p := range srv.peers(spec.peers) {
			args = append(args, "--connect", p)
		}
		args = append(args, spec.args...)
		if env.cfg.CPUProfiles != "" {
			args = append(args, "--cpuprofile", profilePath(env, fx, client, round))
		}
		if birthday > 0 {
			args = append(args, "--birthday", fmt.Sprint(birthday))
		}
		if spec.xpub {
			args = append(args, "--xpub", fx.xpub)
		} else {
			for _, a := range fx.addresses {
				args = append(args, "--address", a)
			}
		}
		bin := env.bloomwatch
		if spec.base {
			if bin = env.bloomwatchBase; bin == "" {
				return RunRecord{}, fmt.Errorf("client %s needs --bw-base", client)
			}
		}
		m, out, err = runMeasured(ctx, env, srv.pids(), env.log, bin, args...)
	default:
		job := &ClientJob{Network: "simnet", Connect: srv.p2p, Addresses: fx.addresses,
			DataDir: filepath.Join(dir, "data"), FPRate: env.cfg.FPRate, Birthday: birthday}
		if spec.bwCapacity {
			job.Capacity = filterpolicy.FilterCapacity(len(fx.addresses))
		}
		if env.cfg.CPUProfiles != "" {
			job.CPUProfile = profilePath(env, fx, client, round)
		}
		jobPath := filepath.Join(dir, "job.json")
		if err := clientjob.WriteJob(jobPath, job); err != nil {
			return RunRecord{}, err
		}
		if spec.kind == kindNeutrino {
			m, out, err = runMeasured(ctx, env, srv.pids(), nil, env.neutrino, jobPath)
		} else {
			m, out, err = runMeasured(ctx, env, srv.pids(), nil, env.self, spec.kind, jobPath)
		}
	}
	if err != nil {
		return RunRecord{}, fmt.Errorf("%s round %d: %w (see the log)", client, round, err)
	}
	var res *ClientResult
	if spec.kind == kindBloomwatch {
		var run *bwRun
		if run, err = parseBloomwatchJSON(out); err == nil {
			res = run.result
			if birthday == 0 {
				// With a birthday past the tip bloomwatch loads its
				// filter after the headers, so the first filterload
				// does not bound its sync.
				res.Phases = run.phases
			}
		}
	} else {
		res = &ClientResult{}
		err = json.Unmarshal(out, res)
	}
	if err != nil {
		return RunRecord{}, fmt.Errorf("%s round %d: result: %w", client, round, err)
	}
	rec := RunRecord{
		Client: client, Round: round,
		WallMS: ms(m.Wall), CPUMS: ms(m.CPU), ServerCPUMS: ms(m.ServerCPU), MaxRSS: m.MaxRSS,
		Bytes: res.BytesReceived, Tip: res.TipHeight, Found: len(res.Txs),
		FP: res.FalsePositives, FPUnit: res.FPUnit, Missing: res.Missing, Phases: res.Phases,
		Filter: res.Filter, SpotChecks: res.SpotChecks, Omissions: res.Omissions,
	}
	rec.Match, rec.Detail = compareTruth(truth, res.Txs)
	synced := res.TipHeight
	if birthday > srv.tip && res.HeaderHeight > 0 {
		synced = res.HeaderHeight // the wallet's tip stays below its birthday
	}
	if rec.Match && synced != srv.tip {
		rec.Match, rec.Detail = false, fmt.Sprintf("synced to %d, tip is %d", synced, srv.tip)
	}
	return rec, nil
}

// phases formats a client's phase timings, sorted by name.
func phases(p map[string]float64) string {
	if len(p) == 0 {
		return ""
	}
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("  (")
	for i, k := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.0f ms", k, p[k])
	}
	b.WriteString(")")
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// compareTruth checks that found equals truth as a set of (txid, height).
func compareTruth(truth, found []FoundTx) (bool, string) {
	want := make(map[FoundTx]bool, len(truth))
	for _, t := range truth {
		want[t] = true
	}
	var extra, missing []string
	got := make(map[FoundTx]bool, len(found))
	for _, f := range found {
		got[f] = true
		if !want[f] {
			extra = append(extra, fmt.Sprintf("%s@%d", f.Txid[:12], f.Height))
		}
	}
	for _, t := range truth {
		if !got[t] {
			missing = append(missing, fmt.Sprintf("%s@%d", t.Txid[:12], t.Height))
		}
	}
	if len(extra) == 0 && len(missing) == 0 && len(got) == len(found) {
		return true, ""
	}
	short := func(s []string) string {
		if len(s) > 3 {
			return strings.Join(s[:3], ",") + ",..."
		}
		return strings.Join(s, ",")
	}
	return false, fmt.Sprintf("missing %d [%s] extra %d [%s] duplicates %d",
		len(missing), short(missing), len(extra), short(extra), len(found)-len(got))
}

func summarize(client string, runs []RunRecord) Summary {
	var w, c, s []float64
	var rss, bytes, found, fp, syncs []float64
	sum := Summary{Client: client, AllMatch: true}
	for _, r := range runs {
		if r.Client != client {
			continue
		}
		if r.Failed {
			sum.AllMatch = false
			continue
		}
		sum.Runs++
		w = append(w, r.WallMS)
		c = append(c, r.CPUMS)
		s = append(s, r.ServerCPUMS)
		rss = append(rss, float64(r.MaxRSS))
		bytes = append(bytes, float64(r.Bytes))
		found = append(found, float64(r.Found))
		fp = append(fp, float64(r.FP))
		if v, ok := r.Phases["p2p sync"]; ok {
			syncs = append(syncs, v)
		}
		sum.FPUnit = r.FPUnit
		sum.AllMatch = sum.AllMatch && r.Match
	}
	sum.WallMS, sum.CPUMS, sum.ServerCPUMS = median(w), median(c), median(s)
	sum.MaxRSS, sum.Bytes = int64(median(rss)), uint64(median(bytes))
	sum.Found, sum.FP = int(median(found)), int(median(fp))
	sum.SyncMS = median(syncs)
	sum.Filter = medianFilter(client, runs)
	var checks []float64
	for _, r := range runs {
		if r.Client == client && !r.Failed {
			checks = append(checks, float64(r.SpotChecks))
			sum.Omissions += r.Omissions
		}
	}
	sum.SpotChecks = int(median(checks))
	return sum
}

// medianFilter returns the medians of client's runs' filter figures, nil
// when no run reported a filter.
func medianFilter(client string, runs []RunRecord) *FilterReport {
	var bytes, k, capacity, elements, target, load, end, loads []float64
	out := &FilterReport{}
	for _, r := range runs {
		if r.Client != client || r.Failed || r.Filter == nil {
			continue
		}
		f := r.Filter
		bytes = append(bytes, float64(f.Bytes))
		k = append(k, float64(f.HashFuncs))
		capacity = append(capacity, float64(f.Capacity))
		elements = append(elements, float64(f.Elements))
		target = append(target, f.TargetFPRate)
		load = append(load, f.LoadFPRate)
		end = append(end, f.EndFPRate)
		loads = append(loads, float64(f.Loads))
		out.Capped = out.Capped || f.Capped
	}
	if len(bytes) == 0 {
		return nil
	}
	out.Bytes, out.HashFuncs, out.Capacity = int(median(bytes)), uint32(median(k)), uint32(median(capacity))
	out.Elements, out.TargetFPRate, out.LoadFPRate = int(median(elements)), median(target), median(load)
	out.EndFPRate, out.Loads = median(end), int(median(loads))
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
