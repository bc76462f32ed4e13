package main

import (
	"bytes"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/bloomwatch/bloomwatch/watch"
)

// spendFixture is a regtest wallet of the keyring's BIP84 account holding
// one confirmed coin of 1,000,000 sat, and transactions that spend it.
type spendFixture struct {
	dir string
	// signed spends the coin, signed by the keyring; forged is it with
	// one signature byte changed; foreign spends an outpoint the wallet
	// never had, signed; unsigned is the PSBT of signed before signing
	// (base64).
	signed, forged, foreign, unsigned string
}

// txHex serializes tx.
func txHex(t *testing.T, tx *wire.MsgTx) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, tx.Serialize(&b))
	return hex.EncodeToString(b.Bytes())
}

// newSpendFixture builds the fixture under root.
func newSpendFixture(t *testing.T, root string) spendFixture {
	t.Helper()
	params := &chaincfg.RegressionNetParams
	key, err := testnet.NewKeyring(testnet.DemoSeed, params)
	require.NoError(t, err)
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	fx := spendFixture{dir: filepath.Join(root, "funded")}
	w, err := wallet.Create(fx.dir, wallet.CreateConfig{Network: "regtest", Xpubs: []string{vpub}})
	require.NoError(t, err)
	defer w.Close()
	script, err := key.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	require.NoError(t, err)
	pay := wire.NewMsgTx(2)
	pay.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{9}}, nil, nil))
	pay.AddTxOut(wire.NewTxOut(1_000_000, script))
	cb := wire.NewMsgTx(1)
	cb.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), []byte{0x51, 0x51}, nil))
	cb.AddTxOut(wire.NewTxOut(50_000, script[:0:0]))
	root1 := blockchain.CalcMerkleRoot([]*btcutil.Tx{btcutil.NewTx(cb), btcutil.NewTx(pay)}, false)
	hdr := wire.BlockHeader{Version: 4, PrevBlock: chainhash.Hash{1}, MerkleRoot: root1, Timestamp: time.Unix(1_700_000_000, 0), Bits: 0x207fffff}
	fb := &watch.FilteredBlock{Height: 1, Hash: hdr.BlockHash(), Header: hdr, TotalTxs: 2,
		Txs: []*wire.MsgTx{pay}, TxIndexes: []uint32{1}}
	_, err = w.ApplyBlock(fb)
	require.NoError(t, err)
	to, err := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), params)
	require.NoError(t, err)
	res, err := w.CreatePSBT(wallet.PSBTRequest{Outputs: []wallet.PSBTOutput{{Address: to.EncodeAddress(), Amount: 300_000}}, FeeRate: 2})
	require.NoError(t, err)
	fx.unsigned, err = res.Packet.B64Encode()
	require.NoError(t, err)
	require.NoError(t, key.SignPSBT(res.Packet))
	require.NoError(t, psbt.MaybeFinalizeAll(res.Packet))
	tx, err := psbt.Extract(res.Packet)
	require.NoError(t, err)
	fx.signed = txHex(t, tx)
	forged := tx.Copy()
	forged.TxIn[0].Witness[0][8] ^= 1
	fx.forged = txHex(t, forged)
	// A spend of an outpoint the wallet never had, validly shaped.
	other := tx.Copy()
	other.TxIn[0].PreviousOutPoint = wire.OutPoint{Hash: chainhash.Hash{0x77}, Index: 3}
	fx.foreign = txHex(t, other)
	return fx
}
