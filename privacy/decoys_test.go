package privacy

import (
	"bytes"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestGraphNearDecoys checks the choice of decoys: the counterparties'
// keys and outputs, never the wallet's, no repeats, the earlier decoys
// kept first, at most n.
func TestGraphNearDecoys(t *testing.T) {
	payerPK, payerHash := synth.Key(1, 1, 0)
	_, changeHash := synth.Key(1, 1, 1)
	_, mine := synth.Key(1, 2, 0)
	_, old := synth.Key(1, 3, 0)
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{1}}, synth.SpendScript(payerPK), nil))
	tx.AddTxOut(wire.NewTxOut(1, synth.P2PKH(mine)))
	tx.AddTxOut(wire.NewTxOut(1, synth.P2PKH(changeHash)))
	own := func(p []byte) bool { return bytes.Equal(p, mine) }
	got := GraphNearDecoys([]*wire.MsgTx{tx, tx}, own, [][]byte{old}, 5)
	want := [][]byte{old, payerHash, changeHash}
	if len(got) != len(want) {
		t.Fatalf("%d decoys, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("decoy %d = %x, want %x", i, got[i], want[i])
		}
	}
	if got := GraphNearDecoys([]*wire.MsgTx{tx}, own, [][]byte{old}, 2); len(got) != 2 || !bytes.Equal(got[0], old) {
		t.Errorf("n = 2: %x", got)
	}
	if got := GraphNearDecoys([]*wire.MsgTx{tx}, own, [][]byte{old}, 0); len(got) != 1 {
		t.Errorf("n below the decoys held drops one: %x", got)
	}
}
