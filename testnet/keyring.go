package testnet

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
)

// DemoSeed is the fixed BIP32 seed of the demo's and the tests' user
// wallet: SHA-256 of "bloomwatch demo wallet". Do not modify it.
var DemoSeed = func() []byte {
	s := sha256.Sum256([]byte("bloomwatch demo wallet"))
	return s[:]
}()

// BIP43 purposes a Keyring derives.
const (
	PurposeBIP44 uint32 = 44 // P2PKH
	PurposeBIP49 uint32 = 49 // P2SH-P2WPKH
	PurposeBIP84 uint32 = 84 // P2WPKH
	PurposeBIP86 uint32 = 86 // P2TR, key path only (BIP86 tweak)
)

// Branches of an HD account.
const (
	BranchExternal uint32 = 0 // receive addresses
	BranchInternal uint32 = 1 // change addresses
)

// keyringPurposes are the purposes a Keyring derives an account of.
var keyringPurposes = []uint32{PurposeBIP44, PurposeBIP49, PurposeBIP84, PurposeBIP86}

// keyringScan is how many indexes per purpose and branch Lookup derives
// when it searches for an unknown script.
const keyringScan = 1000

// KeyPath locates one key of a Keyring: m/purpose'/coin'/0'/branch/index.
type KeyPath struct {
	Purpose uint32 `json:"purpose"`
	Branch  uint32 `json:"branch"`
	Index   uint32 `json:"index"`
}

// Keyring is a deterministic HD wallet (account 0 of BIP44, BIP49, BIP84
// and BIP86) used as "the user's wallet": it gives the watch-only wallet its
// xpubs and addresses and signs spends of the user's outputs. It is safe
// for concurrent use.
type Keyring struct {
	params   *chaincfg.Params
	seed     []byte
	accounts map[uint32]*hdkeychain.ExtendedKey // private account keys by purpose

	// cosigners are the multisig wallet's (PurposeMultisig).
	cosigners []cosigner

	mu       sync.Mutex
	scripts  map[string]KeyPath
	scanned  map[[2]uint32]uint32                  // (purpose, branch) -> indexes derived into scripts
	branches map[[2]uint32]*hdkeychain.ExtendedKey // (purpose, branch) -> branch key
	// msBranches caches the cosigners' branch keys: (cosigner, branch).
	msBranches map[[2]uint32]*hdkeychain.ExtendedKey
}

// NewKeyring derives the BIP44, BIP49, BIP84 and BIP86 account-0 keys of
// seed for params (coin type params.HDCoinType), and the multisig
// wallet's three cosigners (PurposeMultisig).
func NewKeyring(seed []byte, params *chaincfg.Params) (*Keyring, error) {
	master, err := hdkeychain.NewMaster(seed, params)
	if err != nil {
		return nil, fmt.Errorf("testnet: keyring master key: %w", err)
	}
	k := &Keyring{
		params:   params,
		seed:     append([]byte(nil), seed...),
		accounts: make(map[uint32]*hdkeychain.ExtendedKey, len(keyringPurposes)),
		scripts:  make(map[string]KeyPath),
		scanned:  make(map[[2]uint32]uint32),
		branches: make(map[[2]uint32]*hdkeychain.ExtendedKey),

		msBranches: make(map[[2]uint32]*hdkeychain.ExtendedKey),
	}
	if k.cosigners, err = newCosigners(seed, params); err != nil {
		return nil, err
	}
	for _, purpose := range keyringPurposes {
		key := master
		for _, i := range []uint32{purpose, params.HDCoinType, 0} {
			if key, err = key.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
				return nil, fmt.Errorf("testnet: keyring account %d': %w", purpose, err)
			}
		}
		k.accounts[purpose] = key
	}
	return k, nil
}

// Params returns the keyring's chain parameters.
func (k *Keyring) Params() *chaincfg.Params { return k.params }

// SLIP-132 public versions.
const (
	verXpub uint32 = 0x0488b21e
	verYpub uint32 = 0x049d7cb2
	verZpub uint32 = 0x04b24746
	verTpub uint32 = 0x043587cf
	verUpub uint32 = 0x044a5262
	verVpub uint32 = 0x045f1cf6
)

// xpubVersion returns the serialization version of an account key for
// purpose on the keyring's network, in the forms wallet.AddXpub accepts:
// the network's own BIP44 version (tpub, spub, xpub); for BIP49/84 the
// SLIP-132 upub/vpub on test networks and ypub/zpub elsewhere (simnet has
// no SLIP-132 versions of its own). BIP86 keys keep the network's own
// version, as wallet.AddTaprootXpub takes them (SLIP-132 has none for
// taproot).
func (k *Keyring) xpubVersion(purpose uint32) []byte {
	own := binary.BigEndian.Uint32(k.params.HDPublicKeyID[:])
	v := own
	switch purpose {
	case PurposeBIP49:
		v = verYpub
		if own == verTpub {
			v = verUpub
		}
	case PurposeBIP84:
		v = verZpub
		if own == verTpub {
			v = verVpub
		}
	}
	out := make([]byte, 4)
	binary.BigEndian.PutUint32(out, v)
	return out
}

// account returns the private account key of purpose.
func (k *Keyring) account(purpose uint32) (*hdkeychain.ExtendedKey, error) {
	acct, ok := k.accounts[purpose]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrBadPurpose, purpose)
	}
	return acct, nil
}

