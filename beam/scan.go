package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
)

// A shard's scan is scan.Run, the kernel `privacy scan`, `privacy
// analyze` and the population experiment's crawler run: a synthetic range
// through bip37's batch matcher (AVX2 where the CPU has it), element-file
// lines through bip37.Filter.Matches, each hit with its any-form and
// every-form bits; experiments.CrawlTest then applies the crawler's test
// per filter. Nothing of the kernel is copied here.

// ErrTooManyForms is a universe candidate of more than two forms: the
// crawler's test and rates cover a hash and a public key (export the
// universe without --outpoints).
var ErrTooManyForms = errors.New("candidate of more than 2 forms")

// match is one candidate in one filter's match set.
type match struct {
	// Filter is the session's index in the crawl.
	Filter int
	// Cand is the candidate: its forms in hex separated by spaces, as an
	// element file line holds them.
	Cand string
}

// formCount counts the candidates of a range by their number of forms.
type formCount struct {
	One, Two uint64
}

// shardResult is what one shard's scan found.
type shardResult struct {
	Matches []match
	Forms   formCount
	// Scanned counts the range's candidates, Probes candidates x filters.
	Scanned, Probes uint64
}

// scanConfig is what every shard's scan shares.
type scanConfig struct {
	Universe universe
	// Workers is the scan's goroutines per shard (0: GOMAXPROCS).
	Workers int
	// MaxHits bounds the hits one shard keeps (0: privacy's default).
	MaxHits int
}

// candKey returns a candidate as match.Cand writes it.
func candKey(c element.Candidate) string {
	var b strings.Builder
	for i, f := range c.Forms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(hex.EncodeToString(f))
	}
	return b.String()
}

// scanShard scans shard sh's range through its group's filters fs (whose
// both-forms tests are both) and returns the matches the crawler's test
// keeps.
func scanShard(ctx context.Context, cfg scanConfig, sh shard, fs []*bip37.Filter, both []bool) (*shardResult, error) {
	var (
		u     element.Universe
		fileU *element.FileUniverse
	)
	switch sh.Source {
	case sourceSynthetic:
		s := scan.Synthetic{Seed: cfg.Universe.Seed, Count: cfg.Universe.Count, PubKeys: cfg.Universe.PubKeys}
		u = element.StreamRange(s, sh.Lo, sh.Hi)
	case sourceFile:
		r, err := openLineRange(ctx, cfg.Universe.File, int64(sh.Lo), int64(sh.Hi))
		if err != nil {
			return nil, err
		}
		defer r.Close()
		fileU = element.NewFileUniverse(r)
		u = fileU
	default:
		return nil, fmt.Errorf("shard %d: unknown source %d", sh.ID, sh.Source)
	}
	res, err := scan.Run(ctx, u, scan.Config{Filters: fs, Workers: cfg.Workers, MaxHits: cfg.MaxHits})
	if err != nil {
		where := fmt.Sprintf("candidates %d to %d", sh.Lo, sh.Hi)
		if fileU != nil {
			where = fmt.Sprintf("%s, the lines starting at bytes %d to %d", cfg.Universe.File, sh.Lo, sh.Hi)
		}
		return nil, fmt.Errorf("shard %d (%s): %w", sh.ID, where, err)
	}
	out := &shardResult{Scanned: res.Scanned, Probes: res.Scanned * uint64(len(fs))}
	for f, n := range res.FormCounts {
		switch {
		case f == 1:
			out.Forms.One = n
		case f == 2:
			out.Forms.Two = n
		case f > 2 && n > 0:
			return nil, fmt.Errorf("shard %d: %d candidates of %d forms: %w", sh.ID, n, f, ErrTooManyForms)
		}
	}
	for i := range res.Hits {
		h := &res.Hits[i]
		var key string
		for j, f := range fs {
			if experiments.CrawlTest(f, both[j], h, j) {
				if key == "" {
					key = candKey(h.Candidate)
				}
				out.Matches = append(out.Matches, match{Filter: sh.First + j, Cand: key})
			}
		}
	}
	return out, nil
}

// openLineRange opens the element file path (on its Beam file system)
// and returns a reader of the lines that start at a byte offset in
// [lo, hi): every line is read by exactly one of a file's ranges.
func openLineRange(ctx context.Context, path string, lo, hi int64) (io.ReadCloser, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("universe %s: %w", path, err)
	}
	f, err := fs.OpenRead(ctx, path)
	if err != nil {
		_ = fs.Close()
		return nil, fmt.Errorf("universe %s: %w", path, err)
	}
	r := &lineRange{rc: f, fs: fs, pos: 0, hi: hi}
	// Position at lo-1: the line starting at lo is read when the byte
	// before it ends a line.
	skip := max(lo-1, 0)
	if s, ok := f.(io.Seeker); ok {
		if _, err := s.Seek(skip, io.SeekStart); err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("universe %s: %w", path, err)
		}
	}
	// A buffer of about the range, within [4 KiB, 1 MiB].
	r.br = bufio.NewReaderSize(f, int(min(max(hi-lo, 4<<10), 1<<20)))
	if _, ok := f.(io.Seeker); !ok {
		if _, err := r.br.Discard(int(skip)); err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("universe %s: byte %d: %w", path, skip, err)
		}
	}
	r.pos = skip
	if lo > 0 {
		// The rest of the line that holds byte lo-1 belongs to the range
		// before.
		line, err := r.br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			r.pos += int64(len(line))
			line, err = r.br.ReadSlice('\n')
		}
		r.pos += int64(len(line))
		if err != nil && !errors.Is(err, io.EOF) {
			_ = r.Close()
			return nil, fmt.Errorf("universe %s: %w", path, err)
		}
	}
	return r, nil
}

// lineRange reads whole lines while they start before hi.
type lineRange struct {
	rc      io.ReadCloser
	fs      filesystem.Interface
	br      *bufio.Reader
	pos, hi int64
	// inLine reports a line being passed on: it is read to its end
	// whatever hi.
	inLine bool
}

// Read implements io.Reader.
func (r *lineRange) Read(p []byte) (int, error) {
	if !r.inLine && r.pos >= r.hi {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	n := 0
	for n < len(p) {
		if !r.inLine && r.pos >= r.hi {
			break
		}
		c, err := r.br.ReadByte()
		if errors.Is(err, io.EOF) {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		if err != nil {
			return n, err
		}
		p[n] = c
		n++
		r.pos++
		r.inLine = c != '\n'
	}
	return n, nil
}

// Close implements io.Closer.
func (r *lineRange) Close() error {
	err := r.rc.Close()
	if cerr := r.fs.Close(); err == nil {
		err = cerr
	}
	return err
}
