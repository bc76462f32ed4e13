package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Progress while the crawl runs. On Prism embedded (and with
// --in-process) the scans run in this process: they add to crawlProgress
// and a ticker prints a line on stderr every --progress-every. On a
// cluster the scans run in the workers: the runner's interface shows the
// counters bloomwatch/probes and bloomwatch/shards, and each worker logs
// a line per shard.

// progressMeter counts the shards and probes done in this process.
type progressMeter struct {
	shards, probes atomic.Uint64
}

// add counts one shard of probes done.
func (m *progressMeter) add(probes uint64) {
	m.shards.Add(1)
	m.probes.Add(probes)
}

// reset starts the count again, for a new crawl.
func (m *progressMeter) reset() {
	m.shards.Store(0)
	m.probes.Store(0)
}

// crawlProgress is this process's meter.
var crawlProgress progressMeter

// reportProgress prints a line to w every interval until ctx ends, then
// returns.
func reportProgress(ctx context.Context, w io.Writer, interval time.Duration, totalShards int, start time.Time) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fmt.Fprintln(w, progressLine(crawlProgress.shards.Load(), crawlProgress.probes.Load(), totalShards, time.Since(start)))
		}
	}
}

// progressLine formats a progress report.
func progressLine(shards, probes uint64, total int, elapsed time.Duration) string {
	rate := "-"
	if s := elapsed.Seconds(); s > 0 && probes > 0 {
		rate = fmt.Sprintf("%.3g probes/s", float64(probes)/s)
	}
	return fmt.Sprintf("crawl: %d of %d shards scanned (%.0f%%), %.4g probes, %s, %s elapsed",
		shards, total, 100*float64(shards)/float64(max(total, 1)), float64(probes), rate, elapsed.Round(time.Second))
}
