package testnet

import (
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// prevOut is an output being spent: its value, script and signing key,
// or for a P2WSH multisig output the signing keys in script order and
// the witness script.
type prevOut struct {
	op     wire.OutPoint
	value  int64
	script []byte
	key    *btcec.PrivateKey

	keys          []*btcec.PrivateKey
	witnessScript []byte
}

// signTx signs every input of tx; ins[i] describes input i. It supports
// P2PKH, P2WPKH, P2SH-P2WPKH and BIP86 P2TR outputs of the keys given
// (P2TR by the key path: a BIP341 Schnorr signature with the key tweaked
// by its BIP86 commitment, SIGHASH_DEFAULT), and P2WSH multisig outputs
// (one BIP143 signature per key given, in script order).
func signTx(tx *wire.MsgTx, ins []prevOut) error {
	fetcher := txscript.NewMultiPrevOutFetcher(nil)
	for _, in := range ins {
		fetcher.AddPrevOut(in.op, wire.NewTxOut(in.value, in.script))
	}
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	for i, in := range ins {
		if txscript.GetScriptClass(in.script) == txscript.WitnessV0ScriptHashTy {
			wit := wire.TxWitness{nil}
			for _, key := range in.keys {
				sig, err := txscript.RawTxInWitnessSignature(tx, hashes, i, in.value, in.witnessScript, txscript.SigHashAll, key)
				if err != nil {
					return fmt.Errorf("testnet: sign p2wsh input %d: %w", i, err)
				}
				wit = append(wit, sig)
			}
			tx.TxIn[i].Witness = append(wit, in.witnessScript)
			continue
		}
		pub := in.key.PubKey().SerializeCompressed()
		hash := btcutil.Hash160(pub)
		switch txscript.GetScriptClass(in.script) {
		case txscript.PubKeyHashTy:
			sig, err := txscript.SignatureScript(tx, i, in.script, txscript.SigHashAll, in.key, true)
			if err != nil {
				return fmt.Errorf("testnet: sign p2pkh input %d: %w", i, err)
			}
			tx.TxIn[i].SignatureScript = sig
		case txscript.WitnessV0PubKeyHashTy:
			wit, err := txscript.WitnessSignature(tx, hashes, i, in.value, in.script, txscript.SigHashAll, in.key, true)
			if err != nil {
				return fmt.Errorf("testnet: sign p2wpkh input %d: %w", i, err)
			}
			tx.TxIn[i].Witness = wit
		case txscript.ScriptHashTy:
			redeem, err := p2wpkhScript(hash)
			if err != nil {
				return fmt.Errorf("testnet: redeem script: %w", err)
			}
			wit, err := txscript.WitnessSignature(tx, hashes, i, in.value, redeem, txscript.SigHashAll, in.key, true)
			if err != nil {
				return fmt.Errorf("testnet: sign p2sh-p2wpkh input %d: %w", i, err)
			}
			push, err := txscript.NewScriptBuilder().AddData(redeem).Script()
			if err != nil {
				return fmt.Errorf("testnet: redeem push: %w", err)
			}
			tx.TxIn[i].SignatureScript = push
			tx.TxIn[i].Witness = wit
		case txscript.WitnessV1TaprootTy:
			wit, err := txscript.TaprootWitnessSignature(tx, hashes, i, in.value, in.script, txscript.SigHashDefault, in.key)
			if err != nil {
				return fmt.Errorf("testnet: sign p2tr input %d: %w", i, err)
			}
			tx.TxIn[i].Witness = wit
		default:
			return fmt.Errorf("testnet: input %d: unsupported script %x: %w", i, in.script, ErrUnknownKey)
		}
	}
	return nil
}

// vsize returns a transaction's virtual size.
func vsize(tx *wire.MsgTx) int64 {
	base := int64(tx.SerializeSizeStripped())
	total := int64(tx.SerializeSize())
	return (base*3 + total + 3) / 4
}

// estimateVsize returns an upper bound on the vsize of a transaction
// spending nin inputs of the given scripts' kinds to outs (signatures at
// their maximum length).
func estimateVsize(inScripts [][]byte, outs []*wire.TxOut) int64 {
	weight := int64(4 * (4 + 4 + 1 + 1)) // version, locktime, in/out counts
	weight += 2                          // segwit marker and flag
	for _, s := range inScripts {
		switch txscript.GetScriptClass(s) {
		case txscript.PubKeyHashTy:
			weight += 4 * (32 + 4 + 4 + 1 + 1 + 73 + 1 + 33)
			weight++ // empty witness
		case txscript.ScriptHashTy: // P2SH-P2WPKH
			weight += 4 * (32 + 4 + 4 + 1 + 23)
			weight += 1 + 1 + 73 + 1 + 33
		case txscript.WitnessV1TaprootTy: // key path, SIGHASH_DEFAULT
			weight += 4 * (32 + 4 + 4 + 1)
			weight += 1 + 1 + 64
		case txscript.WitnessV0ScriptHashTy: // the 2-of-3 multisig
			weight += 4 * (32 + 4 + 4 + 1)
			weight += 1 + 1 + MultisigThreshold*(1+73) + 1 + 1 + MultisigCosigners*34 + 2
		default: // P2WPKH
			weight += 4 * (32 + 4 + 4 + 1)
			weight += 1 + 1 + 73 + 1 + 33
		}
	}
	for _, o := range outs {
		weight += 4 * int64(8+wire.VarIntSerializeSize(uint64(len(o.PkScript)))+len(o.PkScript))
	}
	return (weight + 3) / 4
}