// Xpub returns the account-0 extended public key of purpose (44, 49, 84
// or 86) with the version that tells the watch-only wallet its address type
// (e.g. tpub/upub/vpub on regtest).
func (k *Keyring) Xpub(purpose uint32) (string, error) {
	acct, err := k.account(purpose)
	if err != nil {
		return "", err
	}
	pub, err := acct.Neuter()
	if err != nil {
		return "", fmt.Errorf("testnet: neuter: %w", err)
	}
	pub, err = pub.CloneWithVersion(k.xpubVersion(purpose))
	if err != nil {
		return "", fmt.Errorf("testnet: xpub version: %w", err)
	}
	return pub.String(), nil
}

// PrivKey returns the private key at m/purpose'/coin'/0'/branch/index.
func (k *Keyring) PrivKey(purpose, branch, index uint32) (*btcec.PrivateKey, error) {
	br, err := k.branch(purpose, branch)
	if err != nil {
		return nil, err
	}
	child, err := br.Derive(index)
	if err != nil {
		return nil, fmt.Errorf("testnet: derive index %d: %w", index, err)
	}
	priv, err := child.ECPrivKey()
	if err != nil {
		return nil, fmt.Errorf("testnet: private key: %w", err)
	}
	return priv, nil
}

// branch returns the (cached) private key of a purpose's branch.
func (k *Keyring) branch(purpose, branch uint32) (*hdkeychain.ExtendedKey, error) {
	id := [2]uint32{purpose, branch}
	k.mu.Lock()
	br, ok := k.branches[id]
	k.mu.Unlock()
	if ok {
		return br, nil
	}
	acct, err := k.account(purpose)
	if err != nil {
		return nil, err
	}
	if br, err = acct.Derive(branch); err != nil {
		return nil, fmt.Errorf("testnet: derive branch %d: %w", branch, err)
	}
	k.mu.Lock()
	k.branches[id] = br
	k.mu.Unlock()
	return br, nil
}

// addressFor returns the address of pub for purpose's script type.
func addressFor(purpose uint32, pub *btcec.PublicKey, params *chaincfg.Params) (btcutil.Address, error) {
	hash := btcutil.Hash160(pub.SerializeCompressed())
	var (
		addr btcutil.Address
		err  error
	)
	switch purpose {
	case PurposeBIP44:
		addr, err = btcutil.NewAddressPubKeyHash(hash, params)
	case PurposeBIP84:
		addr, err = btcutil.NewAddressWitnessPubKeyHash(hash, params)
	case PurposeBIP49:
		var redeem []byte
		redeem, err = p2wpkhScript(hash)
		if err == nil {
			addr, err = btcutil.NewAddressScriptHash(redeem, params)
		}
	case PurposeBIP86:
		out := txscript.ComputeTaprootKeyNoScript(pub)
		addr, err = btcutil.NewAddressTaproot(schnorr.SerializePubKey(out), params)
	default:
		return nil, fmt.Errorf("%w: %d", ErrBadPurpose, purpose)
	}
	if err != nil {
		return nil, fmt.Errorf("testnet: address: %w", err)
	}
	return addr, nil
}

// p2wpkhScript returns OP_0 <hash160>.
func p2wpkhScript(hash []byte) ([]byte, error) {
	return txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(hash).Script()
}

// Address returns the address at (purpose, branch, index): P2PKH for 44,
// P2SH-P2WPKH for 49, P2WPKH for 84, P2TR (BIP86) for 86, the 2-of-3
// P2WSH for 48 (PurposeMultisig).
func (k *Keyring) Address(purpose, branch, index uint32) (btcutil.Address, error) {
	var addr btcutil.Address
	if purpose == PurposeMultisig {
		var err error
		if addr, err = k.multisigAddress(branch, index); err != nil {
			return nil, err
		}
	} else {
		priv, err := k.PrivKey(purpose, branch, index)
		if err != nil {
			return nil, err
		}
		if addr, err = addressFor(purpose, priv.PubKey(), k.params); err != nil {
			return nil, err
		}
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("testnet: script of %s: %w", addr, err)
	}
	k.mu.Lock()
	k.scripts[string(script)] = KeyPath{purpose, branch, index}
	k.mu.Unlock()
	return addr, nil
}

// PkScript returns the output script of the address at (purpose, branch,
// index).
func (k *Keyring) PkScript(purpose, branch, index uint32) ([]byte, error) {
	addr, err := k.Address(purpose, branch, index)
	if err != nil {
		return nil, err
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("testnet: script of %s: %w", addr, err)
	}
	return script, nil
}

// Lookup returns the key path of an output script: a script Address or
// PkScript returned, or one within the first 1,000 indexes of each
// purpose and branch.
func (k *Keyring) Lookup(pkScript []byte) (KeyPath, bool) {
	k.mu.Lock()
	p, ok := k.scripts[string(pkScript)]
	k.mu.Unlock()
	if ok {
		return p, true
	}
	for _, purpose := range append(keyringPurposes[:len(keyringPurposes):len(keyringPurposes)], PurposeMultisig) {
		for _, branch := range []uint32{BranchExternal, BranchInternal} {
			if err := k.scan(purpose, branch, keyringScan); err != nil {
				return KeyPath{}, false
			}
		}
	}
	k.mu.Lock()
	p, ok = k.scripts[string(pkScript)]
	k.mu.Unlock()
	return p, ok
}

// scan derives the scripts of the first n indexes of (purpose, branch).
func (k *Keyring) scan(purpose, branch, n uint32) error {
	key := [2]uint32{purpose, branch}
	k.mu.Lock()
	from := k.scanned[key]
	k.mu.Unlock()
	for i := from; i < n; i++ {
		if _, err := k.PkScript(purpose, branch, i); err != nil {
			return err
		}
	}
	k.mu.Lock()
	k.scanned[key] = max(k.scanned[key], n)
	k.mu.Unlock()
	return nil
}
