package privacy

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// collect drains a universe.
func collect(t *testing.T, u Universe) []Candidate {
	t.Helper()
	var out []Candidate
	var c Candidate
	for u.Next(&c) {
		out = append(out, c.Clone())
	}
	if err := u.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSyntheticDeterministicAndDistinct(t *testing.T) {
	const n = 20000
	a := collect(t, Stream(Synthetic{Seed: 7, Count: n, PubKeys: true}))
	b := collect(t, Stream(Synthetic{Seed: 7, Count: n, PubKeys: true}))
	other := collect(t, Stream(Synthetic{Seed: 8, Count: n}))
	seen := map[string]bool{}
	for i := range a {
		if !a[i].Equal(b[i]) {
			t.Fatalf("candidate %d differs between runs", i)
		}
		if len(a[i].Forms) != 2 || len(a[i].Forms[0]) != SyntheticHashSize || len(a[i].Forms[1]) != SyntheticPubKeySize {
			t.Fatalf("candidate %d has shape %d forms", i, len(a[i].Forms))
		}
		if p := a[i].Forms[1][0]; p != 0x02 && p != 0x03 {
			t.Fatalf("pubkey prefix %#x", p)
		}
		seen[a[i].Key()] = true
	}
	for _, c := range other {
		seen[c.Key()] = true
	}
	if len(seen) != 2*n {
		t.Errorf("%d distinct primary forms among %d", len(seen), 2*n)
	}
	// Bytes are balanced: each bit is set about half the time.
	ones := 0
	for _, c := range a {
		for _, x := range c.Forms[0] {
			for j := range 8 {
				ones += int(x>>j) & 1
			}
		}
	}
	total := n * SyntheticHashSize * 8
	if d := float64(ones)/float64(total) - 0.5; d > 0.005 || d < -0.005 {
		t.Errorf("bit balance %.4f", float64(ones)/float64(total))
	}
}

func TestStreamRangeMatchesFill(t *testing.T) {
	s := Synthetic{Seed: 3, Count: 1000}
	got := collect(t, StreamRange(s, 100, 110))
	var c Candidate
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

func TestConcat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := SliceUniverse(randomCandidates(rng, 3, 1))
	empty := SliceUniverse(nil)
	b := SliceUniverse(randomCandidates(rng, 2, 2))
	s := Synthetic{Seed: 9, Count: 4}
	c := NewConcat(a, empty, b, s)
	if c.Len() != 9 {
		t.Fatalf("Len = %d", c.Len())
	}
	got := collect(t, Stream(c))
	want := append(append(append([]Candidate{}, a...), b...), collect(t, Stream(s))...)
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("candidate %d differs", i)
		}
	}
}

func TestElementSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var elems [][]byte
	for range 500 {
		elems = append(elems, randomBytes(rng, 1+rng.IntN(40)))
	}
	elems = append(elems, elems[0], nil) // a duplicate and an empty one
	s := NewElementSet(elems)
	if s.Len() != 500 {
		t.Fatalf("Len = %d, want 500", s.Len())
	}
	for _, e := range elems[:500] {
		if !s.Contains(e) {
			t.Fatalf("missing %x", e)
		}
	}
	for range 5000 {
		x := randomBytes(rng, 20)
		if s.Contains(x) {
			t.Fatalf("false member %x", x)
		}
	}
	if s.Contains(nil) {
		t.Error("empty string is a member")
	}
	var nilSet *ElementSet
	if nilSet.Contains(elems[0]) || nilSet.Len() != 0 || NewElementSet(nil).Contains(elems[0]) {
		t.Error("empty sets contain something")
	}
	c := Candidate{Forms: [][]byte{randomBytes(rng, 20), elems[3]}}
	if !s.ContainsAny(c) {
		t.Error("ContainsAny misses a second form")
	}
}

func TestDedup(t *testing.T) {
	a := Candidate{Forms: [][]byte{{1}}}
	aKey := Candidate{Forms: [][]byte{{1}, {9}}}
	b := Candidate{Forms: [][]byte{{2}, {8}}}
	got := Dedup([]Candidate{a, b, aKey, {}, b})
	want := []Candidate{aKey, b}
	if len(got) != len(want) {
		t.Fatalf("got %d candidates", len(got))
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("candidate %d = %x, want %x", i, got[i].Forms, want[i].Forms)
		}
	}
}
