package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// A crawl is planned on the machine that submits it: the transcripts are
// read there (one filter per session, the first filterload, as the
// crawler keeps it), the filters are cut into groups of at most
// --group-bytes and the universe into ranges, and the plan is written
// under --out, where every worker reads the group its shard names. The
// shards are the product: every group against every range. A shard's
// memory is its group's filters twice (the scan's matchers copy the
// bits) plus its hits; its time is its probes (candidates x filters).

// ErrUsage marks bad input: the command exits 2 with one line.
var ErrUsage = errors.New("usage")

// usagef returns a usage error.
func usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// Both-forms rules (--both-forms).
const (
	bothAuto = "auto"
	bothAll  = "all"
	bothNone = "none"
)

// session is one transcript's filter and what its name tells.
type session struct {
	// Index is the session's position in the crawl (name order).
	Index int    `json:"index"`
	Name  string `json:"name"`
	// Wallet and Kind come from a population transcript's name
	// (experiments.ParseTranscriptName): -1 and "" otherwise.
	Wallet int    `json:"wallet"`
	Kind   string `json:"kind,omitempty"`
	// Both reports the both-forms test (experiments.CrawlTest).
	Both bool `json:"both_forms"`
	// Filter is the first filterload, serialized (bip37.Serialize).
	Filter hexBytes `json:"filter"`
}

// hexBytes is a byte string written as hex in JSON.
type hexBytes []byte

// MarshalJSON implements json.Marshaler.
func (h hexBytes) MarshalJSON() ([]byte, error) { return json.Marshal(hex.EncodeToString(h)) }

// UnmarshalJSON implements json.Unmarshaler.
func (h *hexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	d, err := hex.DecodeString(s)
	*h = d
	return err
}

// readSessions reads every *.jsonl transcript of dir, in name order,
// keeping the first filterload of each.
func readSessions(dir, bothForms string) ([]session, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, usagef("--transcripts %s: %v", dir, err)
	}
	if len(names) == 0 {
		return nil, usagef("--transcripts %s: no *.jsonl transcript", dir)
	}
	slices.Sort(names)
	out := make([]session, 0, len(names))
	for i, path := range names {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--transcripts: %w", err)
		}
		recs, err := transcript.Read(f)
		_ = f.Close()
		if err != nil {
			return nil, usagef("--transcripts %s: %v", path, err)
		}
		filter, err := experiments.CrawlerFilter(recs)
		if err != nil {
			return nil, usagef("--transcripts %s: %v", path, err)
		}
		s := session{Index: i, Name: filepath.Base(path), Wallet: -1, Filter: filter.Serialize()}
		if w, k, _, ok := experiments.ParseTranscriptName(path); ok {
			s.Wallet, s.Kind = w, k.String()
			s.Both = bothForms == bothAuto && k == experiments.KindBitcoinj
		}
		s.Both = s.Both || bothForms == bothAll
		out = append(out, s)
	}
	return out, nil
}

// filters decodes the sessions' filters.
func filters(ss []session) ([]*bip37.Filter, error) {
	out := make([]*bip37.Filter, len(ss))
	for i, s := range ss {
		f, err := bip37.Deserialize(s.Filter)
		if err != nil {
			return nil, fmt.Errorf("session %d (%s): %w", s.Index, s.Name, err)
		}
		out[i] = f
	}
	return out, nil
}

// walletsKnown reports whether every session's wallet is known.
func walletsKnown(ss []session) bool {
	for _, s := range ss {
		if s.Wallet < 0 {
			return false
		}
	}
	return len(ss) > 0
}

// universe is what the crawl tests: an element file, then synthetic
// candidates, as the population experiment scans its chain's candidates
// then its synthetic background.
type universe struct {
	// File is an element file (privacy export-universe, or the
	// population's universe.elements), read by byte ranges; FileSize
	// its size. Empty: none.
	File     string `json:"file,omitempty"`
	FileSize int64  `json:"file_size,omitempty"`
	// Synthetic candidates (scan.Synthetic).
	Seed    uint64 `json:"seed"`
	Count   uint64 `json:"count"`
	PubKeys bool   `json:"pubkeys"`
}

