package wallet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcwallet/waddrmgr"
)

// BIP43 purposes the wallet derives addresses for.
const (
	purposeBIP44 = 44 // P2PKH
	purposeBIP49 = 49 // P2SH-P2WPKH
	purposeBIP84 = 84 // P2WPKH
	purposeBIP86 = 86 // P2TR, key path only
)

// hdVersion is the 4-byte version prefix of a serialized extended key.
type hdVersion uint32

// SLIP-132 public versions, per network family. Regtest, testnet3,
// testnet4 and signet share the test versions (btcd's HDPublicKeyID for
// them is tpub). Simnet's BIP44 version is btcd's own (spub); simnet has no
// SLIP-132 versions for BIP49/84 and, like waddrmgr (cloneKeyWithVersion),
// bloomwatch uses the mainnet ypub/zpub versions there.
const (
	versionXpub hdVersion = 0x0488b21e
	versionYpub hdVersion = 0x049d7cb2
	versionZpub hdVersion = 0x04b24746
	versionTpub hdVersion = 0x043587cf
	versionUpub hdVersion = 0x044a5262
	versionVpub hdVersion = 0x045f1cf6
	versionSpub hdVersion = 0x0420bd3a
)

// multisigVersions are the SLIP-132 versions for multisig account keys
// (Ypub, Zpub, Upub, Vpub): a single key cannot describe a multisig
// wallet's scripts, so they are refused.
var multisigVersions = map[hdVersion]string{
	0x0295b43f: "Ypub",
	0x02aa7ed3: "Zpub",
	0x024289ef: "Upub",
	0x02575483: "Vpub",
}

// slip132Names names the SLIP-132 versions, single-key and multisig.
var slip132Names = map[hdVersion]string{
	versionYpub: "ypub", versionZpub: "zpub", versionUpub: "upub", versionVpub: "vpub",
	0x0295b43f: "Ypub", 0x02aa7ed3: "Zpub", 0x024289ef: "Upub", 0x02575483: "Vpub",
}

// versionFamily maps each version a family accepts to its BIP43 purpose.
type versionFamily struct {
	name     string
	purposes map[hdVersion]uint32
}

var (
	mainFamily = versionFamily{"mainnet", map[hdVersion]uint32{
		versionXpub: purposeBIP44, versionYpub: purposeBIP49, versionZpub: purposeBIP84,
	}}
	testFamily = versionFamily{"test networks", map[hdVersion]uint32{
		versionTpub: purposeBIP44, versionUpub: purposeBIP49, versionVpub: purposeBIP84,
	}}
	simFamily = versionFamily{"simnet", map[hdVersion]uint32{
		versionSpub: purposeBIP44, versionYpub: purposeBIP49, versionZpub: purposeBIP84,
	}}
	allFamilies = []versionFamily{mainFamily, testFamily, simFamily}
)

// familyFor returns the version family of params, chosen by btcd's public
// HD version for the network. A network with unknown versions accepts only
// its own BIP44 version.
func familyFor(params *chaincfg.Params) versionFamily {
	own := hdVersion(binary.BigEndian.Uint32(params.HDPublicKeyID[:]))
	for _, f := range allFamilies {
		if p, ok := f.purposes[own]; ok && p == purposeBIP44 {
			return f
		}
	}
	return versionFamily{params.Name, map[hdVersion]uint32{own: purposeBIP44}}
}

// scopeSchemas gives each purpose's address types. BIP49 keeps P2SH-P2WPKH
// on the change branch too (as BIP49 specifies and as Electrum, Trezor and
// Ledger do), not waddrmgr's "BIP49 plus" P2WPKH change.
var scopeSchemas = map[uint32]waddrmgr.ScopeAddrSchema{
	purposeBIP44: {ExternalAddrType: waddrmgr.PubKeyHash, InternalAddrType: waddrmgr.PubKeyHash},
	purposeBIP49: waddrmgr.KeyScopeBIP0049AddrSchema,
	purposeBIP84: {ExternalAddrType: waddrmgr.WitnessPubKey, InternalAddrType: waddrmgr.WitnessPubKey},
	// BIP86: the wallet derives the internal key and commits to it with
	// txscript.ComputeTaprootKeyNoScript (Q = P + H_TapTweak(P)*G), the
	// BIP86 output key; the wallet watches its 32-byte program.
	purposeBIP86: {ExternalAddrType: waddrmgr.TaprootPubKey, InternalAddrType: waddrmgr.TaprootPubKey},
}

