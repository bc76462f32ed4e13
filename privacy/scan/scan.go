package scan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
)

// Limits of a scan.
const (
	// DefaultMaxHits bounds the candidates a scan keeps (those matching a
	// filter, and the wallet's own): a filter that matches a large share of
	// a large universe cannot be analyzed candidate by candidate, and
	// keeping every match would exhaust memory.
	DefaultMaxHits = 10_000_000
	// streamBatch is the number of candidates read from a non-indexed
	// universe before the workers scan them.
	streamBatch = 1 << 16
)

// Config says what a scan tests every candidate against.
type Config struct {
	// Filters are tested read-only and concurrently; nobody may mutate
	// them during the scan. At most one filter should match everything
	// (a zero-length filter or one without hash functions): such a filter
	// makes every candidate a hit.
	Filters []*bip37.Filter
	// Truth, when set, is the wallet's elements: a candidate any of whose
	// forms is in it is the wallet's, and is kept even if nothing matches.
	Truth *element.Set
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// MaxHits bounds the hits kept; 0 means DefaultMaxHits.
	MaxHits int
}

// Hit is a candidate that matched at least one filter, or a wallet
// candidate.
type Hit struct {
	Candidate element.Candidate
	// Truth reports that the candidate is the wallet's.
	Truth bool
	// Any has bit j set when some form of the candidate matches
	// Filters[j]; All when every form does (the both-forms test).
	Any, All Bitset
}

// Result is what a scan measured.
type Result struct {
	// Scanned counts the candidates tested.
	Scanned uint64
	// FormCounts[f] counts the candidates with f forms (f capped at
	// MaxFormsPerLine).
	FormCounts []uint64
	// TruthCounts[f] counts the wallet's candidates with f forms.
	TruthCounts []uint64
	// SeenCounts[h][f] and TruthSeenCounts[h][f] count, among the above,
	// the candidates first seen at height h > 0 (the rest were first seen
	// at 0 or at an unknown height).
	SeenCounts, TruthSeenCounts map[int32][]uint64
	// AnyCounts[j] and AllCounts[j] count the candidates matching
	// Filters[j] through any form and through every form.
	AnyCounts, AllCounts []uint64
	// Hits holds every hit, sorted by primary form.
	Hits []Hit
}

// Truth returns the number of wallet candidates seen.
func (r *Result) Truth() uint64 {
	var n uint64
	for _, c := range r.TruthCounts {
		n += c
	}
	return n
}

// scanWorker is one worker's private state, merged after the join. The
// padding keeps two workers' structs off a shared cache line: cand's
// slice header is written for every candidate.
type scanWorker struct {
	_                    [cacheLine]byte
	cfg                  *Config
	hits                 []Hit
	scanned              uint64
	formCounts           []uint64
	truthCounts          []uint64
	anyCounts, allCounts []uint64
	cand                 element.Candidate
	synth                *synthBatch      // the synthetic fast path's buffers
	matchers             []*bip37.Matcher // the fast path's Filters, shared
	seen, truthSeen      map[int32][]uint64
	totalHits            *atomic.Int64
	maxHits              int64
	_                    [cacheLine]byte
}

// Run streams every candidate of u through every filter of cfg and
// returns the counts and the hits. A universe made by Stream or
// StreamRange is split across the workers by index ranges (from its
// current position, which it then consumes); a Synthetic universe, alone
// or as a part of a Concat, takes a fast path that generates and tests its
// candidates in batches, with the same results. Any other universe is read
// in batches by the calling goroutine and each batch scanned in parallel. Run returns
// ErrTooManyHits when more than MaxHits candidates would be kept, the
// universe's error if its stream fails, and ctx's error when cancelled.
func Run(ctx context.Context, u element.Universe, cfg Config) (*Result, error) {
	if cfg.MaxHits <= 0 {
		cfg.MaxHits = DefaultMaxHits
	}
	workers := workerCount(cfg.Workers)
	var total atomic.Int64
	ws := make([]*scanWorker, workers)
	for i := range ws {
		ws[i] = newScanWorker(&cfg, &total)
	}
	var err error
	if ix, lo, hi, ok := element.Indexed(u); ok {
		err = scanIndexed(ctx, ix, lo, hi, ws)
	} else {
		err = scanStream(ctx, u, ws)
	}
	if err != nil {
		return nil, err
	}
	return mergeWorkers(&cfg, ws), nil
}

