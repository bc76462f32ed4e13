package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// cpuPart is one component of a client's CPU time: the samples with a
// frame whose function name matches one of its patterns, and no frame of
// an earlier part's.
type cpuPart struct {
	name     string
	patterns []*regexp.Regexp
}

// otherPart names the samples no part claims: the runtime's scheduler
// and syscalls outside the parts' code, and code no pattern names.
const otherPart = "other (runtime, scheduler, syscalls)"

// cpuParts are the components, in the order a sample is claimed. The
// garbage collector's workers come first (their stacks name no client
// code); persisting comes before the wallet, so that the wallet's
// storage calls count as persisting; key derivation before the wallet
// for the same reason. A pattern matches a function's full name.
var cpuParts = []cpuPart{
	{"GC and scavenging", pats(`^runtime\.gcBgMarkWorker$`, `^runtime\.bgsweep$`, `^runtime\.bgscavenge$`, `^runtime\.gcAssistAlloc$`, `^runtime\.markroot$`)},
	{"persisting (bbolt, walletdb, wtxmgr, waddrmgr)", pats(`^go\.etcd\.io/bbolt\.`, `^github\.com/btcsuite/btcwallet/`)},
	{"key derivation (secp256k1, HMAC-SHA512)", pats(`^github\.com/decred/dcrd/dcrec/secp256k1/`, `^github\.com/btcsuite/btcd/btcec/`, `^github\.com/btcsuite/btcd/btcutil/hdkeychain\.`, `childDeriver`)},
	{"wallet logic (judging, caches, records)", pats(`^github\.com/bloomwatch/bloomwatch/wallet`)},
	{"privacy meter", pats(`^github\.com/bloomwatch/bloomwatch/privacy`)},
	{"filters and merkle proofs (bip37, btcutil/bloom)", pats(`^github\.com/bloomwatch/bloomwatch/bip37\.`, `^github\.com/btcsuite/btcd/btcutil/bloom\.`)},
	{"reading and decoding messages", pats(`^github\.com/btcsuite/btcd/peer\.\(\*Peer\)\.inHandler$`, `^github\.com/btcsuite/btcd/peer\.\(\*Peer\)\.readMessage$`, `^github\.com/btcsuite/btcd/wire\.`)},
	{"node logic (spv, the minimal loop)", pats(`^github\.com/bloomwatch/bloomwatch/spv`, `^main\.runMinimal`, `^main\.\(\*minimal`)},
	{"session, node API, summary, JSON", pats(`^github\.com/bloomwatch/bloomwatch/(session|nodeapi|transcript)`, `^encoding/json\.`, `^main\.`)},
}

// pats compiles patterns (a programming error panics at init).
func pats(ps ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(ps))
	for i, p := range ps {
		out[i] = regexp.MustCompile(p)
	}
	return out
}

// partOf returns the part a sample with these function names (leaf first)
// belongs to.
func partOf(funcs []string) string {
	for _, p := range cpuParts {
		for _, f := range funcs {
			for _, re := range p.patterns {
				if re.MatchString(f) {
					return p.name
				}
			}
		}
	}
	return otherPart
}

// partNames returns every part's name in order, otherPart last.
func partNames() []string {
	names := make([]string, 0, len(cpuParts)+1)
	for _, p := range cpuParts {
		names = append(names, p.name)
	}
	return append(names, otherPart)
}

// splitProfile returns a CPU profile's time by part, in milliseconds.
func splitProfile(r io.Reader) (map[string]float64, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("parse profile: %w", err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, errors.New("not a CPU profile: no cpu/nanoseconds sample type")
	}
	out := make(map[string]float64)
	var funcs []string
	for _, s := range p.Sample {
		funcs = funcs[:0]
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil {
					funcs = append(funcs, ln.Function.Name)
				}
			}
		}
		out[partOf(funcs)] += float64(s.Value[idx]) / 1e6
	}
	return out, nil
}

// cpuSplit is the mean time by part of one client's profiles.
type cpuSplit struct {
	client string
	runs   int
	ms     map[string]float64
}

