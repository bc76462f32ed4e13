package testnet

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// benchChain builds spec b.N times on one harness and reports blocks and
// transactions per second.
func benchChain(b *testing.B, spec ChainSpec) {
	h := NewT(b, Options{})
	key, err := NewKeyring(DemoSeed, h.Params())
	require.NoError(b, err)
	spec.Keyring = key
	b.ResetTimer()
	txs := 0
	for i := 0; i < b.N; i++ {
		spec.Seed = int64(i)
		truth, err := h.BuildChain(b.Context(), spec)
		if err != nil {
			require.NoError(b, err)
		}
		txs += truth.NoiseTxs + len(truth.Txs)
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*spec.Blocks)/secs, "blocks/s")
	b.ReportMetric(float64(txs)/secs, "txs/s")
}

// BenchmarkMineEmpty is the baseline: the same number of blocks with no
// transactions, mined one generate call per block as BuildChain does for
// blocks with transactions.
func BenchmarkMineEmpty(b *testing.B) {
	h := NewT(b, Options{})
	const blocks = 100
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for range blocks {
			if _, err := h.Mine(1); err != nil {
				require.NoError(b, err)
			}
		}
	}
	b.ReportMetric(float64(b.N*blocks)/b.Elapsed().Seconds(), "blocks/s")
}

// BenchmarkBuildChain100x10 builds 100 blocks of 10 noise transactions
// with 20 watched addresses (2 payments each, half spent).
func BenchmarkBuildChain100x10(b *testing.B) {
	benchChain(b, ChainSpec{Blocks: 100, TxsPerBlock: 10, WatchAddrs: 20, PaymentsPerAddr: 2, SpendFraction: 0.5})
}

// BenchmarkBuildChain2000x10 is the demo-sized chain: 2,000 blocks of 10
// noise transactions, 20 watched addresses. Run it with -benchtime 1x.
func BenchmarkBuildChain2000x10(b *testing.B) {
	benchChain(b, ChainSpec{Blocks: 2000, TxsPerBlock: 10, WatchAddrs: 20, PaymentsPerAddr: 2, SpendFraction: 0.5})
}

// BenchmarkNewHarness measures a harness start: btcd start, the setup
// blocks to segwit activation, and Close.
func BenchmarkNewHarness(b *testing.B) {
	for i := 0; i < b.N; i++ {
		h, err := New(b.Context(), Options{})
		if err != nil {
			require.NoError(b, err)
		}
		if err := h.Close(); err != nil {
			require.NoError(b, err)
		}
	}
}

// BenchmarkStartNode is NewHarness's baseline: btcd start and stop only.
func BenchmarkStartNode(b *testing.B) {
	for i := 0; i < b.N; i++ {
		n, err := StartNode(b.Context(), Config{})
		if err != nil {
			require.NoError(b, err)
		}
		if err := n.Stop(); err != nil {
			require.NoError(b, err)
		}
	}
}