// Merge adds b's counts and hits to r, keeps the hits ordered by key, and
// returns r: the result of scanning the two universes as one.
func (r *Result) Merge(b *Result) *Result {
	r.Scanned += b.Scanned
	AddCounts(r.FormCounts, b.FormCounts)
	AddCounts(r.TruthCounts, b.TruthCounts)
	AddCounts(r.AnyCounts, b.AnyCounts)
	AddCounts(r.AllCounts, b.AllCounts)
	mergeCountMaps(r.SeenCounts, b.SeenCounts)
	mergeCountMaps(r.TruthSeenCounts, b.TruthSeenCounts)
	r.Hits = append(r.Hits, b.Hits...)
	slices.SortFunc(r.Hits, func(x, y Hit) int {
		return strings.Compare(x.Candidate.Key(), y.Candidate.Key())
	})
	return r
}

// cacheLine is the allocation size of a worker's candidate buffers: a
// multiple of the cache line, so no two workers' buffers share one.
const cacheLine = 128

// newScanWorker returns a worker with zeroed counters.
func newScanWorker(cfg *Config, total *atomic.Int64) *scanWorker {
	nf := len(cfg.Filters)
	forms := make([][]byte, element.MaxFormsPerLine)
	for i := range forms {
		forms[i] = make([]byte, 0, cacheLine)
	}
	return &scanWorker{
		cand:        element.Candidate{Forms: forms[:0]},
		cfg:         cfg,
		formCounts:  make([]uint64, element.MaxFormsPerLine+1),
		truthCounts: make([]uint64, element.MaxFormsPerLine+1),
		anyCounts:   make([]uint64, nf),
		allCounts:   make([]uint64, nf),
		seen:        map[int32][]uint64{},
		truthSeen:   map[int32][]uint64{},
		totalHits:   total,
		maxHits:     int64(cfg.MaxHits),
	}
}

// scanIndexed splits candidates first..end-1 of ix by index ranges.
//
// Every write a worker makes per candidate goes to memory no other worker
// touches on the same cache line: the counters are chunk-local variables
// added to the worker's totals once per chunk, and the candidate buffers
// are cache-line sized allocations. Sharing a line between the two cores
// (false sharing) halves the scan rate.
func scanIndexed(ctx context.Context, ix element.IndexedUniverse, first, end uint64, ws []*scanWorker) error {
	if end <= first {
		return ctx.Err()
	}
	switch u := ix.(type) {
	case Synthetic:
		return scanSynthetic(ctx, u, first, end, ws)
	case *element.Concat:
		return scanConcat(ctx, u, first, end, ws)
	}
	return forkJoin(ctx, len(ws), end-first, defaultChunk, func(w int, lo, hi uint64) error {
		sw := ws[w]
		var forms [element.MaxFormsPerLine + 1]uint64
		for i := first + lo; i < first+hi; i++ {
			ix.Fill(i, &sw.cand)
			nForms := min(len(sw.cand.Forms), element.MaxFormsPerLine)
			forms[nForms]++
			if h := sw.cand.FirstSeen; h > 0 {
				countAt(sw.seen, h, nForms)
			}
			if err := sw.test(&sw.cand); err != nil {
				return err
			}
		}
		sw.scanned += hi - lo
		AddCounts(sw.formCounts, forms[:])
		return nil
	})
}

// scanConcat scans candidates first..end-1 of c part by part, so that each
// part takes its own path (a synthetic part the fast one).
func scanConcat(ctx context.Context, c *element.Concat, first, end uint64, ws []*scanWorker) error {
	var start uint64
	for _, p := range c.Parts() {
		n := p.Len()
		lo, hi := max(first, start), min(end, start+n)
		if lo < hi {
			if err := scanIndexed(ctx, p, lo-start, hi-start, ws); err != nil {
				return err
			}
		}
		start += n
	}
	return ctx.Err()
}