// splitFiles averages the split of each group of profiles; a group is
// the files whose names differ only in a trailing .N before .pprof
// (list.1.pprof, list.2.pprof), named by that common stem.
func splitFiles(paths []string) ([]cpuSplit, error) {
	run := regexp.MustCompile(`\.\d+\.pprof$`)
	byStem := map[string]*cpuSplit{}
	var order []string
	for _, path := range paths {
		stem := run.ReplaceAllString(filepath.Base(path), "")
		stem = strings.TrimSuffix(stem, ".pprof")
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		ms, err := splitProfile(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		s, ok := byStem[stem]
		if !ok {
			s = &cpuSplit{client: stem, ms: map[string]float64{}}
			byStem[stem] = s
			order = append(order, stem)
		}
		s.runs++
		for k, v := range ms {
			s.ms[k] += v
		}
	}
	out := make([]cpuSplit, 0, len(order))
	for _, stem := range order {
		s := byStem[stem]
		for k := range s.ms {
			s.ms[k] /= float64(s.runs)
		}
		out = append(out, *s)
	}
	return out, nil
}

// printCPUSplit prints the splits side by side, ms of CPU per run by
// part, and, when base names one of them, each other client's difference
// from it by part with that part's share of the whole difference.
func printCPUSplit(w io.Writer, splits []cpuSplit, base string) {
	if len(splits) == 0 {
		return
	}
	var b *cpuSplit
	for i := range splits {
		if splits[i].client == base {
			b = &splits[i]
		}
	}
	fmt.Fprintf(w, "%-50s", "CPU ms per run (sync --cpuprofile samples)")
	for _, s := range splits {
		fmt.Fprintf(w, " %14s", fmt.Sprintf("%s x%d", s.client, s.runs))
	}
	if b != nil {
		for _, s := range splits {
			if s.client != b.client {
				fmt.Fprintf(w, " %22s", s.client+" - "+b.client)
			}
		}
	}
	fmt.Fprintln(w)
	total := func(s *cpuSplit) float64 {
		var t float64
		for _, v := range s.ms {
			t += v
		}
		return t
	}
	row := func(name string, val func(s *cpuSplit) float64) {
		fmt.Fprintf(w, "%-50s", name)
		for i := range splits {
			fmt.Fprintf(w, " %14.0f", val(&splits[i]))
		}
		if b != nil {
			for i := range splits {
				s := &splits[i]
				if s.client == b.client {
					continue
				}
				d, all := val(s)-val(b), total(s)-total(b)
				share := ""
				if all != 0 {
					share = fmt.Sprintf(" (%3.0f%%)", 100*d/all)
				}
				fmt.Fprintf(w, " %22s", fmt.Sprintf("%+.0f%s", d, share))
			}
		}
		fmt.Fprintln(w)
	}
	for _, name := range partNames() {
		row(name, func(s *cpuSplit) float64 { return s.ms[name] })
	}
	row("all samples", total)
}

// runCPUSplit is the cpusplit subcommand: bench cpusplit [--base NAME]
// PROFILE... prints the split of CPU profiles (bloomwatch's sync
// --cpuprofile, the minimal loop's job) by part.
func runCPUSplit(args []string) error {
	fs := flag.NewFlagSet("cpusplit", flag.ContinueOnError)
	base := fs.String("base", "", "the group the others are compared with (a file stem: minimal for minimal.1.pprof)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("cpusplit flags: %w", err)
	}
	if fs.NArg() == 0 {
		return errors.New("usage: bench cpusplit [--base NAME] PROFILE...")
	}
	paths := append([]string(nil), fs.Args()...)
	sort.Strings(paths)
	splits, err := splitFiles(paths)
	if err != nil {
		return err
	}
	trimCommonPrefix(splits)
	printCPUSplit(os.Stdout, splits, *base)
	return nil
}

// trimCommonPrefix drops the part of the groups' names they all share up
// to a '-' (the chain's stem of --cpu-profiles files,
// b2000-t10-a20-s1-minimal), so that they read, and --base matches, as
// client names.
func trimCommonPrefix(splits []cpuSplit) {
	if len(splits) < 2 {
		return
	}
	prefix := splits[0].client
	for _, s := range splits[1:] {
		for !strings.HasPrefix(s.client, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	cut := strings.LastIndexByte(prefix, '-') + 1
	for i := range splits {
		splits[i].client = splits[i].client[cut:]
	}
}
