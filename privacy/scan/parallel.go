package scan

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// This file holds the package's only concurrency. The project keeps
// goroutines in spv/, but scanning a mainnet-sized universe (billions of
// candidates) against a filter is CPU-bound work that must use every core
// to finish in reasonable time. forkJoin is therefore a bounded fork-join
// inside one function call: it starts a fixed number of workers, shares no
// channels, and returns only after every worker has returned, so no
// goroutine outlives the call that started it. Workers check the context
// between chunks, so cancellation stops a scan within one chunk.

// defaultChunk is the number of candidates a worker claims at a time:
// large enough that claiming (one atomic add) is free, small enough that
// workers finish together and cancellation is prompt.
const defaultChunk = 1 << 16

// workerCount returns n when positive, else the number of usable CPUs.
func workerCount(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// forkJoin runs fn over [0, n) in chunks of at most chunk indexes on
// workers goroutines (fewer when there are fewer chunks) and returns when
// all of them have returned. fn(w, lo, hi) handles indexes lo..hi-1 as
// worker w; each worker's calls are sequential, so per-worker state
// indexed by w needs no locking. The first error fn returns stops the
// other workers at their next chunk and is returned; otherwise ctx's error
// is returned when ctx ended before the work did.
func forkJoin(ctx context.Context, workers int, n, chunk uint64, fn func(w int, lo, hi uint64) error) error {
	if n == 0 {
		return ctx.Err()
	}
	if chunk == 0 {
		chunk = defaultChunk
	}
	chunks := (n + chunk - 1) / chunk
	workers = workerCount(workers)
	if uint64(workers) > chunks {
		workers = int(chunks)
	}
	var (
		next     atomic.Uint64
		stop     atomic.Bool
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		stop.Store(true)
	}
	for w := range workers {
		wg.Go(func() {
			for !stop.Load() {
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				lo := next.Add(chunk) - chunk
				if lo >= n {
					return
				}
				if err := fn(w, lo, min(lo+chunk, n)); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