// accountKey is a parsed, checked extended public key.
type accountKey struct {
	key    *hdkeychain.ExtendedKey
	scope  waddrmgr.KeyScope
	schema waddrmgr.ScopeAddrSchema
	kind   Kind
}

// parseAccountKey decodes an extended public key for params: the
// checksum, the length, the curve point, the version (SLIP-132 selects the
// address type) and the network. Private keys are refused.
func parseAccountKey(s string, params *chaincfg.Params) (*accountKey, error) {
	s = strings.TrimSpace(s)
	key, err := hdkeychain.NewKeyFromString(s)
	if err != nil {
		if errors.Is(err, hdkeychain.ErrBadChecksum) {
			return nil, inputErr("xpub", s, fmt.Errorf("%w: bad checksum", ErrInvalidKey))
		}
		return nil, inputErr("xpub", s, fmt.Errorf("%w: %v", ErrInvalidKey, err))
	}
	if key.IsPrivate() {
		return nil, inputErr("xpub", "", ErrPrivateKey)
	}
	version := hdVersion(binary.BigEndian.Uint32(key.Version()))
	if name, ok := multisigVersions[version]; ok {
		return nil, inputErr("xpub", s, fmt.Errorf("%w: %s multisig keys are not supported", ErrInvalidKey, name))
	}
	fam := familyFor(params)
	purpose, ok := fam.purposes[version]
	if !ok {
		for _, other := range allFamilies {
			if _, known := other.purposes[version]; known {
				return nil, inputErr("xpub", s, fmt.Errorf("%w: key is for %s, wallet is %s",
					ErrWrongNetwork, other.name, params.Name))
			}
		}
		return nil, inputErr("xpub", s, fmt.Errorf("%w: unknown version %08x", ErrInvalidKey, uint32(version)))
	}
	return &accountKey{
		key:    key,
		scope:  waddrmgr.KeyScope{Purpose: purpose, Coin: params.HDCoinType},
		schema: scopeSchemas[purpose],
		kind:   kindOfAddrType(scopeSchemas[purpose].ExternalAddrType),
	}, nil
}

// sameKey reports whether two extended keys hold the same public key and
// chain code (and so derive the same children), whatever their versions.
func sameKey(a, b *hdkeychain.ExtendedKey) bool {
	pa, errA := a.ECPubKey()
	pb, errB := b.ECPubKey()
	if errA != nil || errB != nil {
		return false
	}
	return pa.IsEqual(pb) && string(a.ChainCode()) == string(b.ChainCode())
}

// parseTaprootKey decodes the account extended public key of a BIP86
// taproot account. SLIP-132 defines no taproot version, so the key must
// carry the network's plain BIP32 version (xpub, tpub; spub on simnet), as
// BIP86 exports it; a ypub/zpub (which names P2SH-P2WPKH/P2WPKH) is
// refused rather than reinterpreted.
func parseTaprootKey(s string, params *chaincfg.Params) (*accountKey, error) {
	k, err := parseAccountKey(s, params)
	if err != nil {
		return nil, err
	}
	if k.scope.Purpose != purposeBIP44 {
		return nil, inputErr("xpub", s, fmt.Errorf("%w: a %s key names %s outputs; a taproot (BIP86) account takes the plain xpub/tpub version",
			ErrInvalidKey, slip132Names[hdVersion(binary.BigEndian.Uint32(k.key.Version()))], k.kind))
	}
	return &accountKey{
		key:    k.key,
		scope:  waddrmgr.KeyScope{Purpose: purposeBIP86, Coin: params.HDCoinType},
		schema: scopeSchemas[purposeBIP86],
		kind:   KindP2TR,
	}, nil
}
