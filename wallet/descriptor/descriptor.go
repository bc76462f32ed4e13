package descriptor

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
)

// Descriptor is a parsed, checked output descriptor.
type Descriptor struct {
	// body is the descriptor without '#', checksum its computed checksum.
	body     string
	checksum string
	kind     Kind
	// key is the key expression of pkh, sh(wpkh), wpkh and tr; multi
	// the multisig expression of multi, sortedmulti and sh(), wsh() and
	// sh(wsh()) of them; both nil for addr and raw, which have addr or
	// raw (literal names which).
	key     *keyExpr
	multi   *multiExpr
	literal string
	addr    string
	raw     []byte
}

// String returns the descriptor with its checksum.
func (d *Descriptor) String() string { return d.body + "#" + d.checksum }

// Ranged reports whether d derives a script per child index (a key
// ending in /*).
func (d *Descriptor) Ranged() bool {
	return d.key != nil && d.key.ranged || d.multi != nil && d.multi.ranged()
}

// Parse parses and checks an output descriptor for params. It accepts:
//
//   - pkh(KEY), sh(wpkh(KEY)), wpkh(KEY): P2PKH, P2SH-P2WPKH, P2WPKH;
//   - tr(KEY): P2TR with the BIP86 key-path-only tweak (a script tree
//     tr(KEY,TREE) is refused);
//   - addr(ADDRESS) and raw(HEX): one address or output script, which the
//     caller decodes (see Addr and Raw);
//   - sh(multi(k,KEY,...)), wsh(multi(...)) and sh(wsh(multi(...))), and
//     the same of sortedmulti() (BIP383): P2SH, P2WSH and P2SH-P2WSH
//     multisig, k of at most 15 keys in sh() and 20 in wsh(); bare
//     multi() parses but is refused (ErrUnsupported; see ParseAny).
//
// KEY is an extended public key in the network's plain BIP32 version
// (xpub on mainnet, tpub on the test networks and regtest, spub on
// simnet; SLIP-132 versions are refused: the function gives the script
// type) with optional key origin [fingerprint/path] (h or ' marks a
// hardened step), unhardened derivation steps and an optional final /*;
// one step may be a BIP389 multipath tuple <a;b>. A non-ranged KEY may
// also be a hex public key (x-only in tr(), uncompressed in pkh() and
// sh(multi()) only).
//
// A ranged descriptor is watched as an HD account's branches, so its key
// (every ranged key of a multisig one) must end in /0/* (receive branch),
// /1/* (change branch) or /<0;1>/* (both, receive first as BIP389 says):
// anything else (/*, /5/*, /<0;1>/0/*) is refused with ErrUnsupported.
// Steps before the branch are derived into the account key (Account).
//
// The checksum is verified when present and computed when absent. Every
// refusal wraps one of ErrChecksum, ErrInvalid, ErrUnsupported,
// ErrPrivateKey, ErrHardenedStep, ErrWrongNetwork or ErrInvalidKey.
func Parse(s string, params *chaincfg.Params) (*Descriptor, error) {
	d, err := ParseAny(s, params)
	if err != nil {
		return nil, err
	}
	if d.kind == KindMultisig {
		return nil, fmt.Errorf("%w: bare %s() (an output script of the keys themselves, non-standard beyond 3 keys); watch it in wsh() or sh(); %s",
			ErrUnsupported, d.multi.name(), watchedFuncs)
	}
	if err := d.checkShape(); err != nil {
		return nil, err
	}
	return d, nil
}

// ParseAny parses and checks s for params as Parse does, but keeps what
// Parse refuses for a wallet that cannot watch it: bare multi(), and
// ranged shapes that are no HD account's. The BIP383 test vectors are
// run through it.
func ParseAny(s string, params *chaincfg.Params) (*Descriptor, error) {
	body, sum, err := splitChecksum(s)
	if err != nil {
		return nil, err
	}
	d := &Descriptor{body: body, checksum: sum}
	if _, err := expandMultipath(body); err != nil {
		return nil, err
	}
	if err := d.parseTop(params); err != nil {
		return nil, err
	}
	return d, nil
}

