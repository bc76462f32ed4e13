package bcoin

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// TestReorgDoubleSpendOnBoth runs one reorganisation through
// testnet.Chain, the same calls on btcd (a second node) and on bcoin
// (invalidateblock): a payment to the user confirmed in the losing
// branch, a double spend of its inputs confirmed in the winning one, and
// another user's payment from the mempool mined in the losing branch.
// Afterwards the winning branch is the main chain, the payment is gone
// from chain and mempool, the double spend has depth+1 confirmations,
// the other payment is not lost (confirmed again or back in the
// mempool), and the funder still pays and mines.
func TestReorgDoubleSpendOnBoth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and bcoin")
	}
	for _, impl := range []struct {
		name  string
		start func(t *testing.T) *testnet.Chain
	}{
		{"btcd", func(t *testing.T) *testnet.Chain { return testnet.NewT(t, testnet.Options{}).Chain }},
		{"bcoin", func(t *testing.T) *testnet.Chain { return NewT(t, Options{}).Chain }},
	} {
		t.Run(impl.name, func(t *testing.T) {
			c := impl.start(t)
			node := c.Node()
			key, err := testnet.NewKeyring(testnet.DemoSeed, c.Params())
			require.NoError(t, err)
			for round, depth := range []int{1, 3} {
				t.Run(fmt.Sprintf("depth%d", depth), func(t *testing.T) {
					script, err := key.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, uint32(round))
					require.NoError(t, err)
					pay, err := c.NewTx([]*wire.TxOut{wire.NewTxOut(int64(btcutil.SatoshiPerBitcoin), script)})
					require.NoError(t, err)
					ds, err := c.DoubleSpend(pay, []*wire.TxOut{wire.NewTxOut(40_000, testnet.RandomScript(nil, testnet.KindP2PKH))})
					require.NoError(t, err)
					other, err := c.Noise(1)
					require.NoError(t, err)

					_, before, err := node.BestBlock()
					require.NoError(t, err)
					res, err := c.Reorg(t.Context(), depth, testnet.ReorgOptions{OrphanTxs: []*wire.MsgTx{pay}, WinnerTxs: []*wire.MsgTx{ds}})
					require.NoError(t, err)
					require.Equal(t, before, res.ForkHeight)
					require.Len(t, res.Orphaned, depth)
					require.Len(t, res.New, depth+1)
					require.Equal(t, before+int32(depth)+1, res.TipHeight)
					for i, orphan := range res.Orphaned {
						hash, _, err := node.BlockAt(res.ForkHeight + 1 + int32(i))
						require.NoError(t, err)
						require.NotEqual(t, *orphan, *hash)
						require.Equal(t, *res.New[i], *hash)
					}

					txid := pay.TxHash()
					_, err = node.Tx(&txid)
					require.Error(t, err, "the orphaned payment is gone")
					out, err := node.Unspent(wire.OutPoint{Hash: txid}, true)
					require.NoError(t, err)
					require.Nil(t, out)
					out, err = node.Unspent(wire.OutPoint{Hash: ds.TxHash()}, true)
					require.NoError(t, err)
					require.NotNil(t, out)
					require.Equal(t, int64(depth+1), out.Confirmations)
					out, err = node.Unspent(wire.OutPoint{Hash: other[0].TxHash()}, true)
					require.NoError(t, err)
					require.NotNil(t, out, "the other payment is confirmed again or back in the mempool")

					_, err = c.Noise(3)
					require.NoError(t, err)
					_, err = c.Mine(1)
					require.NoError(t, err)
				})
			}
		})
	}
}
