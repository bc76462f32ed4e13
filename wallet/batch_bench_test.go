package wallet

import (
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

// BenchmarkFirstSyncBatch applies the first sync of a bench-like chain
// (2,300 blocks; 2,000 of them pay one of 2,000 imported addresses and
// every other one spends an earlier coin, half the spends with change to a
// watched address: 3,000 wallet transactions) with batches of 1 to 2,300
// blocks and no time bound (one op is the whole sync, committed at the
// end), and reports the commits.
func BenchmarkFirstSyncBatch(b *testing.B) {
	const blocks = 2300
	addresses, fbs := firstSyncChain(b)
	for _, batch := range []int{1, 20, 50, 500, blocks} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Addresses: addresses},
					WithBatch(batch, 0), WithClock(time.Now))
				require.NoError(b, err)
				b.StartTimer()
				for _, fb := range fbs {
					if _, err := w.ApplyBlock(fb); err != nil {
						require.NoError(b, err)
					}
				}
				require.NoError(b, w.Flush())
				b.StopTimer()
				require.NoError(b, w.Close())
			}
			b.ReportMetric(float64((blocks+batch-1)/batch), "commits")
		})
	}
}

// firstSyncChain builds the chain BenchmarkFirstSyncBatch applies and
// returns its 2,000 imported addresses and its 2,300 filtered blocks.
func firstSyncChain(b *testing.B) ([]string, []*watch.FilteredBlock) {
	const blocks, addrs = 2300, 2000
	addresses := benchAddresses(b, addrs)
	f := &txFactory{}
	chain := newTestChain(f, 1)
	var coins []wire.OutPoint
	var fbs []*watch.FilteredBlock
	for i := range blocks {
		var txs []*wire.MsgTx
		if i < addrs {
			_, script := benchAddress(b, i)
			tx := f.tx(nil, output{script, 10_000 + int64(i)}, output{foreignScript(uint32(i)), 1_000})
			coins = append(coins, op(tx, 0))
			txs = append(txs, tx)
		}
		if i%2 == 1 && len(coins) > 2 {
			spent := coins[0]
			coins = coins[1:]
			outs := []output{{foreignScript(7), 5_000}}
			if i%4 == 1 {
				_, change := benchAddress(b, i%addrs)
				outs = append(outs, output{change, 4_000})
			}
			tx := f.tx([]wire.OutPoint{spent}, outs...)
			if len(outs) == 2 {
				coins = append(coins, op(tx, 1))
			}
			txs = append(txs, tx)
		}
		fbs = append(fbs, chain.add(txs...).filtered())
		chain.blocks = nil
	}
	return addresses, fbs
}
