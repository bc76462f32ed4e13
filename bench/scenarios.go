package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Scenario names of --scenarios (large wallets and mainnet-density
// blocks, and the cost of the omission checks).
const (
	scenarioAddrs2000  = "addrs2000"
	scenarioAddrs10000 = "addrs10000"
	scenarioDense      = "dense"
	scenarioChecks     = "checks"
	// scenarioProtocols is bloomwatch over BIP37 and over BIP158 beside
	// neutrino on the dense chain (not in "all": name it).
	scenarioProtocols = "protocols"
)

// scenarioOrder is the order "all" runs them in.
var scenarioOrder = []string{scenarioAddrs2000, scenarioAddrs10000, scenarioDense, scenarioChecks}

// Metrics a goal can bound.
const (
	metricWall  = "wall"
	metricCPU   = "cpu"
	metricRSS   = "rss"
	metricBytes = "bytes"
)

// goal bounds client's median metric over versus's in the same series; max
// 0 only reports the ratio.
type goal struct {
	client, versus, metric string
	max                    float64
}

// scenario is one named series: a chain, the clients alternated on it and
// the goals checked on its medians.
type scenario struct {
	name    string
	doc     string
	chain   chainParams
	clients []string
	goals   []goal
	// base names the clients the table's ratios are taken over.
	base []string
}

// GoalResult is one goal evaluated on a series' medians.
type GoalResult struct {
	Client string  `json:"client"`
	Versus string  `json:"versus"`
	Metric string  `json:"metric"`
	Ratio  float64 `json:"ratio"`
	// RoundRatios are the same ratio within each round (client's run over
	// versus's run of the same round); RoundMedian is their median, less
	// sensitive to a load spike that hits one client's runs only.
	RoundRatios []float64 `json:"round_ratios,omitempty"`
	RoundMedian float64   `json:"round_median,omitempty"`
	// Max is the goal (0: the ratio is only reported); Met says whether
	// Ratio <= Max.
	Max float64 `json:"max,omitempty"`
	Met bool    `json:"met"`
}

// ScenarioReport is one scenario's series with its goals.
type ScenarioReport struct {
	Name   string       `json:"name"`
	Doc    string       `json:"doc"`
	Series SeriesReport `json:"series"`
	Goals  []GoalResult `json:"goals"`
	// LoadStart and LoadEnd are /proc/loadavg around the series.
	LoadStart string `json:"load_start"`
	LoadEnd   string `json:"load_end"`
}

// addrLimits are the bounds of one bloomwatch client's ratios over a
// minimal loop in an address-count scenario (0: reported only).
type addrLimits struct{ wall, cpu, rss float64 }

// addrGoals are the goals of an address-count scenario: each bloomwatch
// client (list: the address list; xpub: the account key) against each
// minimal loop (its own sizing and bloomwatch's). With base (--bw-base)
// the -base clients get the same ratios, reported only, and each client
// its ratios over its -base twin.
func addrGoals(list, xpub addrLimits, base bool) []goal {
	var gs []goal
	for _, c := range []string{"bloomwatch", "bloomwatch-xpub"} {
		lim := list
		if c == "bloomwatch-xpub" {
			lim = xpub
		}
		for _, v := range []string{"minimal", "minimal-bwcap"} {
			gs = append(gs, goal{c, v, metricWall, lim.wall}, goal{c, v, metricCPU, lim.cpu}, goal{c, v, metricRSS, lim.rss},
				goal{c, v, metricBytes, 0})
			if base {
				b := c + "-base"
				gs = append(gs, goal{b, v, metricWall, 0}, goal{b, v, metricCPU, 0}, goal{b, v, metricRSS, 0},
					goal{b, v, metricBytes, 0})
			}
		}
		if base {
			for _, m := range []string{metricWall, metricCPU, metricRSS, metricBytes} {
				gs = append(gs, goal{c, c + "-base", m, 0})
			}
		}
	}
	return gs
}

// scenarios returns the definitions of the named scenarios.
func scenarios(cfg *benchConfig) ([]scenario, error) {
	names := cfg.Scenarios
	if len(names) == 1 && names[0] == "all" {
		names = scenarioOrder
	}
	addrChain := func(n int) chainParams {
		return chainParams{Blocks: 2000, Txs: 10, Addrs: n, Spend: cfg.Spend, Seed: cfg.Seed}
	}
	dense := chainParams{Blocks: cfg.DenseBlocks, Txs: cfg.DenseTxs, Addrs: cfg.DenseAddrs, Spend: cfg.Spend, Seed: cfg.Seed}
	addrClients := []string{"bloomwatch", "bloomwatch-xpub", "minimal", "minimal-bwcap"}
	base := cfg.BWBase != ""
	if base {
		addrClients = []string{"bloomwatch", "bloomwatch-base", "bloomwatch-xpub", "bloomwatch-xpub-base", "minimal", "minimal-bwcap"}
	}
	var out []scenario
	for _, n := range names {
		switch n {
		case scenarioAddrs2000:
			out = append(out, scenario{name: n, chain: addrChain(2000), clients: addrClients,
				doc:   "2,000 watched addresses (+ the change addresses the chain's spends paid), 2,000 blocks x 10 noise txs; goals: the address list <= 1.2x the minimal loop's wall and <= 1.5x its CPU, the xpub <= 1.5x its wall",
				goals: addrGoals(addrLimits{wall: 1.2, cpu: 1.5}, addrLimits{wall: 1.5}, base), base: []string{"minimal", "minimal-bwcap"}})
		case scenarioAddrs10000:
			out = append(out, scenario{name: n, chain: addrChain(10000), clients: addrClients,
				doc:   "10,000 watched addresses (+ change), 2,000 blocks x 10 noise txs; goals: the address list <= 1.5x the minimal loop's wall, the xpub <= 2x, both <= 2x its peak RSS",
				goals: addrGoals(addrLimits{wall: 1.5, rss: 2}, addrLimits{wall: 2, rss: 2}, base), base: []string{"minimal", "minimal-bwcap"}})
		case scenarioDense:
			out = append(out, scenario{name: n, chain: dense, clients: []string{"bloomwatch", "minimal", "minimal-bwcap"},
				doc: fmt.Sprintf("blocks of %d noise txs (mainnet density), %d blocks, %d watched addresses; goal: <= 1.2x the minimal loop's wall",
					cfg.DenseTxs, cfg.DenseBlocks, cfg.DenseAddrs),
				goals: []goal{{"bloomwatch", "minimal", metricWall, 1.2}, {"bloomwatch", "minimal", metricCPU, 0},
					{"bloomwatch", "minimal-bwcap", metricWall, 1.2}, {"bloomwatch", "minimal-bwcap", metricCPU, 0}},
				base: []string{"minimal", "minimal-bwcap"}})
		case scenarioChecks:
			clients := []string{"bloomwatch", "bloomwatch-2peers", "bloomwatch-check20", "bloomwatch-check1",
				"bloomwatch-full20", "bloomwatch-full1"}
			var gs []goal
			for _, c := range clients[1:] {
				for _, m := range []string{metricWall, metricCPU, metricBytes} {
					gs = append(gs, goal{c, "bloomwatch", m, 0})
				}
			}
			for _, c := range []string{"bloomwatch-check20", "bloomwatch-check1"} {
				for _, m := range []string{metricWall, metricCPU, metricBytes} {
					gs = append(gs, goal{c, "bloomwatch-2peers", m, 0})
				}
			}
			out = append(out, scenario{name: n, chain: dense, clients: clients,
				doc: fmt.Sprintf("omission checks on the dense chain (%d blocks x %d txs): cross-peer from a second btcd serving its own copy of the chain, full blocks from the one peer",
					cfg.DenseBlocks, cfg.DenseTxs),
				goals: gs, base: []string{"bloomwatch", "bloomwatch-2peers"}})
		case scenarioProtocols:
			clients := []string{"bloomwatch", "bloomwatch-bip158", "neutrino"}
			var gs []goal
			for _, c := range clients[1:] {
				for _, m := range []string{metricWall, metricCPU, metricRSS, metricBytes} {
					gs = append(gs, goal{c, "bloomwatch", m, 0})
				}
			}
			for _, m := range []string{metricWall, metricCPU, metricRSS, metricBytes} {
				gs = append(gs, goal{"bloomwatch-bip158", "neutrino", m, 0})
			}
			out = append(out, scenario{name: n, chain: dense, clients: clients,
				doc: fmt.Sprintf("bloomwatch over BIP37 and over BIP158 beside neutrino on the dense chain (%d blocks x %d txs, %d addresses), one btcd",
					cfg.DenseBlocks, cfg.DenseTxs, cfg.DenseAddrs),
				goals: gs, base: []string{"bloomwatch", "neutrino"}})
		default:
			return nil, fmt.Errorf("--scenarios: unknown scenario %q (known: all, %s, %s)", n, strings.Join(scenarioOrder, ", "), scenarioProtocols)
		}
	}
	return out, nil
}

// runScenario runs one scenario's series and evaluates its goals.
func runScenario(ctx context.Context, env *benchEnv, sc scenario, rounds int) (*ScenarioReport, error) {
	fmt.Printf("\n== scenario %s: %s\n", sc.name, sc.doc)
	load := loadAvg()
	s, err := runSeries(ctx, env, sc.chain, sc.clients, rounds, false)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.name, err)
	}
	rep := &ScenarioReport{Name: sc.name, Doc: sc.doc, Series: *s, LoadStart: load, LoadEnd: loadAvg()}
	rep.Goals = evalGoals(s, sc.goals)
	printScenario(os.Stdout, rep, sc.base)
	return rep, nil
}

