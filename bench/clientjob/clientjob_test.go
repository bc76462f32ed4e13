package clientjob

import (
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestWatchSetApply(t *testing.T) {
	params := &chaincfg.SimNetParams
	key, err := btcec.NewPrivateKey()
	require.NoError(t, err)
	addr, err := btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(key.PubKey().SerializeCompressed()), params)
	require.NoError(t, err)
	ws, err := NewWatchSet([]string{addr.EncodeAddress(), addr.EncodeAddress()}, params)
	require.NoError(t, err)
	require.Len(t, ws.Pushes, 1, "pushes %x", ws.Pushes)
	require.Len(t, ws.Pushes[0], 20, "pushes %x", ws.Pushes)
	pk, _ := txscript.PayToAddrScript(addr)
	other := []byte{txscript.OP_0, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}

	pay := wire.NewMsgTx(2)
	pay.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{1}}, nil, nil))
	pay.AddTxOut(wire.NewTxOut(1, other))
	pay.AddTxOut(wire.NewTxOut(2, pk))
	spend := wire.NewMsgTx(2)
	spend.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash(), Index: 1}, nil, nil))
	spend.AddTxOut(wire.NewTxOut(2, other))
	unrelated := wire.NewMsgTx(2)
	unrelated.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash(), Index: 0}, nil, nil))
	unrelated.AddTxOut(wire.NewTxOut(1, other))

	require.False(t, ws.Apply(spend), "spend before its payment matched")
	require.True(t, ws.Apply(pay), "classification wrong")
	require.True(t, ws.Apply(spend), "classification wrong")
	require.False(t, ws.Apply(unrelated), "classification wrong")
	_, err = NewWatchSet([]string{"notanaddress"}, params)
	require.Error(t, err, "bad address accepted")
}