// checkShape checks that a ranged descriptor maps onto what the wallet
// derives: an HD account's branches (accountShape) or a multisig
// descriptor's (multiShape).
func (d *Descriptor) checkShape() error {
	if !d.Ranged() {
		return nil
	}
	if d.multi != nil {
		_, _, err := d.multiShape()
		return err
	}
	_, err := d.accountShape()
	return err
}

// splitChecksum trims s, splits off its "#checksum", verifies it when
// present and returns the body with its computed checksum.
func splitChecksum(s string) (body, sum string, err error) {
	s = strings.TrimSpace(s)
	body, given, hasSum := strings.Cut(s, "#")
	if body == "" {
		return s, "", fmt.Errorf("%w: empty descriptor", ErrInvalid)
	}
	if sum, err = Checksum(body); err != nil {
		return body, "", err
	}
	if hasSum {
		if err := checkChecksum(given, sum); err != nil {
			return body, "", err
		}
	}
	return body, sum, nil
}

// unsupportedFuncs are the BIP380-390 script functions (and Bitcoin
// Core's extensions) the wallet does not watch, with the reason.
var unsupportedFuncs = map[string]string{
	"pk":            "bare P2PK outputs",
	"combo":         "combo() (several script types per key)",
	"multi_a":       "tapscript multisig",
	"sortedmulti_a": "tapscript multisig",
	"rawtr":         "rawtr() (an untweaked output key)",
	"musig":         "MuSig2 aggregate keys",
}

// parseTop parses the top-level script expression.
func (d *Descriptor) parseTop(params *chaincfg.Params) error {
	name, args, err := splitCall(d.body)
	if err != nil {
		return err
	}
	if handled, err := d.parseMultiTop(name, args, params); handled {
		return err
	}
	switch name {
	case "pkh":
		d.kind = KindP2PKH
		d.key, err = parseKeyExpr(args, ctxPKH, params)
	case "wpkh":
		d.kind = KindP2WPKH
		d.key, err = parseKeyExpr(args, ctxWPKH, params)
	case "sh":
		inner, innerArgs, err := splitCall(args)
		if err != nil {
			return fmt.Errorf("inside sh(): %w", err)
		}
		switch inner {
		case "wpkh":
			d.kind = KindP2SHP2WPKH
			d.key, err = parseKeyExpr(innerArgs, ctxSHWPKH, params)
			return err
		case "tr", "sh", "addr", "raw":
			return fmt.Errorf("%w: %s() is only valid at the top level, not inside sh()", ErrInvalid, inner)
		case "pk":
			return fmt.Errorf("%w: sh(pk(...)) (P2SH-wrapped P2PK); %s", ErrUnsupported, watchedFuncs)
		}
		return unsupportedFunc("sh(" + inner + "(...))")
	case "tr":
		parts := splitTopLevel(args)
		if len(parts) > 1 {
			return fmt.Errorf("%w: tr() with a script tree; only key-path tr(KEY) is watched", ErrUnsupported)
		}
		d.kind = KindP2TR
		d.key, err = parseKeyExpr(args, ctxTR, params)
	case "addr":
		d.literal, d.addr = name, args
	case "raw":
		if !isHex(args) || len(args)%2 != 0 {
			return fmt.Errorf("%w: raw() takes an even number of hex digits", ErrInvalid)
		}
		d.literal = name
		d.raw, _ = hex.DecodeString(args)
	default:
		return unsupportedFunc(name + "()")
	}
	return err
}

// watchedFuncs names what the wallet watches, for refusals.
const watchedFuncs = "the wallet watches pkh, sh(wpkh), wpkh, tr (key path), sh/wsh/sh(wsh) of multi and sortedmulti, addr and raw"

