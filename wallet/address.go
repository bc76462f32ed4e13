package wallet

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcwallet/waddrmgr"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/wallet/descriptor"
)

// Kind names the output type of a watched address or script. It is the
// descriptor package's type, which names the kinds a descriptor derives.
type Kind = descriptor.Kind

// The kinds of watched outputs.
const (
	// KindP2PKH is pay-to-pubkey-hash (BIP44 accounts, 1... and m/n...).
	KindP2PKH = descriptor.KindP2PKH
	// KindP2SHP2WPKH is P2WPKH nested in P2SH (BIP49 accounts).
	KindP2SHP2WPKH = descriptor.KindP2SHP2WPKH
	// KindP2WPKH is native segwit v0 pay-to-witness-pubkey-hash (BIP84).
	KindP2WPKH = descriptor.KindP2WPKH
	// KindP2SH is pay-to-script-hash.
	KindP2SH = descriptor.KindP2SH
	// KindP2WSH is segwit v0 pay-to-witness-script-hash.
	KindP2WSH = descriptor.KindP2WSH
	// KindP2SHP2WSH is P2WSH nested in P2SH (sh(wsh()) descriptors).
	KindP2SHP2WSH = descriptor.KindP2SHP2WSH
	// KindP2TR is segwit v1 pay-to-taproot.
	KindP2TR = descriptor.KindP2TR
	// KindP2PK is a bare public key output script.
	KindP2PK Kind = "p2pk"
	// KindMultisig is a bare multisig output script.
	KindMultisig = descriptor.KindMultisig
	// KindScript is any other output script.
	KindScript Kind = "script"
)

// kindOfAddrType maps waddrmgr's address types for HD accounts.
func kindOfAddrType(t waddrmgr.AddressType) Kind {
	switch t {
	case waddrmgr.PubKeyHash:
		return KindP2PKH
	case waddrmgr.NestedWitnessPubKey:
		return KindP2SHP2WPKH
	case waddrmgr.WitnessPubKey:
		return KindP2WPKH
	case waddrmgr.TaprootPubKey:
		return KindP2TR
	default:
		return KindScript
	}
}

// watchedScript is one output script the wallet watches, with the single
// filter element a BIP37 server needs to match it.
type watchedScript struct {
	pkScript []byte
	// element is the data push a server finds in pkScript: the hash160
	// of P2PKH and P2WPKH, the script hash of P2SH (P2SH-P2WPKH
	// included), the 32-byte program of P2WSH and P2TR.
	element []byte
	kind    Kind
	// address is the address as it was given (an imported address), or
	// empty: a derived address's text is encoded when shown (addressOn),
	// and a script no address encodes has none.
	address string
}

// addressOn returns ws's address on params: the one it was given, or the
// one its kind and element encode; empty for a script no address
// encodes.
func (ws *watchedScript) addressOn(params *chaincfg.Params) string {
	if ws.address != "" {
		return ws.address
	}
	var (
		a   btcutil.Address
		err error
	)
	switch ws.kind {
	case KindP2WPKH:
		a, err = btcutil.NewAddressWitnessPubKeyHash(ws.element, params)
	case KindP2PKH:
		a, err = btcutil.NewAddressPubKeyHash(ws.element, params)
	case KindP2SH, KindP2SHP2WPKH:
		a, err = btcutil.NewAddressScriptHashFromHash(ws.element, params)
	case KindP2WSH:
		a, err = btcutil.NewAddressWitnessScriptHash(ws.element, params)
	case KindP2TR:
		a, err = btcutil.NewAddressTaproot(ws.element, params)
	default:
		return ""
	}
	if err != nil {
		return ""
	}
	return a.EncodeAddress()
}

