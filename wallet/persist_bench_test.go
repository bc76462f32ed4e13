package wallet

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/btcsuite/btcwallet/wtxmgr"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

// persistChain builds a bench-shaped first sync: 2,300 blocks, the first
// 2,000 paying addrs/2,000 of addrs imported addresses each, and every
// other one of them spending as many earlier coins, half the spends with
// change to a watched address (3,000 wallet transactions
// at 2,000 addresses, 15,000 at 10,000: the bench's addrs2000 and
// addrs10000 chains' counts). It returns the addresses, the blocks and
// the wallet transactions of each block.
func persistChain(b *testing.B, addrs int) ([]string, []*watch.FilteredBlock) {
	const blocks, payBlocks = 2300, 2000
	per := max(1, addrs/payBlocks)
	addresses := benchAddresses(b, addrs)
	scripts := make([][]byte, addrs)
	for i := range scripts {
		_, scripts[i] = benchAddress(b, i)
	}
	f := &txFactory{}
	chain := newTestChain(f, 1)
	var coins []wire.OutPoint
	var fbs []*watch.FilteredBlock
	next := 0
	for i := range blocks {
		var txs []*wire.MsgTx
		for j := 0; j < per && i < payBlocks && next < addrs; j++ {
			tx := f.tx(nil, output{scripts[next], 10_000 + int64(next)}, output{foreignScript(uint32(next)), 1_000})
			next++
			coins = append(coins, op(tx, 0))
			txs = append(txs, tx)
		}
		for j := 0; i%2 == 1 && i < payBlocks && j < per && len(coins) > 2*per; j++ {
			spent := coins[0]
			coins = coins[1:]
			outs := []output{{foreignScript(7), 5_000}}
			if (i+j)%2 == 1 {
				outs = append(outs, output{scripts[(i*per+j)%addrs], 4_000})
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

// BenchmarkPersistFloor measures what persisting a first sync's wallet
// transactions costs at least with btcwallet's store, against what the
// wallet's ApplyBlock costs for the same blocks (one op is the whole
// sync; both commit every DefaultBatchBlocks blocks; cpu-ms is the
// process's user+system CPU per op, steadier than the wall time on a
// shared machine):
//
//   - wtxmgr: each wallet transaction inserted into wtxmgr as mined with a
//     credit for each output paying a watched script, nothing else: no
//     relevance judgement, no match records, no counters, no sync point,
//     no net amounts. Its own bookkeeping (debits, unspent index,
//     balances) is the floor of a wallet on wtxmgr.
//   - apply: wallet.ApplyBlock of every block, the wallet created with the
//     addresses before the timer starts.
func BenchmarkPersistFloor(b *testing.B) {
	for _, addrs := range []int{2000, 10000} {
		addresses, fbs := persistChain(b, addrs)
		watched := make(map[string]bool, addrs)
		for i := range addrs {
			_, s := benchAddress(b, i)
			watched[string(s)] = true
		}
		wtxs := 0
		for _, fb := range fbs {
			wtxs += len(fb.Txs)
		}
		b.Run(fmt.Sprintf("addrs=%d/wtxmgr", addrs), func(b *testing.B) {
			cpu := cpuTimer{}
			for range b.N {
				b.StopTimer()
				db, err := walletdb.Create(dbDriver, filepath.Join(b.TempDir(), "w.db"), noFreelistSync, dbOpenTimeout)
				require.NoError(b, err)
				require.NoError(b, walletdb.Update(db, func(tx walletdb.ReadWriteTx) error {
					tm, err := tx.CreateTopLevelBucket(wtxmgrNS)
					if err != nil {
						return err
					}
					return wtxmgr.Create(tm)
				}))
				var store *wtxmgr.Store
				require.NoError(b, walletdb.View(db, func(tx walletdb.ReadTx) error {
					store, err = wtxmgr.Open(tx.ReadBucket(wtxmgrNS), &chaincfg.RegressionNetParams)
					return err
				}))
				b.StartTimer()
				cpu.start(b)
				for start := 0; start < len(fbs); start += DefaultBatchBlocks {
					err := walletdb.Update(db, func(tx walletdb.ReadWriteTx) error {
						tm := tx.ReadWriteBucket(wtxmgrNS)
						for _, fb := range fbs[start:min(start+DefaultBatchBlocks, len(fbs))] {
							bm := &wtxmgr.BlockMeta{Block: wtxmgr.Block{Hash: fb.Hash, Height: fb.Height}, Time: fb.Header.Timestamp}
							for _, mtx := range fb.Txs {
								rec, err := wtxmgr.NewTxRecordFromMsgTx(mtx, fb.Header.Timestamp)
								if err != nil {
									return err
								}
								if err := store.InsertTx(tm, rec, bm); err != nil {
									return err
								}
								for i, out := range mtx.TxOut {
									if watched[string(out.PkScript)] {
										if err := store.AddCredit(tm, rec, bm, uint32(i), false); err != nil {
											return err
										}
									}
								}
							}
						}
						return nil
					})
					if err != nil {
						require.NoError(b, err)
					}
				}
				cpu.stop(b)
				b.StopTimer()
				require.NoError(b, db.Close())
			}
			b.ReportMetric(float64(wtxs), "wallet-txs")
			b.ReportMetric(cpu.total.Seconds()*1000/float64(b.N), "cpu-ms")
		})
		b.Run(fmt.Sprintf("addrs=%d/apply", addrs), func(b *testing.B) {
			cpu := cpuTimer{}
			for range b.N {
				b.StopTimer()
				w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Addresses: addresses},
					WithBatch(DefaultBatchBlocks, 0), WithClock(time.Now))
				require.NoError(b, err)
				b.StartTimer()
				cpu.start(b)
				for _, fb := range fbs {
					if _, err := w.ApplyBlock(fb); err != nil {
						require.NoError(b, err)
					}
				}
				require.NoError(b, w.Flush())
				cpu.stop(b)
				b.StopTimer()
				require.NoError(b, w.Close())
			}
			b.ReportMetric(float64(wtxs), "wallet-txs")
			b.ReportMetric(cpu.total.Seconds()*1000/float64(b.N), "cpu-ms")
		})
	}
}

// cpuTimer sums the process's user+system CPU time between start and stop.
type cpuTimer struct {
	at    time.Duration
	total time.Duration
}

func (c *cpuTimer) start(tb testing.TB) { c.at = processCPU(tb) }
func (c *cpuTimer) stop(tb testing.TB)  { c.total += processCPU(tb) - c.at }
