package scan

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/stretchr/testify/require"
)

// Benchmarks of the single-filter scan: synthetic 20-byte candidates
// through a bitcoinj-sized filter (642 elements at p = 0.0005, 542
// inserted), with the scan (the synthetic fast path: batch generation and
// bip37.Matcher), the per-candidate path it replaced, this package's
// per-candidate matcher (bip37.Filter.Matches) and btcutil/bloom's Matches
// over the same candidates, in the same run:
//
//	go test -run '^$' -bench . -benchtime 20000000x ./privacy
//
// Each reports cand/s/core, candidates tested per second per core.

// The benchmark filter: bitcoinj's sizing of a 271-key wallet (the
// bitcoinj-sizing experiment's), filled from the experiment's key stream.
const (
	benchCapacity  = 642
	benchFPRate    = 0.0005
	benchKeys      = 271
	benchKeyStream = 101
)

// benchFilter returns the bitcoinj-sized filter and its btcutil twin.
func benchFilter(b *testing.B) (*bip37.Filter, *bloom.Filter) {
	b.Helper()
	f := bitcoinjFilter(b)
	return f, bloom.LoadFilter(f.MsgFilterLoad())
}

// bitcoinjFilter returns the bitcoinj-sized filter: 271 synthetic keys,
// each inserted as public key and hash160.
func bitcoinjFilter(t testing.TB) *bip37.Filter {
	t.Helper()
	f, err := bip37.NewFilter(benchCapacity, benchFPRate, 0x5eed, bip37.UpdateNone)
	require.NoError(t, err)
	for i := range benchKeys {
		pubKey, hash160 := synth.Key(1, benchKeyStream, uint64(i))
		f.Add(pubKey)
		f.Add(hash160)
	}
	return f
}

// reportRate reports candidates per second per core.
func reportRate(b *testing.B, candidates uint64, cores int, elapsed time.Duration) {
	b.ReportMetric(float64(candidates)/elapsed.Seconds()/float64(cores), "cand/s/core")
}

// sinkHits keeps match counts alive.
var sinkHits int

func BenchmarkCandidates(b *testing.B) {
	f, bf := benchFilter(b)
	u := Synthetic{Seed: 42}
	b.Run("generate-only", func(b *testing.B) {
		var c element.Candidate
		n := 0
		start := time.Now()
		for i := 0; b.Loop(); i++ {
			u.Fill(uint64(i), &c)
			n += int(c.Forms[0][0])
		}
		sinkHits = n
		reportRate(b, uint64(b.N), 1, time.Since(start))
	})
	b.Run("btcutil-Matches", func(b *testing.B) {
		var c element.Candidate
		hits := 0
		start := time.Now()
		for i := 0; b.Loop(); i++ {
			u.Fill(uint64(i), &c)
			if bf.Matches(c.Forms[0]) {
				hits++
			}
		}
		sinkHits = hits
		reportRate(b, uint64(b.N), 1, time.Since(start))
	})
	b.Run("bip37-Matches", func(b *testing.B) {
		var c element.Candidate
		hits := 0
		start := time.Now()
		for i := 0; b.Loop(); i++ {
			u.Fill(uint64(i), &c)
			if f.Matches(c.Forms[0]) {
				hits++
			}
		}
		sinkHits = hits
		reportRate(b, uint64(b.N), 1, time.Since(start))
	})
	b.Run("generate-words", func(b *testing.B) {
		var w synth.HashWords
		ms, n := synth.Mix64(42), uint32(0)
		start := time.Now()
		i := uint64(0)
		for ; b.Loop(); i += 64 {
			synth.CandidateWords(ms, i, &w, 64)
			n += w[0][0]
		}
		sinkHits = int(n)
		reportRate(b, i, 1, time.Since(start))
	})
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("Scan-%d-workers", workers), func(b *testing.B) {
			start := time.Now()
			r, err := Run(context.Background(), element.Stream(Synthetic{Seed: 42, Count: uint64(b.N)}), Config{Filters: []*bip37.Filter{f}, Workers: workers})
			if err != nil {
				require.NoError(b, err)
			}
			sinkHits = len(r.Hits)
			reportRate(b, r.Scanned, workers, time.Since(start))
		})
	}
	b.Run("Scan-per-candidate-1-worker", func(b *testing.B) {
		start := time.Now()
		r, err := Run(context.Background(), element.Stream(plainIndexed{Synthetic{Seed: 42, Count: uint64(b.N)}}), Config{Filters: []*bip37.Filter{f}, Workers: 1})
		require.NoError(b, err)
		sinkHits = len(r.Hits)
		reportRate(b, r.Scanned, 1, time.Since(start))
	})
}
