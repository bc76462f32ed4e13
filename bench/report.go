package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
)

// Machine describes where the figures were measured.
type Machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	Go     string `json:"go"`
	OS     string `json:"os"`
	Kernel string `json:"kernel"`
	// LoadStart and LoadEnd are /proc/loadavg's 1-minute load when the
	// bench started and ended: other work on the machine skews wall times.
	LoadStart string `json:"load_start"`
	LoadEnd   string `json:"load_end,omitempty"`
}

// loadAvg returns the 1-, 5- and 15-minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func machineInfo() Machine {
	m := Machine{CPU: "unknown", Cores: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	m.LoadStart = loadAvg()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

func printMachine(w io.Writer, m Machine) {
	fmt.Fprintf(w, "machine: %s, %d cores, %s, %s, kernel %s, load average %s\n", m.CPU, m.Cores, m.Go, m.OS, m.Kernel, m.LoadStart)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func findSummary(s *SeriesReport, client string) (Summary, bool) {
	for _, m := range s.Medians {
		if m.Client == client {
			return m, true
		}
	}
	return Summary{}, false
}

// printSeries prints the medians table and bloomwatch's ratios to the others.
func printSeries(w io.Writer, s *SeriesReport) {
	fmt.Fprintf(w, "\nmedians of %d rounds, chain %s (tip %d, %d wallet txs)\n", runsOf(s), s.Chain, s.Tip, s.TruthTxs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\twall ms\tp2p sync ms\tcpu ms\tbtcd cpu ms\tpeak RSS MiB\tbytes recv\ttxs found\tfalse pos\ttruth\t")
	for _, m := range s.Medians {
		ok := "ok"
		if !m.AllMatch {
			ok = "MISMATCH"
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t%d\t%d\t%d %s\t%s\t\n", m.Client, m.WallMS, m.SyncMS, m.CPUMS,
			m.ServerCPUMS, mib(m.MaxRSS), m.Bytes, m.Found, m.FP, m.FPUnit, ok)
	}
	tw.Flush()
	for _, name := range []string{"bloomwatch", "bloomwatch-xpub"} {
		printRatios(w, s, name)
	}
}

// printRatios prints client name's medians over the minimal loop's and
// neutrino's.
func printRatios(w io.Writer, s *SeriesReport, name string) {
	bw, ok := findSummary(s, name)
	if !ok {
		return
	}
	for _, other := range []string{"minimal", "neutrino"} {
		o, ok := findSummary(s, other)
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%s/%-8s wall %s  p2p sync %s  cpu %s  btcd cpu %s  rss %s  bytes %s\n", name, other,
			ratio(bw.WallMS, o.WallMS), ratio(bw.SyncMS, o.SyncMS), ratio(bw.CPUMS, o.CPUMS), ratio(bw.ServerCPUMS, o.ServerCPUMS),
			ratio(float64(bw.MaxRSS), float64(o.MaxRSS)), ratio(float64(bw.Bytes), float64(o.Bytes)))
	}
}

func runsOf(s *SeriesReport) int {
	if len(s.Medians) == 0 {
		return 0
	}
	return s.Medians[0].Runs
}

// printScale prints the scaling series: each point's medians, bloomwatch over
// minimal, and growth against the first point of the series.
func printScale(w io.Writer, ss []SeriesReport) {
	fmt.Fprintln(w, "\nscaling (medians)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "blocks\taddrs\twallet txs\tclient\twall ms\tp2p sync ms\tcpu ms\tRSS MiB\tbytes recv\tfp\tbw/min wall\tbw/min bytes\ttruth\t")
	for _, s := range ss {
		bw, _ := findSummary(&s, "bloomwatch")
		mn, _ := findSummary(&s, "minimal")
		for _, m := range s.Medians {
			ok := "ok"
			if !m.AllMatch {
				ok = "MISMATCH"
			}
			rw, rb := "", ""
			if m.Client == "bloomwatch" {
				rw, rb = ratio(bw.WallMS, mn.WallMS), ratio(float64(bw.Bytes), float64(mn.Bytes))
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%.0f\t%.0f\t%.0f\t%.1f\t%d\t%d\t%s\t%s\t%s\t\n", s.Chain.Blocks, s.Chain.Addrs,
				s.TruthTxs, m.Client, m.WallMS, m.SyncMS, m.CPUMS, mib(m.MaxRSS), m.Bytes, m.FP, rw, rb, ok)
		}
	}
	tw.Flush()
}

// printHeadersP2P prints the header-only P2P sync: headers per second of
// wall time (process start to exit) and bloomwatch over the others.
func printHeadersP2P(w io.Writer, s *SeriesReport) {
	fmt.Fprintf(w, "\nheader-only P2P sync of %d headers (birthday past the tip), medians of %d rounds\n", s.Tip, runsOf(s))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\twall ms\theaders/s (wall)\tcpu ms\tbtcd cpu ms\tpeak RSS MiB\tbytes recv\ttruth\t")
	for _, m := range s.Medians {
		ok := "ok"
		if !m.AllMatch {
			ok = "MISMATCH"
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t%d\t%s\t\n", m.Client, m.WallMS, float64(s.Tip)/(m.WallMS/1000),
			m.CPUMS, m.ServerCPUMS, mib(m.MaxRSS), m.Bytes, ok)
	}
	tw.Flush()
	bw, ok := findSummary(s, "bloomwatch")
	if !ok {
		return
	}
	for _, other := range []string{"minimal", "neutrino"} {
		if o, ok := findSummary(s, other); ok {
			fmt.Fprintf(w, "bloomwatch/%-8s wall %s  cpu %s  rss %s  bytes %s\n", other, ratio(bw.WallMS, o.WallMS),
				ratio(bw.CPUMS, o.CPUMS), ratio(float64(bw.MaxRSS), float64(o.MaxRSS)), ratio(float64(bw.Bytes), float64(o.Bytes)))
		}
	}
}
