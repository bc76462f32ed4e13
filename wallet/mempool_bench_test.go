package wallet

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// BenchmarkApplyMempoolTxPending measures one more fabricated unconfirmed
// payment (made-up input, one output to a wallet address) offered to a
// wallet already holding 500 and 4,000 of them (the budgets raised past
// that with WithMempoolLimits). Compare the two ns/op of one run: the
// cost no longer grows with the pending set (it would grow if each payment re-read it). One op includes
// the commit of its write, whose fsync makes ns/op vary from run to run
// on a shared disk; cpu-ns/op is the process's CPU time per op (getrusage),
// which does not wait on the disk.
func BenchmarkApplyMempoolTxPending(b *testing.B) {
	for _, pending := range []int{500, 4_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			w, keys := newRegtestWallet(b, WithMempoolLimits(MempoolLimits{Txs: 1 << 20, Bytes: 1 << 30, Elements: 1 << 30}))
			f := &txFactory{}
			addr := keys.p2wpkh(extBranch, 0)
			for range pending {
				_, err := w.ApplyMempoolTx(f.tx(nil, output{addr, 1_000}))
				require.NoError(b, err)
			}
			txs := make([]*wire.MsgTx, b.N)
			for i := range txs {
				txs[i] = f.tx(nil, output{addr, 1_000})
			}
			b.ReportAllocs()
			cpu0 := processCPU(b)
			b.ResetTimer()
			for _, tx := range txs {
				if res, err := w.ApplyMempoolTx(tx); err != nil || !res.Relevant {
					require.NoError(b, err, "%v", res)
					require.True(b, res.Relevant, "%v %v", res, err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the CPU time (user and system) the process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
