package wallet

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"

	"github.com/bloomwatch/bloomwatch/wallet/descriptor"
)

// What a signer needs to know about a watched script, for a PSBT's input
// (to sign it) or output (to recognize it as change).
//
// BIP32 derivations name each key by its master key's fingerprint and
// its full path. The wallet knows them when the key came with a key
// origin ([fingerprint/84h/1h/0h]tpub...): a descriptor's origin, which
// waddrmgr also keeps as the account's master key fingerprint. A key
// without one (an --xpub, a descriptor without origin) is named as
// Bitcoin Core names it: by its own fingerprint and the path from it
// (branch/index), which a signer holding that extended key recognizes; a
// hardware signer that only knows its master key does not, so give
// descriptors with their key origins. A key at depth 1 (Electrum's m/0')
// carries its origin: its parent is the master.

// A fingerprint is the first four bytes of the HASH160 of a key's
// compressed public key (BIP32). The wallet holds it as the big-endian
// number of those bytes, the order in which BIP32 computes them and a
// descriptor's key origin prints them ("d6a46e01"), and which waddrmgr
// stores. BIP174 writes the same four bytes in that order into a
// derivation's value; btcd's psbt package writes MasterKeyFingerprint
// little-endian, so psbtFingerprint turns one into the other at the one
// place the wallet hands a fingerprint to psbt.

// psbtFingerprint returns fp as psbt.Bip32Derivation and
// psbt.TaprootBip32Derivation take it: the number whose little-endian
// serialization is fp's four bytes in BIP32 order.
func psbtFingerprint(fp uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], fp)
	return binary.LittleEndian.Uint32(b[:])
}

// fingerprintOf returns the fingerprint of pub (see psbtFingerprint for
// its byte order).
func fingerprintOf(pub *btcec.PublicKey) uint32 {
	return binary.BigEndian.Uint32(btcutil.Hash160(pub.SerializeCompressed())[:4])
}

// scriptSigning is the signing metadata of one watched script.
type scriptSigning struct {
	redeem  []byte
	witness []byte
	derivs  []*psbt.Bip32Derivation
	// taproot: the x-only internal key and its derivation (BIP371).
	internalKey []byte
	tapDerivs   []*psbt.TaprootBip32Derivation
}

// descriptorSigning returns the signing metadata of descriptor d's script
// at path p and child index.
func descriptorSigning(d *watchedDesc, p int, index uint32, params *chaincfg.Params) (*scriptSigning, error) {
	s := &scriptSigning{}
	if d.script != nil {
		return s, nil // addr() or raw()
	}
	_, n := d.Threshold()
	if n > 0 {
		ms, err := d.ScriptAt(p, index, params)
		if err != nil {
			return nil, err
		}
		s.redeem, s.witness = ms.Redeem, ms.Witness
	}
	ders, err := d.Derivations(p, index)
	if err != nil {
		return nil, err
	}
	derivs := make([]*psbt.Bip32Derivation, len(ders))
	for i, der := range ders {
		derivs[i] = &psbt.Bip32Derivation{PubKey: der.PubKey, MasterKeyFingerprint: psbtFingerprint(der.Fingerprint), Bip32Path: der.Path}
	}
	if n == 0 {
		if err := s.setSingleKey(d.Kind(), derivs[0]); err != nil {
			return nil, err
		}
		return s, nil
	}
	s.derivs = derivs
	sortDerivations(s.derivs)
	return s, nil
}

// setSingleKey fills the metadata of a single-key script of kind from the
// key's derivation.
func (s *scriptSigning) setSingleKey(kind Kind, der *psbt.Bip32Derivation) error {
	switch kind {
	case KindP2TR:
		pub, err := btcec.ParsePubKey(der.PubKey)
		if err != nil {
			return fmt.Errorf("taproot internal key: %w", err)
		}
		x := schnorr.SerializePubKey(pub)
		s.internalKey = x
		s.tapDerivs = []*psbt.TaprootBip32Derivation{{
			XOnlyPubKey: x, MasterKeyFingerprint: der.MasterKeyFingerprint, Bip32Path: der.Bip32Path,
		}}
	case KindP2SHP2WPKH:
		redeem, err := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(btcutil.Hash160(der.PubKey)).Script()
		if err != nil {
			return err
		}
		s.redeem = redeem
		s.derivs = []*psbt.Bip32Derivation{der}
	default:
		s.derivs = []*psbt.Bip32Derivation{der}
	}
	return nil
}

