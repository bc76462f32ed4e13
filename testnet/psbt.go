package testnet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// ErrNoSigningKey is returned by SignPSBT when an input names no key the
// keyring holds.
var ErrNoSigningKey = errors.New("testnet: no key of the keyring signs this input")

// signingRoot is an extended private key a PSBT derivation can name: by
// its master's fingerprint and its path from the master, or by its own
// fingerprint and the empty path (a key imported without origin).
type signingRoot struct {
	fingerprint [4]byte
	path        []uint32
	key         *hdkeychain.ExtendedKey
}

// fingerprintOf is a key's BIP32 fingerprint: the first four bytes of
// the HASH160 of its compressed public key, in order.
func fingerprintOf(k *hdkeychain.ExtendedKey) ([4]byte, error) {
	pub, err := k.ECPubKey()
	if err != nil {
		return [4]byte{}, fmt.Errorf("testnet: fingerprint: %w", err)
	}
	return [4]byte(btcutil.Hash160(pub.SerializeCompressed())[:4]), nil
}

// psbtFingerprintBytes returns the four bytes a PSBT derivation's
// fingerprint is serialized as (BIP174): btcd's psbt package holds
// MasterKeyFingerprint as a number it writes little-endian.
func psbtFingerprintBytes(fp uint32) [4]byte {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], fp)
	return b
}

// signingRoots lists the keys the keyring signs with: each account of
// the seed's master (44, 49, 84, 86) and each cosigner's multisig
// account, under both names.
func (k *Keyring) signingRoots() ([]signingRoot, error) {
	master, err := hdkeychain.NewMaster(k.seed, k.params)
	if err != nil {
		return nil, fmt.Errorf("testnet: keyring master key: %w", err)
	}
	mfp, err := fingerprintOf(master)
	if err != nil {
		return nil, err
	}
	var out []signingRoot
	h := uint32(hdkeychain.HardenedKeyStart)
	for _, purpose := range keyringPurposes {
		acct := k.accounts[purpose]
		own, err := fingerprintOf(acct)
		if err != nil {
			return nil, err
		}
		out = append(out,
			signingRoot{mfp, []uint32{h + purpose, h + k.params.HDCoinType, h}, acct},
			signingRoot{own, nil, acct})
	}
	for _, c := range k.cosigners {
		own, err := fingerprintOf(c.account)
		if err != nil {
			return nil, err
		}
		out = append(out,
			signingRoot{c.fingerprint, multisigAccountPath(k.params), c.account},
			signingRoot{own, nil, c.account})
	}
	return out, nil
}

// keyFor returns the private key a derivation names, if the keyring
// holds it: fp is the derivation's MasterKeyFingerprint as psbt decoded
// it, compared by the bytes BIP174 puts on the wire.
func keyFor(roots []signingRoot, fp uint32, path []uint32) (*btcec.PrivateKey, bool) {
	wire := psbtFingerprintBytes(fp)
	for _, r := range roots {
		if r.fingerprint != wire || len(path) < len(r.path) || !equalPath(path[:len(r.path)], r.path) {
			continue
		}
		key := r.key
		for _, c := range path[len(r.path):] {
			var err error
			if key, err = key.Derive(c); err != nil {
				return nil, false
			}
		}
		priv, err := key.ECPrivKey()
		if err != nil {
			return nil, false
		}
		return priv, true
	}
	return nil, false
}