// Sources of a shard's candidates.
const (
	sourceFile      = 0
	sourceSynthetic = 1
)

// shard is one unit of work: one group of filters against one range of
// the universe.
type shard struct {
	ID int
	// Group is the group file (under the plan) and First, Count the
	// sessions it holds.
	Group        string
	First, Count int
	// Source is sourceFile (Lo, Hi are byte offsets: the lines that
	// start in [Lo, Hi)) or sourceSynthetic (candidate indexes).
	Source int
	Lo, Hi uint64
	// CountForms reports the shard that counts its range's candidates
	// (the first group's): every candidate is counted once.
	CountForms bool
}

// planConfig sizes the shards.
type planConfig struct {
	GroupBytes int
	Range      uint64
	RangeBytes int64
}

// groups cuts the sessions into runs of at most maxBytes of filters (a
// filter larger than that is a group of its own): [first, end) each.
func groups(ss []session, maxBytes int) [][2]int {
	var out [][2]int
	first, bytes := 0, 0
	for i, s := range ss {
		if i > first && bytes+len(s.Filter) > maxBytes {
			out = append(out, [2]int{first, i})
			first, bytes = i, 0
		}
		bytes += len(s.Filter)
	}
	if first < len(ss) {
		out = append(out, [2]int{first, len(ss)})
	}
	return out
}

// groupPath is the file of group g under the plan directory.
func groupPath(plan string, g int) string {
	return joinPath(plan, fmt.Sprintf("group-%05d.jsonl", g))
}

// sessionsPath is the plan's list of sessions.
func sessionsPath(plan string) string { return joinPath(plan, "sessions.jsonl") }

// joinPath joins a directory of any Beam file system (a local path, or
// gs://bucket/dir) and a name.
func joinPath(dir, name string) string {
	if strings.Contains(dir, "://") {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return filepath.Join(dir, name)
}

// makeShards writes the plan (the sessions and one file per group) under
// planDir and returns every group x range shard.
func makeShards(ctx context.Context, ss []session, u universe, cfg planConfig, planDir string) ([]shard, error) {
	if err := writeLines(ctx, sessionsPath(planDir), ss); err != nil {
		return nil, err
	}
	gs := groups(ss, cfg.GroupBytes)
	var shards []shard
	for g, r := range gs {
		path := groupPath(planDir, g)
		if err := writeLines(ctx, path, ss[r[0]:r[1]]); err != nil {
			return nil, err
		}
		add := func(source int, lo, hi uint64) {
			shards = append(shards, shard{ID: len(shards), Group: path, First: r[0], Count: r[1] - r[0],
				Source: source, Lo: lo, Hi: hi, CountForms: g == 0})
		}
		if u.File != "" {
			for lo := int64(0); lo < u.FileSize; lo += cfg.RangeBytes {
				add(sourceFile, uint64(lo), uint64(min(u.FileSize, lo+cfg.RangeBytes)))
			}
		}
		for lo := uint64(0); lo < u.Count; lo += cfg.Range {
			add(sourceSynthetic, lo, min(u.Count, lo+cfg.Range))
		}
	}
	return shards, nil
}

// writeLines writes one JSON line per value to path on its Beam file
// system.
func writeLines[T any](ctx context.Context, path string, vals []T) error {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, v := range vals {
		if err := enc.Encode(v); err != nil {
			_ = w.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		_ = w.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readLines reads the JSON lines of path on its Beam file system.
func readLines[T any](ctx context.Context, path string) ([]T, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	var out []T
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var v T
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, v)
	}
}

// fileSize returns the size of path on its Beam file system.
func fileSize(ctx context.Context, path string) (int64, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return 0, err
	}
	defer fs.Close()
	return fs.Size(ctx, path)
}