// sortDerivations orders derivations by public key, as BIP174 keys its
// records.
func sortDerivations(d []*psbt.Bip32Derivation) {
	for i := 1; i < len(d); i++ {
		for j := i; j > 0 && bytes.Compare(d[j].PubKey, d[j-1].PubKey) < 0; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
}

// signingOf returns the signing metadata of the watched script pkScript,
// read in b. An imported address or raw script that no descriptor with a
// key describes has none (nil, nil): its input carries the UTXO only.
func (w *Wallet) signingOf(b readBuckets, owners *descriptorOwners, pkScript []byte) (*scriptSigning, error) {
	e := w.watch.lookup(pkScript)
	if e == nil {
		return nil, fmt.Errorf("%w: script %x is not watched", ErrCorrupt, pkScript)
	}
	ref := e.ref
	switch {
	case ref.msig:
		d, err := w.msigDescriptor(b.own, ref.account)
		if err != nil {
			return nil, err
		}
		b := w.watch.msig[branchKey{msigScope, ref.account, ref.branch}]
		if b == nil {
			return nil, fmt.Errorf("%w: multisig descriptor %d has no branch %d", ErrCorrupt, ref.account, ref.branch)
		}
		return descriptorSigning(d, b.path, ref.index, w.net.params)
	case ref.imported:
		return w.importedSigning(b, owners, pkScript)
	}
	return w.hdSigning(b, owners, e)
}

// importedSigning finds the non-ranged descriptor that watches an
// imported script and returns its signing metadata.
func (w *Wallet) importedSigning(b readBuckets, owners *descriptorOwners, pkScript []byte) (*scriptSigning, error) {
	sum, ok := owners.scripts[string(pkScript)]
	if !ok {
		return nil, nil
	}
	recs, err := readDescriptorRecords(b.own)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if _, s, _ := cutChecksum(r.desc); s != sum || r.ranged {
			continue
		}
		d, err := parseAnyDescriptor(r.desc, w.net.params)
		if err != nil {
			return nil, fmt.Errorf("%w: stored descriptor %d: %v", ErrCorrupt, r.id, err)
		}
		if d.script != nil {
			return nil, nil // addr() or raw()
		}
		for p := range d.Paths() {
			ws, err := d.ScriptAt(p, 0, w.net.params)
			if err != nil {
				return nil, err
			}
			if bytes.Equal(ws.PkScript, pkScript) {
				return descriptorSigning(d, p, 0, w.net.params)
			}
		}
	}
	return nil, nil
}

// hdSigning returns the signing metadata of a waddrmgr account's address.
func (w *Wallet) hdSigning(b readBuckets, owners *descriptorOwners, e *watchEntry) (*scriptSigning, error) {
	ref := e.ref
	key := branchKey{ref.scope, ref.account, ref.branch}
	sm, err := w.addrMgr.FetchScopedKeyManager(ref.scope)
	if err != nil {
		return nil, fmt.Errorf("scope %v: %w", ref.scope, err)
	}
	props, err := sm.AccountProperties(b.am, ref.account)
	if err != nil {
		return nil, fmt.Errorf("account %d of %v: %w", ref.account, ref.scope, err)
	}
	if props.AccountPubKey == nil {
		return nil, fmt.Errorf("%w: account %d of %v has no public key", ErrCorrupt, ref.account, ref.scope)
	}
	branch, err := props.AccountPubKey.Derive(ref.branch)
	if err != nil {
		return nil, fmt.Errorf("derive branch %d: %w", ref.branch, err)
	}
	child, err := branch.Derive(ref.index)
	if err != nil {
		return nil, fmt.Errorf("derive index %d: %w", ref.index, err)
	}
	pub, err := child.ECPubKey()
	if err != nil {
		return nil, err
	}
	der := &psbt.Bip32Derivation{PubKey: pub.SerializeCompressed()}
	prefix, known := owners.paths[branchKey{scope: key.scope, account: key.account}]
	if fp := props.MasterKeyFingerprint; known && fp != 0 {
		steps, err := descriptor.ParsePath(prefix)
		if err != nil {
			return nil, fmt.Errorf("%w: stored key origin %q: %v", ErrCorrupt, prefix, err)
		}
		der.MasterKeyFingerprint, der.Bip32Path = psbtFingerprint(fp), append(steps, ref.branch, ref.index)
	} else if k := props.AccountPubKey; k.Depth() == 1 {
		// A key at depth 1 (Electrum's m/0') names its master: its
		// parent, whose fingerprint it carries.
		der.MasterKeyFingerprint = psbtFingerprint(k.ParentFingerprint())
		der.Bip32Path = []uint32{k.ChildIndex(), ref.branch, ref.index}
	} else {
		der.MasterKeyFingerprint = psbtFingerprint(ownFingerprint(k))
		der.Bip32Path = []uint32{ref.branch, ref.index}
	}
	s := &scriptSigning{}
	if err := s.setSingleKey(e.ws.kind, der); err != nil {
		return nil, err
	}
	return s, nil
}

// ownFingerprint is an extended key's own fingerprint.
func ownFingerprint(k *hdkeychain.ExtendedKey) uint32 {
	pub, err := k.ECPubKey()
	if err != nil {
		return 0
	}
	return fingerprintOf(pub)
}
