package filterpolicy

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// key returns a deterministic public key and its hash160.
func key(t *testing.T, b byte) ([]byte, []byte) {
	t.Helper()
	var seed [32]byte
	seed[31] = b
	_, pub := btcec.PrivKeyFromBytes(seed[:])
	pk := pub.SerializeCompressed()
	return pk, btcutil.Hash160(pk)
}

// p2pkh returns the P2PKH script of hash.
func p2pkh(t *testing.T, hash []byte) []byte {
	t.Helper()
	s, err := txscript.NewScriptBuilder().AddOp(txscript.OP_DUP).AddOp(txscript.OP_HASH160).
		AddData(hash).AddOp(txscript.OP_EQUALVERIFY).AddOp(txscript.OP_CHECKSIG).Script()
	require.NoError(t, err)
	return s
}

// TestGraphNear checks the choice of decoys: the counterparties' keys and
// outputs, never the wallet's, no repeats, the earlier decoys kept first,
// at most n; a P2PKH payer's key and a nested-segwit payer's script hash
// (scriptSig: committed by the txid) are used, a P2WPKH witness's key
// never (a peer can rewrite it without changing the txid).
func TestGraphNear(t *testing.T) {
	payerPK, payerHash := key(t, 1)
	_, changeHash := key(t, 2)
	_, mine := key(t, 3)
	_, old := key(t, 4)
	wpkPK, wpkHash := key(t, 5)
	_, nestedKeyHash := key(t, 6)
	sig := bytes.Repeat([]byte{0x30}, 71)
	spend, err := txscript.NewScriptBuilder().AddData(sig).AddData(payerPK).Script()
	require.NoError(t, err)
	redeem := append([]byte{txscript.OP_0, 20}, nestedKeyHash...)
	nested, err := txscript.NewScriptBuilder().AddData(redeem).Script()
	require.NoError(t, err)
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{1}}, spend, nil))
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{2}}, nil, wire.TxWitness{sig, wpkPK}))
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{3}}, nested, wire.TxWitness{sig, wpkPK}))
	tx.AddTxOut(wire.NewTxOut(1, p2pkh(t, mine)))
	tx.AddTxOut(wire.NewTxOut(1, p2pkh(t, changeHash)))
	tx.AddTxOut(wire.NewTxOut(0, []byte{txscript.OP_RETURN, 1, 7}))
	own := func(p []byte) bool { return bytes.Equal(p, mine) }
	got := GraphNear([]*wire.MsgTx{tx, tx}, own, [][]byte{old}, 5)
	want := [][]byte{old, payerHash, btcutil.Hash160(redeem), changeHash}
	for _, d := range got {
		require.False(t, bytes.Equal(d, wpkHash), "the witness's key %x was chosen: a peer can rewrite it", wpkHash)
	}
	require.Len(t, got, len(want), "%d decoys %x, want %d", len(got), got, len(want))
	for i := range want {
		require.Equal(t, want[i], got[i], "decoy %d = %x, want %x", i, got[i], want[i])
	}
	got = GraphNear([]*wire.MsgTx{tx}, own, [][]byte{old}, 2)
	require.Len(t, got, 2, "n = 2: %x", got)
	require.Equal(t, old, got[0], "n = 2: %x", got)
	got = GraphNear([]*wire.MsgTx{tx}, own, [][]byte{old}, 0)
	require.Len(t, got, 1, "n below the decoys held drops one: %x", got)
	got = GraphNear(nil, nil, nil, 3)
	require.Len(t, got, 0, "no transactions: %x", got)
}
