package bip37

import (
	"math"
	"testing"

	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestCappedAgreesOnGrid compares Capped, the module's one "capped" rule,
// with the rules it replaced and with the cut the sizing code applies, on a
// grid of capacities and rates that straddles the cap:
//
//   - the light node's old rule (spv/filtercap.go): -c ln p / (Ln2*Ln2) > 288,000 bits,
//     with the product math.Ln2*math.Ln2 instead of Core's literal;
//   - the bench's old rule for its minimal client (bench/minimal.go): the same
//     divided by 8 and compared with wire.MaxFilterLoadFilterSize bytes;
//   - the cut inside Params, which the node and the simulators
//     (privacy/experiments, through filterpolicy.FilterSize) size with:
//     Params returns MaxFilterSize bytes;
//   - btcutil/bloom's sizing, which the bench's minimal client loads.
//
// The grid is every capacity up to 20,000, every power of two up to 2^31,
// and the five capacities around the boundary of each rate, for 60 rates
// from 1e-9 to 0.5.
func TestCappedAgreesOnGrid(t *testing.T) {
	oldNode := func(c uint32, p float64) bool {
		return -float64(c)*math.Log(p)/(math.Ln2*math.Ln2) > MaxFilterSize*8
	}
	oldBench := func(c uint32, p float64) bool {
		return -float64(c)*math.Log(p)/(math.Ln2*math.Ln2)/8 > float64(wire.MaxFilterLoadFilterSize)
	}
	paramsCut := func(c uint32, p float64) bool {
		size, _ := Params(c, p)
		return size == MaxFilterSize
	}
	btcutilCut := func(c uint32, p float64) bool {
		return len(bloom.NewFilter(c, 0, p, wire.BloomUpdateNone).MsgFilterLoad().Filter) == wire.MaxFilterLoadFilterSize
	}
	var rates []float64
	for i := range 60 {
		rates = append(rates, math.Pow(10, -9+float64(i)*(9-math.Log10(2))/59))
	}
	checked, capped := 0, 0
	check := func(c uint32, p float64, withBtcutil bool) {
		want := Capped(c, p)
		checked++
		if want {
			capped++
		}
		// The guard keeps require's reflection out of a grid of a million
		// points.
		if rules := [3]bool{oldNode(c, p), oldBench(c, p), paramsCut(c, p)}; rules != [3]bool{want, want, want} {
			require.Equal(t, [3]bool{want, want, want}, rules, "capacity %d rate %g: Capped against the old node rule, the old bench rule and Params at the cap", c, p)
		}
		if withBtcutil {
			require.Equal(t, want, btcutilCut(c, p), "capacity %d rate %g: Capped against btcutil/bloom at the cap", c, p)
		}
	}
	for _, p := range rates {
		for c := uint32(1); c <= 20000; c++ {
			check(c, p, false)
		}
		for c := uint64(1); c <= 1<<31; c *= 2 {
			check(uint32(c), p, false)
		}
		// The capacity where the formula reaches the cap, and its
		// neighbours, including btcutil's own filter there.
		edge := uint64(MaxFilterSize * 8 * ln2Squared / -math.Log(p))
		for c := edge - 2; c <= edge+2 && c <= math.MaxUint32; c++ {
			if c >= 1 {
				check(uint32(c), p, true)
			}
		}
	}
	require.NotEqual(t, 0, capped, "%d of %d grid points capped: the grid does not straddle the cap", capped, checked)
	require.NotEqual(t, checked, capped, "%d of %d grid points capped: the grid does not straddle the cap", capped, checked)
	t.Logf("%d grid points, %d capped: every rule agrees", checked, capped)
	require.False(t, Capped(10, 0), "Capped accepts inputs Params rejects")
	require.False(t, Capped(0, 0.1), "Capped accepts inputs Params rejects")
	require.False(t, Capped(10, 1), "Capped accepts inputs Params rejects")
}
