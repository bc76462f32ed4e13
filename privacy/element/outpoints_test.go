package element_test

import (
	"context"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestChainOutpointUniverse builds the two-form candidates from a chain:
// each push with its outputs unspent at the height asked.
func TestChainOutpointUniverse(t *testing.T) {
	k1, k2 := testkit.NewKey(1), testkit.NewKey(2)
	var c testkit.Chain
	pay1 := testkit.Pay(nil, nil, k1, k1) // two outputs to k1
	c.Block(pay1)
	op0, op1 := wire.OutPoint{Hash: pay1.TxHash(), Index: 0}, wire.OutPoint{Hash: pay1.TxHash(), Index: 1}
	spend := testkit.Pay([]wire.OutPoint{op0}, []testkit.Key{k1}, k2)
	c.Block(spend)
	bare := wire.NewMsgTx(wire.TxVersion)
	bare.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{9}}, nil, nil))
	pk, _ := txscript.NewScriptBuilder().AddData(k2.PubKey).AddOp(txscript.OP_CHECKSIG).Script()
	bare.AddTxOut(wire.NewTxOut(5, pk))
	c.Block(bare)
	ctx := context.Background()
	forms := func(u element.SliceUniverse, key []byte) []string {
		for _, cand := range u {
			if string(cand.Forms[0]) == string(key) {
				var out []string
				for _, f := range cand.Forms[1:] {
					out = append(out, string(f))
				}
				return out
			}
		}
		return nil
	}
	at0, err := element.ChainOutpointUniverse(ctx, c.Blocks, 0)
	require.NoError(t, err)
	got := forms(at0, k1.Hash160)
	require.Len(t, got, 2, "at 0, k1's outpoints %x", got)
	require.Equal(t, string(element.OutPointForm(op0)), got[0], "at 0, k1's outpoints %x", got)
	require.Equal(t, string(element.OutPointForm(op1)), got[1], "at 0, k1's outpoints %x", got)
	tip, err := element.ChainOutpointUniverse(ctx, c.Blocks, -1)
	require.NoError(t, err)
	got = forms(tip, k1.Hash160)
	require.Len(t, got, 1, "at the tip, k1's outpoints %x (one was spent)", got)
	require.Equal(t, string(element.OutPointForm(op1)), got[0], "at the tip, k1's outpoints %x (one was spent)", got)
	got = forms(tip, k2.Hash160)
	require.Len(t, got, 1, "k2's outpoints %x", got)
	for _, cand := range tip {
		require.NotEqual(t, len(k2.PubKey), len(cand.Forms[0]), "a bare-key output made a candidate %x", cand.Forms[0])
	}
	f := testkit.FilterOf(t, 100, 5, 1, nil)
	f.AddOutPoint(&op1)
	require.True(t, f.Matches(element.OutPointForm(op1)), "OutPointForm differs from what AddOutPoint inserts")
	require.Contains(t, element.MainnetChainTxData.Describe(), "1235299397", "mainnet universe: %s", element.MainnetChainTxData.Describe())
}
