package scan

import (
	"context"
	"encoding/binary"
	"math/bits"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
)

// Synthetic candidates: deterministic, cheap, never held in memory. The
// generator (splitmix64 lanes) lives in internal/synth, which the
// experiments share for their synthetic keys.

// Sizes of synthetic forms.
const (
	// SyntheticHashSize is the size of a synthetic primary form, a
	// hash160-like 20-byte string.
	SyntheticHashSize = synth.HashSize
	// SyntheticPubKeySize is the size of a synthetic second form, a
	// compressed-public-key-like 33-byte string (0x02 or 0x03 prefix).
	SyntheticPubKeySize = synth.PubKeySize
)

// Synthetic is an indexed universe of Count pseudorandom candidates drawn
// from Seed: candidate i is a fixed function of (Seed, i), so any range can
// be generated independently and a run is reproducible. Candidates of
// different seeds are independent (a collision needs two equal 160-bit
// strings). With PubKeys each candidate also carries a 33-byte second form
// drawn independently of the first, standing for the public key behind a
// hash160; the filter test cannot tell independent pseudorandom strings
// from real key and hash pairs, and generating them is a thousand times
// cheaper than computing real hash160s.
type Synthetic struct {
	Seed    uint64
	Count   uint64
	PubKeys bool
}

// Len implements IndexedUniverse.
func (s Synthetic) Len() uint64 { return s.Count }

// Fill implements IndexedUniverse. Fill is safe for concurrent use with
// distinct candidates.
func (s Synthetic) Fill(i uint64, c *element.Candidate) {
	forms := 1
	if s.PubKeys {
		forms = 2
	}
	if cap(c.Forms) < forms {
		c.Forms = make([][]byte, forms)
	}
	c.Forms, c.FirstSeen = c.Forms[:forms], 0
	ms, first := synth.Mix64(s.Seed), i*synth.TotalLanes
	c.Forms[0] = synth.Hash(c.Forms[0], ms, first)
	if s.PubKeys {
		c.Forms[1] = synth.PubKey(c.Forms[1], ms, first+synth.HashLanes)
	}
}

var _ element.IndexedUniverse = Synthetic{}

// Scanning a synthetic universe: the fast path of Run. Instead of filling
// a Candidate per index and testing its forms one at a time through
// Filter.Matches, a worker generates a batch of bip37.MaxMatchBatch
// candidates' primary forms straight into the word-major layout of
// bip37.Words20 (synth.CandidateWords, eight candidates per vector
// instruction on amd64 with AVX2) and tests the whole batch against each
// filter with a bip37.Matcher, which overlaps the candidates' hash chains
// (sixteen at a time with AVX2). Only the candidates a scan keeps (hits
// and wallet candidates) become Candidate values. The counts and hits are
// exactly those of the per-candidate path (TestScanSyntheticFastPathMatchesPlainPath).

// synthBatch is a worker's buffers for the synthetic fast path.
type synthBatch struct {
	_ [cacheLine]byte
	// words holds the batch's primary forms, word-major; pubKeys their
	// second forms when the universe has them.
	words   bip37.Words20
	pubKeys [bip37.MaxMatchBatch][SyntheticPubKeySize]byte
	// anyMask[j] and allMask[j] are the current batch's matches of
	// Filters[j] through any form and through every form.
	anyMask, allMask []uint64
	// anyCounts and allCounts are the chunk's counts, added to the
	// worker's at the end of the chunk.
	anyCounts, allCounts []uint64
	_                    [cacheLine]byte
}

// scanSynthetic scans candidates first..end-1 of s on the workers.
func scanSynthetic(ctx context.Context, s Synthetic, first, end uint64, ws []*scanWorker) error {
	if end <= first {
		return ctx.Err()
	}
	if ws[0].matchers == nil {
		matchers := make([]*bip37.Matcher, len(ws[0].cfg.Filters))
		for j, f := range ws[0].cfg.Filters {
			matchers[j] = bip37.NewMatcher(f)
		}
		for _, sw := range ws {
			sw.matchers = matchers
		}
	}
	return forkJoin(ctx, len(ws), end-first, defaultChunk, func(w int, lo, hi uint64) error {
		return ws[w].scanSyntheticRange(s, first+lo, first+hi)
	})
}

