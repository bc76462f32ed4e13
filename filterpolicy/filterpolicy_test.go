package filterpolicy

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/stretchr/testify/require"
)

func TestFilterCapacity(t *testing.T) {
	for _, c := range []struct {
		n    int
		want uint32
	}{{0, 64}, {1, 64}, {32, 64}, {33, 128}, {64, 128}, {65, 256}, {1000, 2048}} {
		got := FilterCapacity(c.n)
		require.Equal(t, c.want, got, "FilterCapacity(%d) = %d, want %d", c.n, got, c.want)
	}
}

// TestFilterSizeNests pins the capacity steps at the default rate: every
// size is the smallest times a power of two with the same k, so each
// divides the next, up to the one capped step to 36,000 bytes.
func TestFilterSizeNests(t *testing.T) {
	want := []int{153, 306, 612, 1224, 2448, 4896, 9792, 19584, 36000}
	n := 1
	for i, w := range want {
		size, k := FilterSize(n, DefaultFPRate)
		require.Equal(t, w, size, "FilterSize(%d) = %d bytes, k %d; want %d bytes, k 13", n, size, k, w)
		require.False(t, i < len(want)-1 && k != 13, "FilterSize(%d) = %d bytes, k %d; want %d bytes, k 13", n, size, k, w)
		n = int(FilterCapacity(n)) // the next capacity step
	}
	for _, p := range []float64{1e-6, 1e-5, 1e-4, 1e-3, 0.02, 0.05} {
		prev, prevK := 0, uint32(0)
		for n := 1; n <= 1<<16; n *= 2 {
			size, k := FilterSize(n, p)
			require.NotEqual(t, 0, size, "p=%g n=%d: %d bytes, k %d", p, n, size, k)
			require.NotEqual(t, uint32(0), k, "p=%g n=%d: %d bytes, k %d", p, n, size, k)
			require.False(t, prev != 0 && size != prev && size < bip37.MaxFilterSize && (size%prev != 0 || k != prevK), "p=%g: %d bytes (k %d) after %d (k %d) does not nest", p, size, k, prev, prevK)
			prev, prevK = size, k
		}
	}
	size, k := FilterSize(10, 0)
	require.Equal(t, 0, size, "FilterSize at rate 0 = %d, %d", size, k)
	require.Equal(t, uint32(0), k, "FilterSize at rate 0 = %d, %d", size, k)
}

// TestFilterSizeBandwidth bounds what nesting costs: at every element
// count the nested filter's false-positive rate, to which the expected
// false-positive transactions per block are proportional, stays within
// 10 % of the rate of BIP37's own sizing for the same capacity (measured
// here: at most 2.9 % above at 1e-4, 5.2 % at 1e-5, 1 % at 0.02).
func TestFilterSizeBandwidth(t *testing.T) {
	for _, p := range []float64{1e-5, 1e-4, 1e-3, 0.02} {
		worst := 0.0
		for n := 1; n <= 20000; n++ {
			size, k := FilterSize(n, p)
			bipSize, bipK := bip37.Params(FilterCapacity(n), p)
			nested := bip37.FalsePositiveRate(uint64(size)*8, k, float64(n))
			bip := bip37.FalsePositiveRate(uint64(bipSize)*8, bipK, float64(n))
			worst = max(worst, nested/bip)
		}
		require.LessOrEqual(t, worst, 1.10, "p=%g: nested sizing's rate up to %.3fx BIP37's", p, worst)
		t.Logf("p=%g: nested rate at most %.4fx BIP37's sizing", p, worst)
	}
}