// unsupportedFunc names a function the wallet does not watch, or one no
// BIP defines.
func unsupportedFunc(call string) error {
	inner := call
	for _, wrap := range []string{"sh(", "wsh("} {
		inner = strings.TrimPrefix(inner, wrap)
	}
	name, _, _ := strings.Cut(inner, "(")
	if why, ok := unsupportedFuncs[name]; ok {
		return fmt.Errorf("%w: %s (%s); %s", ErrUnsupported, call, why, watchedFuncs)
	}
	if name == "pkh" {
		return fmt.Errorf("%w: %s (P2SH-wrapped P2PKH); %s", ErrUnsupported, call, watchedFuncs)
	}
	return fmt.Errorf("%w: unknown script function %s", ErrInvalid, call)
}

// splitCall splits "name(args)" into its name and arguments, checking
// that the parentheses balance and the call spans all of s.
func splitCall(s string) (name, args string, err error) {
	open := strings.IndexByte(s, '(')
	if open <= 0 {
		return "", "", fmt.Errorf("%w: %q is not a script expression name(...)", ErrInvalid, shorten(s))
	}
	name = s[:open]
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return "", "", fmt.Errorf("%w: %q is not a script function name", ErrInvalid, shorten(name))
		}
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(s)-1 {
				return "", "", fmt.Errorf("%w: unexpected %q after %s(...)", ErrInvalid, shorten(s[i+1:]), name)
			}
			if depth < 0 {
				return "", "", fmt.Errorf("%w: unbalanced ')'", ErrInvalid)
			}
		}
	}
	if depth != 0 {
		return "", "", fmt.Errorf("%w: %s( is not closed", ErrInvalid, name)
	}
	return name, s[open+1 : len(s)-1], nil
}

// splitTopLevel splits arguments at the commas outside parentheses and
// braces.
func splitTopLevel(s string) []string {
	var out []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[last:i])
				last = i + 1
			}
		}
	}
	return append(out, s[last:])
}

// descAccount is a ranged descriptor mapped onto an HD account.
type descAccount struct {
	// key is the account key: the descriptor's key derived through the
	// steps before the branch step.
	key *hdkeychain.ExtendedKey
	// pre are those steps; branches the branch step's values.
	pre      []uint32
	branches []uint32
}

// accountShape maps a ranged descriptor onto an HD account: its last step
// before /* must be the branch, 0, 1 or <0;1>, with no multipath before
// it. An HD account derives account/branch/index, so this is the one shape
// it can hold.
func (d *Descriptor) accountShape() (*descAccount, error) {
	k := d.key
	const want = "a ranged key is watched as an HD account and must end in /0/* (receive), /1/* (change) or /<0;1>/* (both)"
	if len(k.steps) == 0 {
		return nil, fmt.Errorf("%w: %s, not /* alone", ErrUnsupported, want)
	}
	last := len(k.steps) - 1
	for _, s := range k.steps[:last] {
		if len(s) > 1 {
			return nil, fmt.Errorf("%w: multipath step before the branch step; %s", ErrUnsupported, want)
		}
	}
	br := k.steps[last]
	switch {
	case len(br) == 1 && br[0] <= internalBranch:
	case len(br) == 2 && br[0] == externalBranch && br[1] == internalBranch:
	case len(br) == 2 && br[0] == internalBranch && br[1] == externalBranch:
		return nil, fmt.Errorf("%w: multipath <1;0>: the first path is the receive branch (BIP389), which is 0 in an HD account; use <0;1>", ErrUnsupported)
	default:
		return nil, fmt.Errorf("%w: branch step %s; %s", ErrUnsupported, stepText(br), want)
	}
	acct := &descAccount{key: k.ext, branches: br}
	for _, c := range k.steps[:last] {
		var err error
		if acct.key, err = acct.key.Derive(c[0]); err != nil {
			return nil, fmt.Errorf("%w: derive step %d: %v", ErrInvalidKey, c[0], err)
		}
		acct.pre = append(acct.pre, c[0])
	}
	return acct, nil
}

