package descriptor

import (
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
)

// What a parsed descriptor tells: its shape, its HD account, its scripts.

// Kind returns the output type of d's scripts; it is empty for addr()
// and raw(), whose type is their script's.
func (d *Descriptor) Kind() Kind { return d.kind }

// Threshold returns a multisig descriptor's k and n (k of n
// signatures), or 0 and 0.
func (d *Descriptor) Threshold() (k, n int) {
	if d.multi == nil {
		return 0, 0
	}
	return d.multi.k, len(d.multi.keys)
}

// Paths returns how many derivation paths d stands for: the length of
// its BIP389 multipath steps, or 1.
func (d *Descriptor) Paths() int {
	switch {
	case d.multi != nil:
		return d.multi.paths()
	case d.key != nil:
		return d.key.paths()
	}
	return 1
}

// Addr returns the argument of an addr() descriptor, not decoded; ok is
// false for any other descriptor.
func (d *Descriptor) Addr() (addr string, ok bool) {
	return d.addr, d.literal == "addr"
}

// Raw returns the script of a raw() descriptor; ok is false for any
// other descriptor.
func (d *Descriptor) Raw() (script []byte, ok bool) {
	return d.raw, d.literal == "raw"
}

// Expand returns the single-path descriptors a multipath descriptor body
// (without '#') stands for (BIP389), receive first, each followed by '#'
// and its checksum; nil for a descriptor without multipath steps. Only
// the text is expanded: the functions and keys are not checked.
func Expand(body string) ([]string, error) {
	expanded, err := expandMultipath(body)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range expanded {
		sum, err := Checksum(e)
		if err != nil {
			return nil, err
		}
		out = append(out, e+"#"+sum)
	}
	return out, nil
}

// Account is a ranged single-key descriptor mapped onto an HD account
// (see Descriptor.Account).
type Account struct {
	// Key is the account key: the descriptor's key derived through the
	// steps before the branch step.
	Key *hdkeychain.ExtendedKey
	// Branches are the branch step's values: 0 (receive), 1 (change) or
	// both, receive first.
	Branches []uint32
	// Fingerprint and Path are the key origin's fingerprint (BIP32 byte
	// order, big-endian) and the derivation path of Key from it
	// ("m/84'/1'/0'"); 0 and "" without a key origin.
	Fingerprint uint32
	Path        string
}

// externalBranch and internalBranch are an HD account's receive and
// change branches (BIP44).
const (
	externalBranch = 0
	internalBranch = 1
)

// Account maps a ranged single-key descriptor onto an HD account: its
// last step before /* must be the branch, 0, 1 or <0;1>, with no
// multipath before it. An HD account derives account/branch/index, so
// this is the one shape it can hold. A non-ranged or multisig descriptor
// gives ErrUnsupported.
func (d *Descriptor) Account() (*Account, error) {
	if d.key == nil || !d.key.ranged {
		return nil, fmt.Errorf("%w: only a ranged single-key descriptor is an HD account", ErrUnsupported)
	}
	acct, err := d.accountShape()
	if err != nil {
		return nil, err
	}
	out := &Account{Key: acct.key, Branches: append([]uint32(nil), acct.branches...)}
	if d.key.hasOrigin {
		steps := append([]uint32(nil), d.key.origin...)
		steps = append(steps, acct.pre...)
		out.Fingerprint, out.Path = d.key.fingerprint, "m"+formatPath(steps)
	}
	return out, nil
}

// Branches returns the account branches a ranged descriptor covers, 0
// (receive) and/or 1 (change), and per branch the multipath path that
// derives it (for ScriptAt): the branches of its HD account (Account)
// for a single-key descriptor, those every ranged key ends in for a
// multisig one. A non-ranged descriptor gives ErrUnsupported.
func (d *Descriptor) Branches() (branches []uint32, paths []int, err error) {
	switch {
	case !d.Ranged():
		return nil, nil, fmt.Errorf("%w: a non-ranged descriptor has no branches", ErrUnsupported)
	case d.multi != nil:
		return d.multiShape()
	}
	acct, err := d.accountShape()
	if err != nil {
		return nil, nil, err
	}
	branches = append([]uint32(nil), acct.branches...)
	for p := range branches {
		paths = append(paths, p)
	}
	return branches, paths, nil
}

// Script is one output script a descriptor describes.
type Script struct {
	// PkScript is the output script, Kind its output type.
	PkScript []byte
	Kind     Kind
	// Element is the data push that identifies the script: the 20-byte
	// hash of P2PKH and P2WPKH, the script hash of P2SH (P2SH-P2WPKH and
	// P2SH-P2WSH included), the 32-byte program of P2WSH and P2TR, the
	// first key of bare multisig.
	Element []byte
	// Address is the encoded address, empty for a script no address
	// encodes (bare multisig).
	Address string
	// Redeem is a multisig script's P2SH redeem script (sh(multi): the
	// multisig script; sh(wsh(multi)): the P2WSH output script), nil for
	// wsh() and a single key's. Witness is a multisig script's P2WSH
	// witness script, nil for sh(multi) and a single key's.
	Redeem  []byte
	Witness []byte
}

// KeyScript returns the output script of kind (KindP2PKH,
// KindP2SHP2WPKH, KindP2WPKH or KindP2TR) for one compressed public key,
// as a single-key descriptor derives it: a P2TR output commits to the
// key by BIP86 (key path only).
func KeyScript(kind Kind, pub *btcec.PublicKey, params *chaincfg.Params) (*Script, error) {
	return scriptForKey(kind, pub, false, params)
}
