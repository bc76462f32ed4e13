package testnet

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestReorgDoubleSpend(t *testing.T) {
	h := NewT(t, Options{})
	key, err := NewKeyring(DemoSeed, h.Params())
	require.NoError(t, err)
	rpc := h.Node().RPC()

	for round, depth := range []int{1, 3} {
		t.Run(fmt.Sprintf("depth%d", depth), func(t *testing.T) {
			addr, err := key.Address(PurposeBIP84, BranchExternal, uint32(round))
			require.NoError(t, err)
			script, err := txscript.PayToAddrScript(addr)
			require.NoError(t, err)
			// A payment to the user that the reorg removes, and a
			// double spend of its inputs paying someone else.
			pay, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(int64(btcutil.SatoshiPerBitcoin), script)})
			require.NoError(t, err)
			ds, err := h.DoubleSpend(pay, []*wire.TxOut{wire.NewTxOut(40_000, RandomScript(h.rng, KindP2PKH))})
			require.NoError(t, err)
			require.Equal(t, pay.TxIn[0].PreviousOutPoint, ds.TxIn[0].PreviousOutPoint)

			_, before, err := h.Node().BestBlock()
			require.NoError(t, err)
			res, err := h.Reorg(t.Context(), depth, ReorgOptions{OrphanTxs: []*wire.MsgTx{pay}, WinnerTxs: []*wire.MsgTx{ds}})
			require.NoError(t, err)
			require.Equal(t, before, res.ForkHeight)
			require.Len(t, res.Orphaned, depth)
			require.Len(t, res.New, depth+1)
			require.Equal(t, before+int32(depth)+1, res.TipHeight)

			// The main chain holds the new branch, not the orphaned one.
			for i, orphan := range res.Orphaned {
				hash, err := rpc.GetBlockHash(int64(res.ForkHeight) + 1 + int64(i))
				require.NoError(t, err)
				require.NotEqual(t, *orphan, *hash)
				require.Equal(t, *res.New[i], *hash)
			}
			// The payment is gone from chain and mempool; the double
			// spend is confirmed in the first new block.
			_, err = rpc.GetRawTransaction(ptr(pay.TxHash()))
			require.Error(t, err, "orphaned payment must be gone")
			out, err := rpc.GetTxOut(ptr(pay.TxHash()), 0, true)
			require.NoError(t, err)
			require.Nil(t, out)
			out, err = rpc.GetTxOut(ptr(ds.TxHash()), 0, true)
			require.NoError(t, err)
			require.NotNil(t, out)
			require.Equal(t, int64(depth+1), out.Confirmations)

			// The funder is still consistent: it can pay and mine.
			_, err = h.Noise(3)
			require.NoError(t, err)
			_, err = h.Mine(1)
			require.NoError(t, err)
			require.NoError(t, h.node2.WaitSynced(t.Context(), h.Node()))
		})
	}
	pid2 := h.node2.PID()
	require.NoError(t, h.Close())
	requireGone(t, pid2)
}

func ptr[T any](v T) *T { return &v }
