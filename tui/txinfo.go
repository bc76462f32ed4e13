package tui

import (
	"encoding/binary"
	"math"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// scriptType names an output script's standard form.
func scriptType(script []byte) string {
	switch txscript.GetScriptClass(script) {
	case txscript.PubKeyHashTy:
		return "p2pkh"
	case txscript.ScriptHashTy:
		return "p2sh"
	case txscript.WitnessV0PubKeyHashTy:
		return "p2wpkh"
	case txscript.WitnessV0ScriptHashTy:
		return "p2wsh"
	case txscript.WitnessV1TaprootTy:
		return "p2tr"
	case txscript.PubKeyTy:
		return "p2pk"
	case txscript.MultiSigTy:
		return "multisig"
	case txscript.NullDataTy:
		return "op_return"
	case txscript.WitnessUnknownTy:
		return "witness"
	}
	return "nonstandard"
}

// outputAddress returns the address an output script pays on the network
// of params, or "" when it has none (or more than one).
func outputAddress(script []byte, params *chaincfg.Params) string {
	if params == nil {
		return ""
	}
	_, addrs, _, err := txscript.ExtractPkScriptAddrs(script, params)
	if err != nil || len(addrs) != 1 {
		return ""
	}
	return addrs[0].EncodeAddress()
}

// outPointSize is a serialized outpoint: the txid, then the index (LE).
const outPointSize = chainhash.HashSize + 4

// elementOutPoint reads a filter element that is a serialized outpoint.
func elementOutPoint(el []byte) (wire.OutPoint, bool) {
	if len(el) != outPointSize {
		return wire.OutPoint{}, false
	}
	var op wire.OutPoint
	copy(op.Hash[:], el[:chainhash.HashSize])
	op.Index = binary.LittleEndian.Uint32(el[chainhash.HashSize:])
	return op, true
}

// elementsOffered counts what a BIP37 filter tests in tx: its txid, every
// non-empty data push of each output script, and per input its outpoint
// and the non-empty pushes of its scriptSig (witness data is not tested).
func elementsOffered(tx *wire.MsgTx) int {
	n := 1
	pushes := func(script []byte) {
		tok := txscript.MakeScriptTokenizer(0, script)
		for tok.Next() {
			if len(tok.Data()) > 0 {
				n++
			}
		}
	}
	for _, out := range tx.TxOut {
		pushes(out.PkScript)
	}
	for _, in := range tx.TxIn {
		n++
		pushes(in.SignatureScript)
	}
	return n
}

// chanceAny returns 1 - (1-p)^n: the chance that at least one of n
// independent tests with probability p succeeds.
func chanceAny(p float64, n int) float64 {
	if p <= 0 || n <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	return -math.Expm1(float64(n) * math.Log1p(-p))
}

// vsize returns a transaction's virtual size (BIP141 weight / 4, up).
func vsize(tx *wire.MsgTx) int {
	weight := tx.SerializeSizeStripped()*3 + tx.SerializeSize()
	return (weight + 3) / 4
}

// isCoinbaseIn reports an input spending the null outpoint.
func isCoinbaseIn(in *wire.TxIn) bool {
	return in.PreviousOutPoint.Index == math.MaxUint32 && in.PreviousOutPoint.Hash == (chainhash.Hash{})
}