// scanStream reads u in batches and scans each batch in parallel.
func scanStream(ctx context.Context, u element.Universe, ws []*scanWorker) error {
	batch := make(element.SliceUniverse, 0, streamBatch)
	var c element.Candidate
	for {
		batch = batch[:0]
		for len(batch) < streamBatch && u.Next(&c) {
			n := len(batch)
			batch = batch[:n+1]
			batch[n] = element.CloneInto(batch[n], c)
		}
		if len(batch) > 0 {
			if err := scanIndexed(ctx, batch, 0, batch.Len(), ws); err != nil {
				return err
			}
		}
		if len(batch) < streamBatch {
			break
		}
	}
	if err := u.Err(); err != nil {
		return fmt.Errorf("universe: %w", err)
	}
	return ctx.Err()
}

// test runs one candidate through every filter. The caller counts it.
func (sw *scanWorker) test(c *element.Candidate) error {
	nForms := min(len(c.Forms), element.MaxFormsPerLine)
	truth := sw.cfg.Truth.ContainsAny(*c)
	if truth {
		sw.truthCounts[nForms]++
		if c.FirstSeen > 0 {
			countAt(sw.truthSeen, c.FirstSeen, nForms)
		}
	}
	var h *Hit
	for j, f := range sw.cfg.Filters {
		matchedAny, matchedAll := false, nForms > 0
		for _, form := range c.Forms {
			if f.Matches(form) {
				matchedAny = true
			} else {
				matchedAll = false
				if matchedAny {
					break
				}
			}
		}
		if !matchedAny {
			continue
		}
		if h == nil {
			h = sw.newHit(c, truth)
		}
		sw.anyCounts[j]++
		h.Any.Set(j)
		if matchedAll {
			sw.allCounts[j]++
			h.All.Set(j)
		}
	}
	return sw.keep(h, c, truth)
}

// keep records a wallet candidate that matched nothing as a hit too and
// enforces the hit limit.
func (sw *scanWorker) keep(h *Hit, c *element.Candidate, truth bool) error {
	if h == nil && truth {
		h = sw.newHit(c, truth)
	}
	if h != nil && sw.totalHits.Add(1) > sw.maxHits {
		return fmt.Errorf("%w: more than %d", ErrTooManyHits, sw.maxHits)
	}
	return nil
}

// newHit appends a hit for c and returns it.
func (sw *scanWorker) newHit(c *element.Candidate, truth bool) *Hit {
	n := len(sw.cfg.Filters)
	sw.hits = append(sw.hits, Hit{Candidate: c.Clone(), Truth: truth, Any: NewBitset(n), All: NewBitset(n)})
	return &sw.hits[len(sw.hits)-1]
}

// mergeWorkers sums the workers' counters and sorts their hits.
func mergeWorkers(cfg *Config, ws []*scanWorker) *Result {
	nf := len(cfg.Filters)
	r := &Result{
		FormCounts:      make([]uint64, element.MaxFormsPerLine+1),
		TruthCounts:     make([]uint64, element.MaxFormsPerLine+1),
		AnyCounts:       make([]uint64, nf),
		AllCounts:       make([]uint64, nf),
		SeenCounts:      map[int32][]uint64{},
		TruthSeenCounts: map[int32][]uint64{},
	}
	for _, w := range ws {
		mergeCountMaps(r.SeenCounts, w.seen)
		mergeCountMaps(r.TruthSeenCounts, w.truthSeen)
		r.Scanned += w.scanned
		AddCounts(r.FormCounts, w.formCounts)
		AddCounts(r.TruthCounts, w.truthCounts)
		AddCounts(r.AnyCounts, w.anyCounts)
		AddCounts(r.AllCounts, w.allCounts)
		r.Hits = append(r.Hits, w.hits...)
	}
	slices.SortFunc(r.Hits, func(a, b Hit) int { return strings.Compare(a.Candidate.Key(), b.Candidate.Key()) })
	return r
}

// countAt counts one candidate of nForms forms first seen at height h.
func countAt(m map[int32][]uint64, h int32, nForms int) {
	c := m[h]
	if c == nil {
		c = make([]uint64, element.MaxFormsPerLine+1)
		m[h] = c
	}
	c[nForms]++
}

// mergeCountMaps adds src's histograms to dst's.
func mergeCountMaps(dst, src map[int32][]uint64) {
	for h, c := range src {
		if dst[h] == nil {
			dst[h] = make([]uint64, element.MaxFormsPerLine+1)
		}
		AddCounts(dst[h], c)
	}
}

// addCounts adds src to dst element-wise.
func AddCounts(dst, src []uint64) {
	for i, v := range src {
		dst[i] += v
	}
}
