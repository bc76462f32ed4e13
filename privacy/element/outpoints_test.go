package element_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
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
	if err != nil {
		t.Fatal(err)
	}
	if got := forms(at0, k1.Hash160); len(got) != 2 || got[0] != string(element.OutPointForm(op0)) || got[1] != string(element.OutPointForm(op1)) {
		t.Errorf("at 0, k1's outpoints %x", got)
	}
	tip, err := element.ChainOutpointUniverse(ctx, c.Blocks, -1)
	if err != nil {
		t.Fatal(err)
	}
	if got := forms(tip, k1.Hash160); len(got) != 1 || got[0] != string(element.OutPointForm(op1)) {
		t.Errorf("at the tip, k1's outpoints %x (one was spent)", got)
	}
	if got := forms(tip, k2.Hash160); len(got) != 1 {
		t.Errorf("k2's outpoints %x", got)
	}
	for _, cand := range tip {
		if len(cand.Forms[0]) == len(k2.PubKey) {
			t.Errorf("a bare-key output made a candidate %x", cand.Forms[0])
		}
	}
	f := testkit.FilterOf(t, 100, 5, 1, nil)
	f.AddOutPoint(&op1)
	if !f.Matches(element.OutPointForm(op1)) {
		t.Error("OutPointForm differs from what AddOutPoint inserts")
	}
	if !strings.Contains(element.MainnetChainTxData.Describe(), "1235299397") {
		t.Errorf("mainnet universe: %s", element.MainnetChainTxData.Describe())
	}
}