// metricOf returns a summary's value of metric.
func metricOf(s Summary, metric string) float64 {
	switch metric {
	case metricWall:
		return s.WallMS
	case metricCPU:
		return s.CPUMS
	case metricRSS:
		return float64(s.MaxRSS)
	case metricBytes:
		return float64(s.Bytes)
	}
	return 0
}

// evalGoals evaluates goals on s's medians; a goal whose clients did not
// both run is left out.
func evalGoals(s *SeriesReport, goals []goal) []GoalResult {
	var out []GoalResult
	for _, g := range goals {
		a, ok1 := findSummary(s, g.client)
		b, ok2 := findSummary(s, g.versus)
		if !ok1 || !ok2 || a.Runs == 0 || b.Runs == 0 || metricOf(b, g.metric) == 0 {
			continue
		}
		r := metricOf(a, g.metric) / metricOf(b, g.metric)
		rr := roundRatios(s, g.client, g.versus, g.metric)
		out = append(out, GoalResult{Client: g.client, Versus: g.versus, Metric: g.metric, Ratio: r, Max: g.max,
			Met: g.max == 0 || r <= g.max, RoundRatios: rr, RoundMedian: median(rr)})
	}
	return out
}

// runMetric returns a run's value of metric.
func runMetric(r RunRecord, metric string) float64 {
	switch metric {
	case metricWall:
		return r.WallMS
	case metricCPU:
		return r.CPUMS
	case metricRSS:
		return float64(r.MaxRSS)
	case metricBytes:
		return float64(r.Bytes)
	}
	return 0
}

