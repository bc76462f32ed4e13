// Package decoy chooses graph-near decoys: filter elements a BIP37 light
// client inserts beside its own so that an adversary who intersects its
// filters and prunes them with the transaction graph still cannot tell its
// keys from its counterparties'.
//
// The choice is the one `bloomwatch privacy experiment noise` measured
// (docs/RESEARCH.md, "Noise"): from the wallet's own transactions, the
// keys that paid it (revealed by their inputs) and the other outputs (the
// payer's change, the payees). The transaction graph links them to the
// wallet's keys as closely as the wallet's keys are linked to each other,
// so graph pruning keeps them; persisted in every later filter, the
// intersection of filters keeps them too.
//
// They hide which side of each transaction is the wallet, not which
// transactions involve it: every transaction linking a decoy to the
// wallet holds both. One-sided noise gives no differential-privacy
// guarantee.
//
// The package is pure (no I/O, no state): package spv persists the
// decoys it chooses, package privacy's experiments simulate them.
package decoy

import (
	"bytes"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Public key encodings a revealed key or a bare-key output may use.
const (
	compressedPubKeySize   = 33
	uncompressedPubKeySize = 65
	compressedEven         = 0x02
	uncompressedPrefix     = 0x04
	p2wpkhWitnessItems     = 2
)

// GraphNear returns up to n decoy elements: have (the decoys chosen
// before, kept first and in order, so they persist), then the data pushes
// of txs' counterparties in transaction order: each input's revealed key
// as its hash160, then each output's push (the hash of a hash-based
// script, the hash160 of each key of a bare-key or multisig script),
// skipping the wallet's own (own reports a push the wallet watches; nil
// means none) and repeats. It never returns more than n, nor drops a
// decoy of have.
func GraphNear(txs []*wire.MsgTx, own func(push []byte) bool, have [][]byte, n int) [][]byte {
	out := append([][]byte(nil), have...)
	seen := make(map[string]struct{}, len(out))
	for _, d := range out {
		seen[string(d)] = struct{}{}
	}
	add := func(p []byte) {
		if len(out) >= n || len(p) == 0 || (own != nil && own(p)) {
			return
		}
		if _, dup := seen[string(p)]; dup {
			return
		}
		seen[string(p)] = struct{}{}
		out = append(out, bytes.Clone(p))
	}
	for _, tx := range txs {
		for _, in := range tx.TxIn {
			if pk := RevealedPubKey(in); pk != nil {
				add(btcutil.Hash160(pk))
			}
		}
		for _, o := range tx.TxOut {
			for _, p := range OutputPushes(o.PkScript) {
				add(p)
			}
		}
	}
	return out
}

// OutputPushes returns the elements an output script pays, in the form a
// wallet watches: the data push of a hash-based script (P2PKH, P2WPKH,
// P2SH, P2WSH, P2TR) and the hash160 of each key of a bare-key or
// multisig script. Other scripts pay no one.
func OutputPushes(pkScript []byte) [][]byte {
	switch txscript.GetScriptClass(pkScript) {
	case txscript.PubKeyHashTy, txscript.WitnessV0PubKeyHashTy, txscript.ScriptHashTy,
		txscript.WitnessV0ScriptHashTy, txscript.WitnessV1TaprootTy:
		pushes, err := txscript.PushedData(pkScript)
		if err != nil || len(pushes) == 0 {
			return nil
		}
		return [][]byte{pushes[len(pushes)-1]}
	case txscript.PubKeyTy, txscript.MultiSigTy:
		pushes, err := txscript.PushedData(pkScript)
		if err != nil {
			return nil
		}
		var out [][]byte
		for _, p := range pushes {
			if IsPubKey(p) {
				out = append(out, btcutil.Hash160(p))
			}
		}
		return out
	}
	return nil
}

// RevealedPubKey returns the public key an input reveals when it spends a
// key-hash output: the last push of a P2PKH scriptSig or the second item
// of a P2WPKH witness; nil otherwise.
func RevealedPubKey(in *wire.TxIn) []byte {
	if len(in.Witness) == p2wpkhWitnessItems && IsPubKey(in.Witness[1]) {
		return in.Witness[1]
	}
	pushes, err := txscript.PushedData(in.SignatureScript)
	if err != nil || len(pushes) == 0 {
		return nil
	}
	if last := pushes[len(pushes)-1]; IsPubKey(last) {
		return last
	}
	return nil
}

// IsPubKey reports whether b has the form of a serialized public key
// (33 bytes starting 02 or 03, or 65 bytes starting 04).
func IsPubKey(b []byte) bool {
	switch len(b) {
	case compressedPubKeySize:
		return b[0] == compressedEven || b[0] == compressedEven|1
	case uncompressedPubKeySize:
		return b[0] == uncompressedPrefix
	}
	return false
}
