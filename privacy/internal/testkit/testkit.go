// Package testkit holds the fixtures the tests of package privacy and its
// sub-packages share: random candidates and elements, filters holding
// them, a brute-force reference match, transcript records, and a chain of
// hand-made transactions paying synthetic keys.
//
// It is imported by tests only. Package privacy/element, which testkit
// imports, uses it from its external test package element_test.
package testkit

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// Near reports whether got is within rel relative tolerance of want (or
// abs 1e-12 when want is 0).
func Near(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-12
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// RandomBytes returns n pseudorandom bytes from rng.
func RandomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// RandomCandidates returns n candidates of the given number of forms: a
// hash160-sized primary form and public-key-sized further forms.
func RandomCandidates(rng *rand.Rand, n, forms int) []element.Candidate {
	out := make([]element.Candidate, n)
	for i := range out {
		out[i].Forms = append(out[i].Forms, RandomBytes(rng, synth.HashSize))
		for range forms - 1 {
			out[i].Forms = append(out[i].Forms, RandomBytes(rng, synth.PubKeySize))
		}
	}
	return out
}

// Elements returns n pseudorandom hash160-sized elements.
func Elements(rng *rand.Rand, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = RandomBytes(rng, synth.HashSize)
	}
	return out
}

// MustFilter returns a filter sized for n elements at rate p holding
// every form of cands, and fails the test if it cannot be made.
func MustFilter(t testing.TB, n uint32, p float64, tweak uint32, flags bip37.UpdateFlag, cands ...element.Candidate) *bip37.Filter {
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

// FilterOf returns a filter of sizeBytes bytes and k hash functions with
// the given tweak holding elems.
func FilterOf(t testing.TB, sizeBytes int, k, tweak uint32, elems [][]byte) *bip37.Filter {
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

// BruteForce returns, for every candidate, whether it matches f through
// any form and through all forms.
func BruteForce(cands []element.Candidate, f *bip37.Filter) (anyM, allM []bool) {
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

// LoadRecord returns a filterload record of f.
func LoadRecord(seq uint64, peer string, height int32, f *bip37.Filter) transcript.Record {
	return transcript.Record{Seq: seq, Peer: peer, Height: height, Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: "initial"}
}

// Collect drains u and fails the test if its stream fails.
func Collect(t testing.TB, u element.Universe) []element.Candidate {
	t.Helper()
	var out []element.Candidate
	var c element.Candidate
	for u.Next(&c) {
		out = append(out, c.Clone())
	}
	if err := u.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
