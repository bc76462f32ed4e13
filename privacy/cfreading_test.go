package privacy

import (
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcutil/gcs"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// TestBlockFPRateMatchesGCS matches real basic-filter-sized Golomb sets
// of random items against random queries that are not in them and checks
// the false matches counted against BlockFPRate's expectation: inside
// the count's 99.9 % Garwood interval. A rate of 1/M per query and item
// (not per query) predicts a hundred times more matches here.
func TestBlockFPRateMatchesGCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			b := make([]byte, 22)
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			out[i] = b
		}
		return out
	}
	const filters, items, queries = 2500, 200, 8000
	var want float64
	got := 0
	q := random(queries)
	for range filters {
		var key [gcs.KeySize]byte
		for j := range key {
			key[j] = byte(rng.Uint32())
		}
		f, err := gcs.BuildGCSFilter(builder.DefaultP, builder.DefaultM, key, random(items))
		require.NoError(t, err)
		ok, err := f.MatchAny(key, q)
		require.NoError(t, err)
		if ok {
			got++
		}
		want += BlockFPRate(queries, f.N())
	}
	iv := stats.PoissonInterval(uint64(got), 0.999)
	t.Logf("%d of %d filters matched by chance, expected %.1f, 99.9 %% [%.1f, %.1f]", got, filters, want, iv.Lo, iv.Hi)
	require.True(t, iv.Contains(want), "expected %.1f outside [%.1f, %.1f] of %d observed", want, iv.Lo, iv.Hi, got)
	require.Zero(t, BlockFPRate(queries, 0), "an empty filter matches nothing")
	require.Zero(t, BlockFPRate(0, items))
}

// TestMeasureFilterIsTheMetersReading: the alternative's figures are
// those a meter fed the same filter reads.
func TestMeasureFilterIsTheMetersReading(t *testing.T) {
	f, err := bip37.NewFilter(40, 0.0001, 7, bip37.UpdateNone)
	require.NoError(t, err)
	for i := range 30 {
		f.Add(p2wpkh(byte(i)))
	}
	c := WalletCounts{OnChain: 12, Watched: 30, Elements: 30}
	alt, err := MeasureFilter(MeterConfig{}, f, c, 5000, "test")
	require.NoError(t, err)
	m := NewMeter(MeterConfig{})
	m.SetUniverse(5000, "test")
	m.SetWallet(c)
	rd, err := m.Observe(transcript.Record{Kind: transcript.KindFilterLoad, Filter: f.Serialize()})
	require.NoError(t, err)
	require.Equal(t, FilterAlternative{Bytes: f.Size(), HashFuncs: f.HashFuncs(), Elements: 30, FPRate: rd.FPRate,
		TxFPRate: rd.ExpectedTxFPRate, Candidates: 5000, ExpectedFP: rd.ExpectedFP, Precision: rd.SinglePrecision,
		Entropy: rd.SingleEntropy}, *alt)
	require.Positive(t, alt.ExpectedFP)
	require.Less(t, alt.Precision, 1.0)
}
