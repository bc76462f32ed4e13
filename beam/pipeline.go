package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
)

// The pipeline:
//
//	shards (group x range) --Reshuffle--> scan --> (session, candidate) matches
//	matches --GroupByKey session--> matches.jsonl, and each match-set size
//	matches --GroupByKey candidate--> every pair of sessions sharing it --Sum--> overlaps
//	overlaps, sizes, candidate counts (side inputs) --> finish: linking.jsonl, overlaps.jsonl, summary.json
//
// The scan is the expensive step and the one a cluster spreads: shards
// are independent. The two shuffles carry only matches (a false-positive
// rate times the probes). The finish runs on one worker.

func init() {
	beam.RegisterType(reflect.TypeOf((*shard)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formCount)(nil)).Elem())
	register.DoFn4x1[context.Context, shard, func(int, string), func(formCount), error](&scanFn{})
	register.Emitter2[int, string]()
	register.Emitter1[formCount]()
	register.DoFn4x1[int, func(*string) bool, func(string), func(int, int), error](&matchLinesFn{})
	register.Iter1[string]()
	register.Emitter1[string]()
	register.Emitter2[int, int]()
	register.DoFn3x0[string, func(*int) bool, func(int64, int)](&pairsFn{})
	register.Iter1[int]()
	register.Emitter2[int64, int]()
	register.DoFn5x1[context.Context, []byte, func(*int64, *int) bool, func(*int, *int) bool, func(*formCount) bool, error](&finishFn{})
	register.Iter2[int64, int]()
	register.Iter2[int, int]()
	register.Iter1[formCount]()
}

// Counters a runner shows while the crawl runs (Flink's and Dataflow's
// web interfaces; Prism's at the end).
var (
	probesCounter = beam.NewCounter(counterNamespace, "probes")
	shardsCounter = beam.NewCounter(counterNamespace, "shards")
)

// counterNamespace is the namespace of the crawl's counters.
const counterNamespace = "bloomwatch"

// buildPipeline returns the crawl of shards over n sessions, its plan
// under planDir and its outputs under outDir.
func buildPipeline(cfg scanConfig, shards []shard, n int, planDir, outDir string) *beam.Pipeline {
	p, s := beam.NewPipelineWithRoot()
	work := beam.Reshuffle(s.Scope("shards"), beam.CreateList(s.Scope("shards"), shards))
	matches, forms := beam.ParDo2(s.Scope("scan"), &scanFn{Cfg: cfg}, work)
	lines, sizes := beam.ParDo2(s.Scope("match sets"), &matchLinesFn{}, beam.GroupByKey(s.Scope("match sets"), matches))
	textio.Write(s.Scope("match sets"), joinPath(outDir, matchesFile), lines)
	byCand := beam.GroupByKey(s.Scope("overlaps"), beam.SwapKV(s.Scope("overlaps"), matches))
	overlaps := stats.SumPerKey(s.Scope("overlaps"), beam.ParDo(s.Scope("overlaps"), &pairsFn{N: n}, byCand))
	beam.ParDo0(s.Scope("finish"), &finishFn{Plan: planDir, Out: outDir}, beam.Impulse(s.Scope("finish")),
		beam.SideInput{Input: overlaps}, beam.SideInput{Input: sizes}, beam.SideInput{Input: forms})
	return p
}

// Output files under --out.
const (
	matchesFile  = "matches.jsonl"
	linkingFile  = "linking.jsonl"
	overlapsFile = "overlaps.jsonl"
	summaryFile  = "summary.json"
	planSubdir   = "plan"
)

// scanFn scans one shard. It keeps the last group it read: a worker
// given several shards of one group reads its filters once.
type scanFn struct {
	Cfg scanConfig

	group   string
	filters []*bip37.Filter
	both    []bool
}

