// Decoys: graph-near filter elements a BIP37 light client inserts beside
// its own so that an adversary who intersects its filters and prunes them
// with the transaction graph still cannot tell its keys from its
// counterparties'.
//
// The choice is the one `bloomwatch privacy experiment noise` measures
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
// Only data a transaction's txid commits to is read: its outputs and its
// inputs' scriptSigs. A witness is not covered by the txid (nor by the
// merkle proof a light client checks), so the peer that sent the
// transaction could have written any key into it and would then know
// which filter element is a decoy; a P2WPKH or P2TR payer's key is not
// used (its change output, in the same transaction, usually is).
//
// These functions are pure (no I/O, no state): package spv persists the
// decoys it chooses, package privacy's experiments simulate them.

package filterpolicy

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
// of txs' counterparties in transaction order: what each input's scriptSig
// reveals of the output it spends (CommittedInputPush), then each output's
// push (the hash of a hash-based script, the hash160 of each key of a
// bare-key or multisig script), skipping the wallet's own (own reports a
// push the wallet watches; nil means none) and repeats. Witnesses are
// never read. It never returns more than n, nor drops a decoy of have.
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
			add(CommittedInputPush(in))
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

// CommittedInputPush returns the element of the output an input spends
// that its scriptSig reveals, in the form that output's wallet watches:
// the hash160 of the key of a P2PKH spend (the scriptSig's last push, a
// public key), or the hash160 of the redeem script of a P2SH-wrapped
// segwit spend (a scriptSig of one push, 0x0014 or 0x0020 and a program:
// the P2SH script hash). The scriptSig is in the data the txid commits
// to; the witness is not, and is never read. Nil for anything else.
func CommittedInputPush(in *wire.TxIn) []byte {
	pushes, err := txscript.PushedData(in.SignatureScript)
	if err != nil || len(pushes) == 0 {
		return nil
	}
	last := pushes[len(pushes)-1]
	switch {
	case IsPubKey(last):
		return btcutil.Hash160(last)
	case len(pushes) == 1 && isNestedWitnessProgram(last):
		return btcutil.Hash160(last)
	}
	return nil
}

// isNestedWitnessProgram reports whether b is the redeem script of a
// P2SH-P2WPKH or P2SH-P2WSH output: version 0 and a 20- or 32-byte
// program.
func isNestedWitnessProgram(b []byte) bool {
	return (len(b) == 22 && b[0] == txscript.OP_0 && b[1] == 20) ||
		(len(b) == 34 && b[0] == txscript.OP_0 && b[1] == 32)
}

// RevealedPubKey returns the public key an input reveals when it spends a
// key-hash output: the last push of a P2PKH scriptSig or the second item
// of a P2WPKH witness; nil otherwise. The witness is not covered by the
// txid: use it only on transactions read from a source that validated
// them (a full node's chain), never to choose decoys (CommittedInputPush).
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
