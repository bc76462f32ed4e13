package element_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
)

func TestStreamRangeMatchesFill(t *testing.T) {
	s := element.SliceUniverse(testkit.RandomCandidates(rand.New(rand.NewPCG(3, 4)), 1000, 1))
	got := testkit.Collect(t, element.StreamRange(s, 100, 110))
	var c element.Candidate
	for i, g := range got {
		s.Fill(uint64(100+i), &c)
		if !bytes.Equal(g.Forms[0], c.Forms[0]) {
			t.Fatalf("range candidate %d differs from Fill", i)
		}
	}
	if len(got) != 10 {
		t.Errorf("range yielded %d", len(got))
	}
}

func TestSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var elems [][]byte
	for range 500 {
		elems = append(elems, testkit.RandomBytes(rng, 1+rng.IntN(40)))
	}
	elems = append(elems, elems[0], nil) // a duplicate and an empty one
	s := element.NewSet(elems)
	if s.Len() != 500 {
		t.Fatalf("Len = %d, want 500", s.Len())
	}
	for _, e := range elems[:500] {
		if !s.Contains(e) {
			t.Fatalf("missing %x", e)
		}
	}
	for range 5000 {
		x := testkit.RandomBytes(rng, 20)
		if s.Contains(x) {
			t.Fatalf("false member %x", x)
		}
	}
	if s.Contains(nil) {
		t.Error("empty string is a member")
	}
	var nilSet *element.Set
	if nilSet.Contains(elems[0]) || nilSet.Len() != 0 || element.NewSet(nil).Contains(elems[0]) {
		t.Error("empty sets contain something")
	}
	c := element.Candidate{Forms: [][]byte{testkit.RandomBytes(rng, 20), elems[3]}}
	if !s.ContainsAny(c) {
		t.Error("ContainsAny misses a second form")
	}
}

func TestDedup(t *testing.T) {
	a := element.Candidate{Forms: [][]byte{{1}}}
	aKey := element.Candidate{Forms: [][]byte{{1}, {9}}}
	b := element.Candidate{Forms: [][]byte{{2}, {8}}}
	got := element.Dedup([]element.Candidate{a, b, aKey, {}, b})
	want := []element.Candidate{aKey, b}
	if len(got) != len(want) {
		t.Fatalf("got %d candidates", len(got))
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("candidate %d = %x, want %x", i, got[i].Forms, want[i].Forms)
		}
	}
}