// ProcessElement scans sh and emits each (session, candidate) match and,
// for the shards that count them, the range's candidates by forms.
func (fn *scanFn) ProcessElement(ctx context.Context, sh shard, emit func(int, string), emitForms func(formCount)) error {
	if fn.group != sh.Group {
		ss, err := readLines[session](ctx, sh.Group)
		if err != nil {
			return err
		}
		if len(ss) != sh.Count {
			return fmt.Errorf("%s: %d sessions, the plan says %d", sh.Group, len(ss), sh.Count)
		}
		fs, err := filters(ss)
		if err != nil {
			return err
		}
		fn.group, fn.filters, fn.both = sh.Group, fs, make([]bool, len(ss))
		for i, s := range ss {
			fn.both[i] = s.Both
		}
	}
	res, err := scanShard(ctx, fn.Cfg, sh, fn.filters, fn.both)
	if err != nil {
		return err
	}
	for _, m := range res.Matches {
		emit(m.Filter, m.Cand)
	}
	if sh.CountForms {
		emitForms(res.Forms)
	}
	probesCounter.Inc(ctx, int64(res.Probes))
	shardsCounter.Inc(ctx, 1)
	crawlProgress.add(res.Probes)
	log.Infof(ctx, "bloomwatch: shard %d done: %d candidates x %d filters, %d matches", sh.ID, res.Scanned, len(fn.filters), len(res.Matches))
	return nil
}

// matchSetLine is one session's line of matches.jsonl.
type matchSetLine struct {
	Session int      `json:"session"`
	Matches []string `json:"matches"`
}

// matchLinesFn writes one session's match set, sorted, and its size.
type matchLinesFn struct{}

// ProcessElement implements the DoFn.
func (matchLinesFn) ProcessElement(session int, cands func(*string) bool, emit func(string), emitSize func(int, int)) error {
	var set []string
	var c string
	for cands(&c) {
		set = append(set, c)
	}
	slices.Sort(set)
	b, err := json.Marshal(matchSetLine{Session: session, Matches: set})
	if err != nil {
		return err
	}
	emit(string(b))
	emitSize(session, len(set))
	return nil
}

// pairsFn emits every pair of the sessions whose match sets hold one
// candidate, as i*N+j for i < j.
type pairsFn struct {
	N int
}

// ProcessElement implements the DoFn.
func (fn *pairsFn) ProcessElement(_ string, sessions func(*int) bool, emit func(int64, int)) {
	var js []int
	var j int
	for sessions(&j) {
		js = append(js, j)
	}
	slices.Sort(js)
	for a := range js {
		for b := a + 1; b < len(js); b++ {
			emit(int64(js[a])*int64(fn.N)+int64(js[b]), 1)
		}
	}
}

// finishFn links the sessions and writes linking.jsonl, overlaps.jsonl
// and summary.json.
type finishFn struct {
	Plan, Out string
}

// ProcessElement implements the DoFn.
func (fn *finishFn) ProcessElement(ctx context.Context, _ []byte, overlaps func(*int64, *int) bool, sizes func(*int, *int) bool, forms func(*formCount) bool) error {
	ss, err := readLines[session](ctx, sessionsPath(fn.Plan))
	if err != nil {
		return err
	}
	fs, err := filters(ss)
	if err != nil {
		return err
	}
	n := len(ss)
	size := make([]int, n)
	var j, c int
	for sizes(&j, &c) {
		size[j] = c
	}
	var os []experiments.Overlap
	var key int64
	for overlaps(&key, &c) {
		os = append(os, experiments.Overlap{I: int(key / int64(n)), J: int(key % int64(n)), Common: c})
	}
	var total, fc formCount
	for forms(&fc) {
		total.One += fc.One
		total.Two += fc.Two
	}
	return writeLinking(ctx, fn.Out, finish(ss, fs, size, os, total))
}

// writeLinking writes linking.jsonl, overlaps.jsonl and summary.json.
func writeLinking(ctx context.Context, out string, l *linking) error {
	if err := writeLines(ctx, joinPath(out, linkingFile), l.Sessions); err != nil {
		return err
	}
	if err := writeLines(ctx, joinPath(out, overlapsFile), l.Overlaps); err != nil {
		return err
	}
	return writeLines(ctx, joinPath(out, summaryFile), []summary{l.Summary})
}
