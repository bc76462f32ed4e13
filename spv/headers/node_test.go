package headers

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/stretchr/testify/require"
)

// TestHashIndex checks the open-addressing index against a Go map through
// growth (new tables), deletions in any order from any table and inserts
// after them, with many hashes sharing a key (same home slot) and a seed of
// zero and a random one.
func TestHashIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, seed := range []uint64{0, rng.Uint64()} {
		var nodes nodeArena
		x := newHashIndex(0)
		x.seed = seed
		ref := map[chainhash.Hash]int32{}
		for i := 0; i < 40000; i++ { // three arena chunks
			var h chainhash.Hash
			for j := range h {
				h[j] = byte(rng.Uint32())
			}
			if i%100 == 0 {
				copy(h[:8], []byte{1, 2, 3, 4, 5, 6, 7, 8}) // same key and tag
			}
			nodes.push(node{hash: h})
			x.insert(&nodes, int32(i))
			ref[h] = int32(i)
		}
		check := func() {
			t.Helper()
			for h, want := range ref {
				got, ok := x.lookup(&nodes, &h)
				require.True(t, ok, "lookup %v = %d %v, want %d", h, got, ok, want)
				require.Equal(t, want, got, "lookup %v = %d %v, want %d", h, got, ok, want)
			}
			require.Equal(t, len(ref), x.count, "count %d, want %d", x.count, len(ref))
		}
		check()
		// Remove a random half, in random order.
		for _, i := range rng.Perm(nodes.len())[:20000] {
			x.remove(&nodes, int32(i))
			delete(ref, nodes.at(int32(i)).hash)
			_, ok := x.lookup(&nodes, &nodes.at(int32(i)).hash)
			require.False(t, ok, "removed %d still found", i)
		}
		check()
		// Insert more, into the newest table (which removals emptied in
		// part) and new ones.
		for i := 40000; i < 60000; i++ {
			var h chainhash.Hash
			for j := range h {
				h[j] = byte(rng.Uint32())
			}
			nodes.push(node{hash: h})
			x.insert(&nodes, int32(i))
			ref[h] = int32(i)
		}
		check()
		require.GreaterOrEqual(t, len(x.tables), 2, "%d tables", len(x.tables))
		_, ok := x.lookup(&nodes, &chainhash.Hash{0xff})
		require.False(t, ok, "found an absent hash")
	}
}

func TestWork(t *testing.T) {
	max := work{math.MaxUint64, math.MaxUint64}
	tests := []struct {
		a, b, sum work
	}{
		{work{0, 1}, work{0, 2}, work{0, 3}},
		{work{0, math.MaxUint64}, work{0, 1}, work{1, 0}},
		{max, work{0, 1}, max}, // saturates
	}
	for _, tc := range tests {
		got := tc.a.add(tc.b)
		require.Equal(t, tc.sum, got, "%v + %v = %v, want %v", tc.a, tc.b, got, tc.sum)
		require.False(t, tc.sum != max && tc.a.add(tc.b).big().Cmp(new(big.Int).Add(tc.a.big(), tc.b.big())) != 0, "big mismatch")
	}
	require.Equal(t, 1, (work{1, 0}).cmp(work{0, math.MaxUint64}), "cmp")
	require.Equal(t, 0, (work{0, 5}).cmp(work{0, 5}), "cmp")
	require.Equal(t, -1, (work{0, 4}).cmp(work{0, 5}), "cmp")
	huge := new(big.Int).Lsh(big.NewInt(1), 200)
	require.Equal(t, max, workFromBig(huge), "workFromBig bounds")
	require.Equal(t, (work{}), workFromBig(big.NewInt(-1)), "workFromBig bounds")
	v := new(big.Int).SetUint64(12345)
	v.Lsh(v, 70)
	require.Equal(t, 0, workFromBig(v).big().Cmp(v), "round trip")
}