// stepText writes a derivation step as in a descriptor: "5" or "<0;1;2>".
func stepText(children []uint32) string {
	if len(children) == 1 {
		return strings.TrimPrefix(formatPath(children), "/")
	}
	parts := make([]string, len(children))
	for i, c := range children {
		parts[i] = strings.TrimPrefix(formatPath([]uint32{c}), "/")
	}
	return "<" + strings.Join(parts, ";") + ">"
}

// Scripts returns the output scripts of a non-ranged descriptor: one per
// path of its key (two for a multipath key). An addr() or raw()
// descriptor gives ErrUnsupported: its script is decoded by the caller
// (Addr, Raw).
func (d *Descriptor) Scripts(params *chaincfg.Params) ([]*Script, error) {
	if d.multi != nil {
		out := make([]*Script, 0, d.multi.paths())
		for p := range d.multi.paths() {
			ms, err := d.multiScriptAt(p, 0, params)
			if err != nil {
				return nil, err
			}
			out = append(out, ms)
		}
		return out, nil
	}
	if d.key == nil {
		return nil, fmt.Errorf("%w: %s() is decoded by the caller", ErrUnsupported, d.literal)
	}
	out := make([]*Script, 0, d.key.paths())
	for p := range d.key.paths() {
		pub, err := d.key.pubKey(p, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
		}
		ws, err := scriptForKey(d.kind, pub, d.key.uncompressed, params)
		if err != nil {
			return nil, err
		}
		out = append(out, ws)
	}
	return out, nil
}

// ScriptAt returns the output script of d's path p (0 <= p < Paths()) at
// child index; index is ignored by a non-ranged descriptor. An addr()
// or raw() descriptor gives ErrUnsupported.
func (d *Descriptor) ScriptAt(p int, index uint32, params *chaincfg.Params) (*Script, error) {
	if d.multi != nil {
		return d.multiScriptAt(p, index, params)
	}
	if d.key == nil {
		return nil, fmt.Errorf("%w: %s() is decoded by the caller", ErrUnsupported, d.literal)
	}
	pub, err := d.key.pubKey(p, index)
	if err != nil {
		return nil, err
	}
	return scriptForKey(d.kind, pub, d.key.uncompressed, params)
}

// scriptForKey builds the script of kind for one public key. A P2TR
// output commits to the key by BIP86 (key path only):
// Q = P + H_TapTweak(P)*G with P the even-y lift of the key.
func scriptForKey(kind Kind, pub *btcec.PublicKey, uncompressed bool, params *chaincfg.Params) (*Script, error) {
	ser := pub.SerializeCompressed()
	if uncompressed {
		ser = pub.SerializeUncompressed()
	}
	var (
		addr btcutil.Address
		err  error
	)
	switch kind {
	case KindP2PKH:
		addr, err = btcutil.NewAddressPubKeyHash(btcutil.Hash160(ser), params)
	case KindP2WPKH:
		addr, err = btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(ser), params)
	case KindP2SHP2WPKH:
		var redeem []byte
		redeem, err = txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(btcutil.Hash160(ser)).Script()
		if err == nil {
			addr, err = btcutil.NewAddressScriptHash(redeem, params)
		}
	case KindP2TR:
		out := txscript.ComputeTaprootKeyNoScript(pub)
		addr, err = btcutil.NewAddressTaproot(schnorr.SerializePubKey(out), params)
	default:
		return nil, fmt.Errorf("no script for kind %s", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s address: %w", kind, err)
	}
	pkScript, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("script of %s: %w", addr, err)
	}
	return &Script{PkScript: pkScript, Element: addr.ScriptAddress(), Kind: kind, Address: addr.EncodeAddress()}, nil
}
