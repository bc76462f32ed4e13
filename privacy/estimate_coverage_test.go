package privacy

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// TestElementEstimateCoverage measures the coverage of m^'s 95 %
// interval (m^ +- 1.96 elementStdErr at m^, the delta method with the
// occupancy variance of the bits set) over random element sets, at fills
// 0.2 to 0.9: 1,000 filters of 1,000 bytes and k = 5 per fill, fresh
// tweaks, seeded. docs/PRIVACY-MODEL.md states the figures this logs.
func TestElementEstimateCoverage(t *testing.T) {
	const (
		trials = 1000
		size   = 1000
		k      = 5
	)
	n := float64(size * 8)
	for _, fill := range []float64{0.2, 0.5, 0.8, 0.9} {
		m := int(math.Round(-n / k * math.Log(1-fill)))
		rng := rand.New(rand.NewPCG(36, uint64(fill*100)))
		var covered uint64
		var b [8]byte
		for range trials {
			f, err := bip37.NewFilterFromBits(make([]byte, size), k, rng.Uint32(), bip37.UpdateNone)
			require.NoError(t, err)
			for range m {
				binary.LittleEndian.PutUint64(b[:], rng.Uint64())
				f.Add(b[:])
			}
			if iv := estElementsInterval(f); iv != nil && iv.Contains(float64(m)) {
				covered++
			}
		}
		iv := stats.BinomialInterval(covered, trials, stats.ConfidenceLevel)
		t.Logf("fill %.1f (m = %d): coverage %.3f [%.3f, %.3f]", fill, m, float64(covered)/trials, iv.Lo, iv.Hi)
		require.Truef(t, iv.Contains(stats.ConfidenceLevel), "fill %.1f: coverage %.3f [%.3f, %.3f] excludes 0.95", fill, float64(covered)/trials, iv.Lo, iv.Hi)
	}
}
