package element_test

import (
	"math/rand/v2"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/stretchr/testify/require"
)

func TestStreamRangeMatchesFill(t *testing.T) {
	s := element.SliceUniverse(testkit.RandomCandidates(rand.New(rand.NewPCG(3, 4)), 1000, 1))
	got := testkit.Collect(t, element.StreamRange(s, 100, 110))
	var c element.Candidate
	for i, g := range got {
		s.Fill(uint64(100+i), &c)
		require.Equal(t, c.Forms[0], g.Forms[0], "range candidate %d differs from Fill", i)
	}
	require.Len(t, got, 10, "range yielded %d", len(got))
}

func TestSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var elems [][]byte
	for range 500 {
		elems = append(elems, testkit.RandomBytes(rng, 1+rng.IntN(40)))
	}
	elems = append(elems, elems[0], nil) // a duplicate and an empty one
	s := element.NewSet(elems)
	require.Equal(t, 500, s.Len(), "Len = %d, want 500", s.Len())
	for _, e := range elems[:500] {
		require.True(t, s.Contains(e), "missing %x", e)
	}
	for range 5000 {
		x := testkit.RandomBytes(rng, 20)
		require.False(t, s.Contains(x), "false member %x", x)
	}
	require.False(t, s.Contains(nil), "empty string is a member")
	var nilSet *element.Set
	require.False(t, nilSet.Contains(elems[0]), "empty sets contain something")
	require.Equal(t, 0, nilSet.Len(), "empty sets contain something")
	require.False(t, element.NewSet(nil).Contains(elems[0]), "empty sets contain something")
	c := element.Candidate{Forms: [][]byte{testkit.RandomBytes(rng, 20), elems[3]}}
	require.True(t, s.ContainsAny(c), "ContainsAny misses a second form")
}

func TestDedup(t *testing.T) {
	a := element.Candidate{Forms: [][]byte{{1}}}
	aKey := element.Candidate{Forms: [][]byte{{1}, {9}}}
	b := element.Candidate{Forms: [][]byte{{2}, {8}}}
	got := element.Dedup([]element.Candidate{a, b, aKey, {}, b})
	want := []element.Candidate{aKey, b}
	require.Len(t, got, len(want), "got %d candidates", len(got))
	for i := range want {
		require.True(t, got[i].Equal(want[i]), "candidate %d = %x, want %x", i, got[i].Forms, want[i].Forms)
	}
}
