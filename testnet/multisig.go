package testnet

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// PurposeMultisig selects the keyring's 2-of-3 multisig wallet: P2WSH
// outputs of wsh(sortedmulti(2, ...)) over three cosigners, each with a
// seed of its own and the BIP48 account m/48'/coin'/0'/2' (script type
// 2', native segwit). KeyPath.Purpose, ChainSpec.Purpose, Address,
// PkScript and Lookup take it as they take 44, 49, 84 and 86; PrivKey and
// Xpub do not (there is no single key): MultisigDescriptor gives the
// watch-only wallet its descriptor and MultisigSigners the keys.
const PurposeMultisig uint32 = 48

// Multisig parameters of the keyring's multisig wallet.
const (
	// MultisigThreshold of MultisigCosigners signatures spend an output.
	MultisigThreshold = 2
	MultisigCosigners = 3
	// multisigScriptType is BIP48's script type of P2WSH.
	multisigScriptType = 2
)

// cosigner is one key holder of the multisig wallet.
type cosigner struct {
	// fingerprint is its master key's (BIP32: the first 4 bytes of the
	// HASH160 of the master public key).
	fingerprint [4]byte
	account     *hdkeychain.ExtendedKey // private, m/48'/coin'/0'/2'
}

// cosignerSeed returns cosigner i's seed: the keyring's own seed for the
// first, SHA-256 of it and the index for the others.
func cosignerSeed(seed []byte, i int) []byte {
	if i == 0 {
		return seed
	}
	s := sha256.Sum256(append(append([]byte(nil), seed...), []byte(fmt.Sprintf("/cosigner %d", i))...))
	return s[:]
}

// newCosigners derives the multisig wallet's three cosigners of seed.
func newCosigners(seed []byte, params *chaincfg.Params) ([]cosigner, error) {
	out := make([]cosigner, MultisigCosigners)
	for i := range out {
		master, err := hdkeychain.NewMaster(cosignerSeed(seed, i), params)
		if err != nil {
			return nil, fmt.Errorf("testnet: cosigner %d master key: %w", i, err)
		}
		pub, err := master.ECPubKey()
		if err != nil {
			return nil, fmt.Errorf("testnet: cosigner %d: %w", i, err)
		}
		out[i].fingerprint = [4]byte(btcutil.Hash160(pub.SerializeCompressed())[:4])
		key := master
		for _, c := range multisigAccountPath(params) {
			if key, err = key.Derive(c); err != nil {
				return nil, fmt.Errorf("testnet: cosigner %d account: %w", i, err)
			}
		}
		out[i].account = key
	}
	return out, nil
}

// multisigAccountPath is m/48'/coin'/0'/2'.
func multisigAccountPath(params *chaincfg.Params) []uint32 {
	h := uint32(hdkeychain.HardenedKeyStart)
	return []uint32{h + PurposeMultisig, h + params.HDCoinType, h, h + multisigScriptType}
}

// MultisigDescriptor returns the multisig wallet as an output descriptor,
// as Sparrow or Specter export it: wsh(sortedmulti(2, ...)) of the three
// account keys, each with its key origin (master fingerprint and
// 48h/coin h/0h/2h) and /<0;1>/* (receive and change branches).
func (k *Keyring) MultisigDescriptor() (string, error) {
	parts := make([]string, len(k.cosigners))
	for i, c := range k.cosigners {
		pub, err := c.account.Neuter()
		if err != nil {
			return "", fmt.Errorf("testnet: neuter: %w", err)
		}
		parts[i] = fmt.Sprintf("[%x/%dh/%dh/0h/%dh]%s/<0;1>/*", c.fingerprint, PurposeMultisig, k.params.HDCoinType, multisigScriptType, pub)
	}
	return "wsh(sortedmulti(" + fmt.Sprint(MultisigThreshold) + "," + strings.Join(parts, ",") + "))", nil
}

// MultisigSigner is one cosigner's key of one multisig address.
type MultisigSigner struct {
	// Fingerprint is the cosigner's master key fingerprint and Path the
	// key's full derivation path (m/48'/coin'/0'/2'/branch/index), as a
	// PSBT's BIP32 derivation names it.
	Fingerprint [4]byte
	Path        []uint32
	Key         *btcec.PrivateKey
}