// parseAddress decodes a single address of params' network into the
// script it stands for. Public keys in hex (which btcutil also decodes)
// are refused: import the address of the key instead.
func parseAddress(s string, params *chaincfg.Params) (*watchedScript, error) {
	s = strings.TrimSpace(s)
	addr, err := btcutil.DecodeAddress(s, params)
	if err != nil {
		// btcutil decodes only the wallet network's base58 versions;
		// name the network a well-formed address belongs to.
		if other := addressNetwork(s); other != "" && other != params.Name {
			return nil, inputErr("address", s, fmt.Errorf("%w: address is for %s, wallet is %s", ErrWrongNetwork, other, params.Name))
		}
		return nil, inputErr("address", s, fmt.Errorf("%w: %v", ErrInvalidAddress, err))
	}
	if !addr.IsForNet(params) {
		return nil, inputErr("address", s, fmt.Errorf("%w: address is not for %s", ErrWrongNetwork, params.Name))
	}
	var kind Kind
	switch addr.(type) {
	case *btcutil.AddressPubKeyHash:
		kind = KindP2PKH
	case *btcutil.AddressScriptHash:
		kind = KindP2SH
	case *btcutil.AddressWitnessPubKeyHash:
		kind = KindP2WPKH
	case *btcutil.AddressWitnessScriptHash:
		kind = KindP2WSH
	case *btcutil.AddressTaproot:
		kind = KindP2TR
	default:
		return nil, inputErr("address", s, fmt.Errorf("%w: unsupported address type %T", ErrInvalidAddress, addr))
	}
	pkScript, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, inputErr("address", s, fmt.Errorf("%w: %v", ErrInvalidAddress, err))
	}
	return &watchedScript{
		pkScript: pkScript,
		element:  addr.ScriptAddress(),
		kind:     kind,
		address:  canonicalAddress(s, kind),
	}, nil
}

// canonicalAddress returns the text addr.EncodeAddress() gives for an
// address of kind that btcutil.DecodeAddress accepted as s, without
// encoding it again (a quarter of importing a long address list): base58
// check text decodes only from its one encoding, and a bech32 or bech32m
// address only from its one encoding, in lower or upper case (mixed case
// is refused, BIP 173), whose lower case is what EncodeAddress writes.
// TestCanonicalAddress checks it against EncodeAddress.
func canonicalAddress(s string, kind Kind) string {
	switch kind {
	case KindP2WPKH, KindP2WSH, KindP2TR:
		return strings.ToLower(s)
	default:
		return s
	}
}

// addressNetwork returns the name of a known network s is a valid address
// of, or "".
func addressNetwork(s string) string {
	for _, name := range netparams.Names() {
		n, err := netparams.Lookup(name)
		if err != nil {
			continue
		}
		if a, err := btcutil.DecodeAddress(s, n.Params); err == nil && a.IsForNet(n.Params) {
			return n.Name
		}
	}
	return ""
}

// parseScript classifies a raw output script and picks its filter element:
// for a standard template the push a server matches (hash, program, the
// public key of P2PK, the first key of bare multisig), otherwise the
// longest data push. A script with no push cannot be matched by BIP37 and
// is refused.
func parseScript(script []byte, params *chaincfg.Params) (*watchedScript, error) {
	shown := fmt.Sprintf("%x", script)
	if len(script) == 0 {
		return nil, inputErr("script", "", ErrUnmatchableScript)
	}
	pushes, err := txscript.PushedData(script)
	if err != nil {
		return nil, inputErr("script", shown, fmt.Errorf("%w: malformed script: %v", ErrUnmatchableScript, err))
	}
	ws := &watchedScript{pkScript: bytes.Clone(script), kind: KindScript}
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(script, params)
	if err == nil {
		switch class {
		case txscript.PubKeyHashTy:
			ws.kind = KindP2PKH
		case txscript.ScriptHashTy:
			ws.kind = KindP2SH
		case txscript.WitnessV0PubKeyHashTy:
			ws.kind = KindP2WPKH
		case txscript.WitnessV0ScriptHashTy:
			ws.kind = KindP2WSH
		case txscript.WitnessV1TaprootTy:
			ws.kind = KindP2TR
		case txscript.PubKeyTy:
			ws.kind = KindP2PK
		case txscript.MultiSigTy:
			ws.kind = KindMultisig
		}
		if ws.kind != KindScript && len(addrs) > 0 {
			ws.element = addrs[0].ScriptAddress()
			if ws.kind != KindP2PK && ws.kind != KindMultisig {
				ws.address = addrs[0].EncodeAddress()
			}
			return ws, nil
		}
		ws.kind = KindScript
	}
	for _, p := range pushes {
		if len(p) > len(ws.element) {
			ws.element = p
		}
	}
	if len(ws.element) == 0 {
		return nil, inputErr("script", shown, ErrUnmatchableScript)
	}
	ws.element = bytes.Clone(ws.element)
	return ws, nil
}

// scriptForManaged returns the watched script of an address derived by
// waddrmgr.
func scriptForManaged(ma waddrmgr.ManagedAddress) (*watchedScript, error) {
	addr := ma.Address()
	pkScript, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("script for %s: %w", addr, err)
	}
	return &watchedScript{
		pkScript: pkScript,
		element:  addr.ScriptAddress(),
		kind:     kindOfAddrType(ma.AddrType()),
		address:  addr.EncodeAddress(),
	}, nil
}
