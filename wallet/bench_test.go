package wallet

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// Benchmark block shape: txsPerBlock delivered transactions, one of them
// paying the wallet, the others false positives.
const (
	benchTxsPerBlock = 10
	benchAddrCycle   = DefaultGapExternal
)

// BenchmarkApplyBlock measures ApplyBlock on blocks of 10 delivered
// transactions with one relevant, committed in batches (the default) and
// committed after every block. Compare the ns/op of the two sub-benchmarks
// of one run.
func BenchmarkApplyBlock(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []Option
	}{
		{"batched", nil},
		{"commit-every-block", []Option{WithBatch(1, 0)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			keys := newTestKeys(b, purposeBIP84, 1, &chaincfg.RegressionNetParams)
			f := &txFactory{}
			chain := newTestChain(f, 1)
			blocks := make([]*fullBlock, b.N)
			for i := range blocks {
				txs := make([]*wire.MsgTx, 0, benchTxsPerBlock)
				txs = append(txs, f.tx(nil, output{keys.p2wpkh(extBranch, uint32(i%benchAddrCycle)), 10_000}))
				for j := 1; j < benchTxsPerBlock; j++ {
					txs = append(txs, f.tx(nil, output{foreignScript(uint32(j)), 1_000}))
				}
				blocks[i] = chain.add(txs...)
			}
			w, err := Create(b.TempDir(), CreateConfig{
				Network: "regtest",
				Xpubs:   []string{accountXpub(b, purposeBIP84, 1, versionVpub)},
			}, append(bc.opts, WithClock(time.Now))...)
			require.NoError(b, err)
			defer w.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for _, blk := range blocks {
				if _, err := w.ApplyBlock(blk.filtered()); err != nil {
					require.NoError(b, err)
				}
			}
			if err := w.Flush(); err != nil {
				require.NoError(b, err)
			}
		})
	}
}