// MultisigSigners returns every cosigner's private key of the multisig
// address at branch/index and its witness script (the sorted 2-of-3).
func (k *Keyring) MultisigSigners(branch, index uint32) ([]MultisigSigner, []byte, error) {
	out := make([]MultisigSigner, len(k.cosigners))
	for i, c := range k.cosigners {
		key, err := k.cosignerBranch(i, branch)
		if err != nil {
			return nil, nil, err
		}
		child, err := key.Derive(index)
		if err != nil {
			return nil, nil, fmt.Errorf("testnet: cosigner %d index %d: %w", i, index, err)
		}
		priv, err := child.ECPrivKey()
		if err != nil {
			return nil, nil, fmt.Errorf("testnet: cosigner %d: %w", i, err)
		}
		path := append(multisigAccountPath(k.params), branch, index)
		out[i] = MultisigSigner{Fingerprint: c.fingerprint, Path: path, Key: priv}
	}
	sort.Slice(out, func(i, j int) bool {
		return bytes.Compare(out[i].Key.PubKey().SerializeCompressed(), out[j].Key.PubKey().SerializeCompressed()) < 0
	})
	ws, err := multisigScript(out)
	return out, ws, err
}

// multisigScript returns OP_2 <keys> OP_3 OP_CHECKMULTISIG of signers, in
// their order.
func multisigScript(signers []MultisigSigner) ([]byte, error) {
	b := txscript.NewScriptBuilder().AddInt64(MultisigThreshold)
	for _, s := range signers {
		b.AddData(s.Key.PubKey().SerializeCompressed())
	}
	ws, err := b.AddInt64(int64(len(signers))).AddOp(txscript.OP_CHECKMULTISIG).Script()
	if err != nil {
		return nil, fmt.Errorf("testnet: multisig script: %w", err)
	}
	return ws, nil
}

// cosignerBranch returns the (cached) private key of cosigner i's branch.
func (k *Keyring) cosignerBranch(i int, branch uint32) (*hdkeychain.ExtendedKey, error) {
	id := [2]uint32{uint32(i), branch}
	k.mu.Lock()
	br, ok := k.msBranches[id]
	k.mu.Unlock()
	if ok {
		return br, nil
	}
	br, err := k.cosigners[i].account.Derive(branch)
	if err != nil {
		return nil, fmt.Errorf("testnet: cosigner %d branch %d: %w", i, branch, err)
	}
	k.mu.Lock()
	k.msBranches[id] = br
	k.mu.Unlock()
	return br, nil
}

// multisigAddress returns the P2WSH address at branch/index.
func (k *Keyring) multisigAddress(branch, index uint32) (btcutil.Address, error) {
	_, ws, err := k.MultisigSigners(branch, index)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(ws)
	addr, err := btcutil.NewAddressWitnessScriptHash(sum[:], k.params)
	if err != nil {
		return nil, fmt.Errorf("testnet: p2wsh address: %w", err)
	}
	return addr, nil
}

// prevOutFor returns what signTx needs to spend the output op (value,
// script) that pays the keyring address at path: its key, or for a
// multisig address the first MultisigThreshold cosigners' keys in script
// order and the witness script.
func (k *Keyring) prevOutFor(op wire.OutPoint, value int64, path KeyPath) (prevOut, error) {
	script, err := k.PkScript(path.Purpose, path.Branch, path.Index)
	if err != nil {
		return prevOut{}, err
	}
	in := prevOut{op: op, value: value, script: script}
	if path.Purpose != PurposeMultisig {
		in.key, err = k.PrivKey(path.Purpose, path.Branch, path.Index)
		return in, err
	}
	signers, ws, err := k.MultisigSigners(path.Branch, path.Index)
	if err != nil {
		return prevOut{}, err
	}
	in.witnessScript = ws
	for _, s := range signers[:MultisigThreshold] {
		in.keys = append(in.keys, s.Key)
	}
	return in, nil
}