// roundRatios returns, for each round where both ran, client's metric
// over versus's.
func roundRatios(s *SeriesReport, client, versus, metric string) []float64 {
	byRound := make(map[int]RunRecord)
	for _, r := range s.Runs {
		if r.Client == versus && !r.Failed {
			byRound[r.Round] = r
		}
	}
	var out []float64
	for _, r := range s.Runs {
		if r.Client != client || r.Failed {
			continue
		}
		if v, ok := byRound[r.Round]; ok && runMetric(v, metric) > 0 {
			out = append(out, runMetric(r, metric)/runMetric(v, metric))
		}
	}
	return out
}

// spread formats the median and range of round ratios.
func spread(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmt.Sprintf("%.2fx [%.2f-%.2f]", median(v), lo, hi)
}

// filterCell formats a filter report for a table cell.
func filterCell(f *FilterReport) string {
	if f == nil {
		return "-"
	}
	c := ""
	if f.Capped {
		c = " capped"
	}
	return fmt.Sprintf("%dB k=%d cap=%d n=%d%s", f.Bytes, f.HashFuncs, f.Capacity, f.Elements, c)
}

// printScenario prints a scenario's medians, the filters, the ratios over
// its base clients and its goals.
func printScenario(w io.Writer, r *ScenarioReport, base []string) {
	s := &r.Series
	fmt.Fprintf(w, "\nscenario %s: medians of %d rounds, chain %s (tip %d, %d wallet txs); load average %s -> %s\n",
		r.Name, runsOf(s), s.Chain, s.Tip, s.TruthTxs, r.LoadStart, r.LoadEnd)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\twall ms\tp2p sync ms\tcpu ms\tbtcd cpu ms\tpeak RSS MiB\tbytes recv\tfalse pos\tchecks\ttruth\t")
	for _, m := range s.Medians {
		ok := "ok"
		if !m.AllMatch {
			ok = "MISMATCH"
		}
		if m.Omissions > 0 {
			ok += fmt.Sprintf(" (%d omissions)", m.Omissions)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t%d\t%d %s\t%d\t%s\t\n", m.Client, m.WallMS, m.SyncMS, m.CPUMS,
			m.ServerCPUMS, mib(m.MaxRSS), m.Bytes, m.FP, m.FPUnit, m.SpotChecks, ok)
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "client\tfilter (median)\ttarget\trate at load\trate at end\tloads\t")
	for _, m := range s.Medians {
		if f := m.Filter; f != nil {
			fmt.Fprintf(tw, "%s\t%s\t%.0e\t%.2e\t%.2e\t%d\t\n", m.Client, filterCell(f), f.TargetFPRate, f.LoadFPRate, f.EndFPRate, f.Loads)
		}
	}
	tw.Flush()
	for _, b := range base {
		o, ok := findSummary(s, b)
		if !ok {
			continue
		}
		for _, m := range s.Medians {
			if m.Client == b {
				continue
			}
			fmt.Fprintf(w, "%s/%s: wall %s  p2p sync %s  cpu %s  btcd cpu %s  rss %s  bytes %s;  per round: wall %s  cpu %s\n", m.Client, b,
				ratio(m.WallMS, o.WallMS), ratio(m.SyncMS, o.SyncMS), ratio(m.CPUMS, o.CPUMS), ratio(m.ServerCPUMS, o.ServerCPUMS),
				ratio(float64(m.MaxRSS), float64(o.MaxRSS)), ratio(float64(m.Bytes), float64(o.Bytes)),
				spread(roundRatios(s, m.Client, b, metricWall)), spread(roundRatios(s, m.Client, b, metricCPU)))
		}
	}
	for _, g := range r.Goals {
		if g.Max == 0 {
			continue
		}
		verdict := "met"
		if !g.Met {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "goal %s/%s %s %.2fx <= %.1fx: %s (per round %s)\n", g.Client, g.Versus, g.Metric, g.Ratio, g.Max, verdict, spread(g.RoundRatios))
	}
}

// runReport is the "report" subcommand: bench report FILE.json prints the
// scenario tables of a report --json wrote (e.g. again after the tables
// changed), with its goals re-evaluated.
func runReport(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: bench report FILE.json")
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("report %s: %w", args[0], err)
	}
	cfg, err := parseBenchFlags(nil)
	if err != nil {
		return err
	}
	cfg.Scenarios = scenarioOrder
	defs, err := scenarios(cfg)
	if err != nil {
		return err
	}
	fmt.Printf("report %s: %s, bloomwatch %s, started %s\n", args[0], rep.Command, rep.Source, rep.Started.Format(time.RFC3339))
	printMachine(os.Stdout, rep.Machine)
	for i := range rep.Scenarios {
		r := &rep.Scenarios[i]
		for _, d := range defs {
			if d.name == r.Name {
				r.Goals = evalGoals(&r.Series, d.goals)
				printScenario(os.Stdout, r, d.base)
			}
		}
	}
	return nil
}
