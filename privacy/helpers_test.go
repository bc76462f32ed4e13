package privacy

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// near reports whether got is within rel relative tolerance of want (or
// abs 1e-12 when want is 0).
func near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// randomBytes returns n pseudorandom bytes from rng.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// randomCandidates returns n one- or two-form candidates.
func randomCandidates(rng *rand.Rand, n, forms int) []Candidate {
	out := make([]Candidate, n)
	for i := range out {
		out[i].Forms = append(out[i].Forms, randomBytes(rng, SyntheticHashSize))
		for range forms - 1 {
			out[i].Forms = append(out[i].Forms, randomBytes(rng, SyntheticPubKeySize))
		}
	}
	return out
}

// mustFilter returns a filter sized for n elements at rate p holding
// every form of cands.
func mustFilter(t testing.TB, n uint32, p float64, tweak uint32, flags bip37.UpdateFlag, cands ...Candidate) *bip37.Filter {
	t.Helper()
	f, err := bip37.NewFilter(n, p, tweak, flags)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		for _, form := range c.Forms {
			f.Add(form)
		}
	}
	return f
}

// bruteForce returns, for every candidate, whether it matches f through
// any form and through all forms.
func bruteForce(cands []Candidate, f *bip37.Filter) (anyM, allM []bool) {
	for _, c := range cands {
		a, l := false, len(c.Forms) > 0
		for _, form := range c.Forms {
			if f.Matches(form) {
				a = true
			} else {
				l = false
			}
		}
		anyM, allM = append(anyM, a), append(allM, l)
	}
	return anyM, allM
}

// scanAll scans u with the filters and fails the test on error.
func scanAll(t testing.TB, u Universe, cfg ScanConfig) *ScanResult {
	t.Helper()
	r, err := Scan(context.Background(), u, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// hitKeys returns the primary forms of the hits matching filter j.
func hitKeys(r *ScanResult, j int, all bool) map[string]bool {
	out := map[string]bool{}
	for _, h := range r.Hits {
		m := h.Any
		if all {
			m = h.All
		}
		if m.Has(j) {
			out[h.Candidate.Key()] = true
		}
	}
	return out
}

// jointElements returns n pseudorandom 20-byte elements.
func jointElements(rng *rand.Rand, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, SyntheticHashSize)
		for b := range out[i] {
			out[i][b] = byte(rng.Uint32())
		}
	}
	return out
}

// newTestFilter returns a filter of sizeBytes bytes and k hash functions
// with the given tweak holding elems.
func newTestFilter(t testing.TB, sizeBytes int, k, tweak uint32, elems [][]byte) *bip37.Filter {
	t.Helper()
	f, err := bip37.NewFilterFromBits(make([]byte, sizeBytes), k, tweak, bip37.UpdateNone)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range elems {
		f.Add(e)
	}
	return f
}

// loadRecord returns a filterload record of f.
func loadRecord(seq uint64, peer string, height int32, f *bip37.Filter) transcript.Record {
	return transcript.Record{Seq: seq, Peer: peer, Height: height, Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: "initial"}
}