// scanSyntheticRange scans candidates lo..hi-1 of s.
func (sw *scanWorker) scanSyntheticRange(s Synthetic, lo, hi uint64) error {
	nf := len(sw.cfg.Filters)
	if sw.synth == nil {
		// One allocation, padded by a cache line at each end, so no other
		// worker's memory shares a line with the per-batch writes.
		const pad = cacheLine / 8
		words := make([]uint64, 4*nf+2*pad)[pad:]
		sw.synth = &synthBatch{
			anyMask: words[:nf:nf], allMask: words[nf : 2*nf : 2*nf],
			anyCounts: words[2*nf : 3*nf : 3*nf], allCounts: words[3*nf : 4*nf : 4*nf],
		}
	}
	b := sw.synth
	clear(b.anyCounts)
	clear(b.allCounts)
	ms := synth.Mix64(s.Seed)
	truth := sw.cfg.Truth.Len() > 0
	for i := lo; i < hi; i += bip37.MaxMatchBatch {
		n := int(min(hi-i, bip37.MaxMatchBatch))
		synth.CandidateWords(ms, i, (*synth.HashWords)(&b.words), n)
		var pubKeys [][SyntheticPubKeySize]byte
		if s.PubKeys {
			pubKeys = b.pubKeys[:n]
			synth.CandidatePubKeys(ms, i, pubKeys)
		}
		var keep uint64
		for j, m := range sw.matchers {
			anyM := m.Match20Words(&b.words, n)
			allM := anyM
			if pubKeys != nil {
				pk := m.Match33(pubKeys)
				anyM, allM = anyM|pk, allM&pk
			}
			b.anyMask[j], b.allMask[j] = anyM, allM
			b.anyCounts[j] += uint64(bits.OnesCount64(anyM))
			b.allCounts[j] += uint64(bits.OnesCount64(allM))
			keep |= anyM
		}
		var truthM uint64
		if truth {
			truthM = sw.truthMask(b, n, s.PubKeys)
			keep |= truthM
		}
		for ; keep != 0; keep &= keep - 1 {
			t := bits.TrailingZeros64(keep)
			if err := sw.keepSynthetic(b, t, s.PubKeys, truthM>>t&1 == 1); err != nil {
				return err
			}
		}
	}
	forms := 1
	if s.PubKeys {
		forms = 2
	}
	sw.formCounts[forms] += hi - lo
	sw.scanned += hi - lo
	AddCounts(sw.anyCounts, b.anyCounts)
	AddCounts(sw.allCounts, b.allCounts)
	return nil
}

// truthMask returns the mask of the batch's first n candidates that are
// the wallet's (some form in Truth) and counts them.
func (sw *scanWorker) truthMask(b *synthBatch, n int, pubKeys bool) uint64 {
	forms := 1
	if pubKeys {
		forms = 2
	}
	var m uint64
	for t := range n {
		h := hashForm(&b.words, t)
		if sw.cfg.Truth.Contains(h[:]) || (pubKeys && sw.cfg.Truth.Contains(b.pubKeys[t][:])) {
			m |= 1 << t
			sw.truthCounts[forms]++
		}
	}
	return m
}

// hashForm returns the bytes of primary form t of w.
func hashForm(w *bip37.Words20, t int) [SyntheticHashSize]byte {
	var h [SyntheticHashSize]byte
	for b := range w {
		binary.LittleEndian.PutUint32(h[4*b:], w[b][t])
	}
	return h
}

// keepSynthetic records candidate t of the current batch as a hit with
// its matches, as test does on the per-candidate path.
func (sw *scanWorker) keepSynthetic(b *synthBatch, t int, pubKeys, truth bool) error {
	h := hashForm(&b.words, t)
	forms := [2][]byte{h[:], b.pubKeys[t][:]}
	c := element.Candidate{Forms: forms[:1]}
	if pubKeys {
		c.Forms = forms[:2]
	}
	var hit *Hit
	for j, anyM := range b.anyMask {
		if anyM>>t&1 == 0 {
			continue
		}
		if hit == nil {
			hit = sw.newHit(&c, truth)
		}
		hit.Any.Set(j)
		if b.allMask[j]>>t&1 == 1 {
			hit.All.Set(j)
		}
	}
	return sw.keep(hit, &c, truth)
}