// equalPath reports whether two paths are the same.
func equalPath(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// SignPSBT signs every input of p as a hardware signer holding the
// keyring's seeds would: it finds each input's keys by the BIP32
// derivations the PSBT names (master fingerprint and path, or a key's own
// fingerprint for one imported without origin), checks that each key's
// public key is the one named, signs with the output the input spends
// (its witness UTXO, or its non-witness UTXO, whose txid must match the
// outpoint) and adds the signatures to the PSBT (BIP174 partial
// signatures; for taproot the BIP341 key-path signature with the
// BIP86-tweaked key). A multisig input gets as many signatures as its
// threshold. It does not finalize: psbt.MaybeFinalizeAll does.
func (k *Keyring) SignPSBT(p *psbt.Packet) error {
	roots, err := k.signingRoots()
	if err != nil {
		return err
	}
	tx := p.UnsignedTx
	fetcher := txscript.NewMultiPrevOutFetcher(nil)
	prevs := make([]*wire.TxOut, len(tx.TxIn))
	for i, in := range tx.TxIn {
		pin := &p.Inputs[i]
		switch {
		case pin.NonWitnessUtxo != nil:
			if pin.NonWitnessUtxo.TxHash() != in.PreviousOutPoint.Hash || int(in.PreviousOutPoint.Index) >= len(pin.NonWitnessUtxo.TxOut) {
				return fmt.Errorf("testnet: input %d: its previous transaction is not the one it spends", i)
			}
			prevs[i] = pin.NonWitnessUtxo.TxOut[in.PreviousOutPoint.Index]
			if pin.WitnessUtxo != nil && (pin.WitnessUtxo.Value != prevs[i].Value || !bytes.Equal(pin.WitnessUtxo.PkScript, prevs[i].PkScript)) {
				return fmt.Errorf("testnet: input %d: witness UTXO and previous transaction disagree", i)
			}
		case pin.WitnessUtxo != nil:
			prevs[i] = pin.WitnessUtxo
		default:
			return fmt.Errorf("testnet: input %d: no UTXO", i)
		}
		fetcher.AddPrevOut(in.PreviousOutPoint, prevs[i])
	}
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	u, err := psbt.NewUpdater(p)
	if err != nil {
		return fmt.Errorf("testnet: psbt updater: %w", err)
	}
	for i := range tx.TxIn {
		if err := signInput(u, roots, hashes, i, prevs[i]); err != nil {
			return err
		}
	}
	return nil
}

// signInput signs input i of u's PSBT.
func signInput(u *psbt.Updater, roots []signingRoot, hashes *txscript.TxSigHashes, i int, prev *wire.TxOut) error {
	pin := &u.Upsbt.Inputs[i]
	tx := u.Upsbt.UnsignedTx
	if txscript.IsPayToTaproot(prev.PkScript) {
		for _, d := range pin.TaprootBip32Derivation {
			priv, ok := keyFor(roots, d.MasterKeyFingerprint, d.Bip32Path)
			if !ok || !bytes.Equal(schnorr.SerializePubKey(priv.PubKey()), d.XOnlyPubKey) ||
				!bytes.Equal(pin.TaprootInternalKey, d.XOnlyPubKey) {
				continue
			}
			sig, err := txscript.RawTxInTaprootSignature(tx, hashes, i, prev.Value, prev.PkScript, nil, txscript.SigHashDefault, priv)
			if err != nil {
				return fmt.Errorf("testnet: sign taproot input %d: %w", i, err)
			}
			pin.TaprootKeySpendSig = sig
			return nil
		}
		return fmt.Errorf("%w: taproot input %d", ErrNoSigningKey, i)
	}
	need := 1
	script := pin.WitnessScript
	if script == nil && pin.RedeemScript != nil && !txscript.IsWitnessProgram(pin.RedeemScript) {
		script = pin.RedeemScript // legacy P2SH
	}
	if script != nil && txscript.GetScriptClass(script) == txscript.MultiSigTy {
		_, sigs, err := txscript.CalcMultiSigStats(script)
		if err != nil {
			return fmt.Errorf("testnet: input %d: %w", i, err)
		}
		need = sigs
	}
	signed := 0
	for _, d := range pin.Bip32Derivation {
		if signed == need {
			break
		}
		priv, ok := keyFor(roots, d.MasterKeyFingerprint, d.Bip32Path)
		if !ok || !bytes.Equal(priv.PubKey().SerializeCompressed(), d.PubKey) {
			continue
		}
		var (
			sig []byte
			err error
		)
		switch {
		case pin.WitnessScript != nil:
			sig, err = txscript.RawTxInWitnessSignature(tx, hashes, i, prev.Value, pin.WitnessScript, txscript.SigHashAll, priv)
		case pin.RedeemScript != nil && txscript.IsPayToWitnessPubKeyHash(pin.RedeemScript):
			sig, err = txscript.RawTxInWitnessSignature(tx, hashes, i, prev.Value, pin.RedeemScript, txscript.SigHashAll, priv)
		case txscript.IsPayToWitnessPubKeyHash(prev.PkScript):
			sig, err = txscript.RawTxInWitnessSignature(tx, hashes, i, prev.Value, prev.PkScript, txscript.SigHashAll, priv)
		case pin.RedeemScript != nil:
			sig, err = txscript.RawTxInSignature(tx, i, pin.RedeemScript, txscript.SigHashAll, priv)
		default:
			sig, err = txscript.RawTxInSignature(tx, i, prev.PkScript, txscript.SigHashAll, priv)
		}
		if err != nil {
			return fmt.Errorf("testnet: sign input %d: %w", i, err)
		}
		if _, err := u.Sign(i, sig, d.PubKey, nil, nil); err != nil {
			return fmt.Errorf("testnet: add signature to input %d: %w", i, err)
		}
		signed++
	}
	if signed < need {
		return fmt.Errorf("%w: input %d has %d of %d signatures", ErrNoSigningKey, i, signed, need)
	}
	return nil
}
