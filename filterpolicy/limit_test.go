package filterpolicy_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestFilterAboveMaxElements builds filters for 65,536 and 70,053
// elements (the second is what one fabricated payment of 70,000 outputs
// made a wallet watch): BIP37's sizing gives the capped filter
// of more than MaxFilterElements no hash function, which matches
// everything, and the node stopped ("filter would match everything") and
// could not start again. Both now get 36,000 bytes and one hash function,
// hold every element, and predict the rate 1 - e^(-n/288,000).
func TestFilterAboveMaxElements(t *testing.T) {
	for _, n := range []int{filterpolicy.MaxFilterElements, 70_053} {
		var els watch.Elements
		for i := range n {
			var h chainhash.Hash
			binary.BigEndian.PutUint64(h[:], uint64(i))
			els.OutPoints = append(els.OutPoints, wire.OutPoint{Hash: h, Index: uint32(i)})
		}
		f, err := filterpolicy.BuildFilter(els, filterpolicy.DefaultFPRate, 7)
		require.NoError(t, err, "%d elements", n)
		require.Equal(t, bip37.MaxFilterSize, f.Size(), "%d elements: %d bytes, k %d; want %d bytes, k 1", n, f.Size(), f.HashFuncs(), bip37.MaxFilterSize)
		require.Equal(t, uint32(1), f.HashFuncs(), "%d elements: %d bytes, k %d; want %d bytes, k 1", n, f.Size(), f.HashFuncs(), bip37.MaxFilterSize)
		for i := range els.OutPoints {
			require.True(t, f.MatchesOutPoint(&els.OutPoints[i]), "%d elements: element %d not held", n, i)
		}
		want := 1 - math.Exp(-float64(n)/(bip37.MaxFilterSize*8))
		got := f.FPRate(float64(n))
		require.InDelta(t, want, got, 0.01, "%d elements: rate %.3f, want about %.3f", n, got, want)
	}
}
