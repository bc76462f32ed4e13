package main

import (
	"context"
	"slices"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// runInProcess runs the crawl's shards one after the other in this
// process, without Beam, each on every core, and writes the same files
// the pipeline writes: the baseline the pipeline is measured against.
func runInProcess(ctx context.Context, cfg scanConfig, shards []shard, ss []session, fs []*bip37.Filter, out string) (*linking, error) {
	both := make([]bool, len(ss))
	for i, s := range ss {
		both[i] = s.Both
	}
	sets := make([][]string, len(ss))
	byCand := map[string][]int{}
	var forms formCount
	for _, sh := range shards {
		res, err := scanShard(ctx, cfg, sh, fs[sh.First:sh.First+sh.Count], both[sh.First:sh.First+sh.Count])
		if err != nil {
			return nil, err
		}
		for _, m := range res.Matches {
			sets[m.Filter] = append(sets[m.Filter], m.Cand)
			byCand[m.Cand] = append(byCand[m.Cand], m.Filter)
		}
		if sh.CountForms {
			forms.One += res.Forms.One
			forms.Two += res.Forms.Two
		}
		crawlProgress.add(res.Probes)
	}
	lines := make([]matchSetLine, 0, len(ss))
	sizes := make([]int, len(ss))
	for j, set := range sets {
		sizes[j] = len(set)
		if len(set) > 0 {
			slices.Sort(set)
			lines = append(lines, matchSetLine{Session: j, Matches: set})
		}
	}
	if err := writeLines(ctx, joinPath(out, matchesFile), lines); err != nil {
		return nil, err
	}
	l := finish(ss, fs, sizes, overlapsOf(byCand), forms)
	return l, writeLinking(ctx, out, l)
}
