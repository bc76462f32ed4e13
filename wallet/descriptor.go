package wallet

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcwallet/waddrmgr"
)

// DescriptorInfo describes an output descriptor: as ParseDescriptor
// checked it, or as a wallet watches it.
type DescriptorInfo struct {
	// Descriptor is the descriptor as given (surrounding white space
	// removed) followed by '#' and its checksum.
	Descriptor string `json:"descriptor"`
	// Checksum is its BIP380 checksum, eight characters.
	Checksum string `json:"checksum"`
	// Kind is the output type of its scripts.
	Kind Kind `json:"kind"`
	// Ranged reports a descriptor ending in /*: one script per child
	// index, watched as an HD account with gap limits.
	Ranged bool `json:"ranged"`
	// Expanded lists, for a multipath descriptor (BIP389), the
	// single-path descriptors it stands for, receive first, each with its
	// checksum.
	Expanded []string `json:"expanded,omitempty"`
	// Scope and Account locate the waddrmgr account of a ranged
	// single-key descriptor ("m/86'/1'", account 0); ParseDescriptor
	// fills only Scope. A ranged multisig descriptor has no scope: its
	// Account is the wallet's number for it (its import order).
	Scope   string `json:"scope,omitempty"`
	Account uint32 `json:"account"`
	// Branches are the account branches a ranged descriptor covers: 0
	// (receive, gap limit GapExternal) and/or 1 (change, GapInternal).
	Branches []uint32 `json:"branches,omitempty"`
	// Scripts (hex) and Addresses are the output scripts of a non-ranged
	// descriptor; an address is empty for a script no address encodes.
	Scripts   []string `json:"scripts,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
	// Threshold and Keys are a multisig descriptor's k and n (k of n
	// signatures); zero otherwise.
	Threshold int `json:"threshold,omitempty"`
	Keys      int `json:"keys,omitempty"`
	// Rescan: as in AccountInfo.
	Rescan bool `json:"rescan,omitempty"`
}

// descriptor is a parsed, checked output descriptor the wallet can watch.
type descriptor struct {
	// body is the descriptor without '#', checksum its computed checksum.
	body     string
	checksum string
	kind     Kind
	// key is the key expression of pkh, sh(wpkh), wpkh and tr; multi
	// the multisig expression of multi, sortedmulti and sh(), wsh() and
	// sh(wsh()) of them; both nil for addr and raw, which have script.
	key    *keyExpr
	multi  *multiExpr
	script *watchedScript
	// expanded are the bodies of the single-path descriptors of a
	// multipath one.
	expanded []string
}

// String returns the descriptor with its checksum.
func (d *descriptor) String() string { return d.body + "#" + d.checksum }

// ranged reports whether d derives a script per index.
func (d *descriptor) ranged() bool {
	return d.key != nil && d.key.ranged || d.multi != nil && d.multi.ranged()
}

// ParseDescriptor checks an output descriptor for a network without a
// wallet, exactly as CreateConfig.Descriptors and AddDescriptor do, and
// describes it. It accepts:
//
//   - pkh(KEY), sh(wpkh(KEY)), wpkh(KEY): P2PKH, P2SH-P2WPKH, P2WPKH;
//   - tr(KEY): P2TR with the BIP86 key-path-only tweak (a script tree
//     tr(KEY,TREE) is refused);
//   - addr(ADDRESS) and raw(HEX): one address or output script;
//   - sh(multi(k,KEY,...)), wsh(multi(...)) and sh(wsh(multi(...))), and
//     the same of sortedmulti() (BIP383): P2SH, P2WSH and P2SH-P2WSH
//     multisig, k of at most 15 keys in sh() and 20 in wsh(); bare
//     multi() parses but is not watched (ErrUnsupportedDescriptor).
//
// KEY is an extended public key in the network's plain BIP32 version
// (xpub on mainnet, tpub on the test networks and regtest, spub on
// simnet; SLIP-132 versions are refused: the function gives the script
// type) with optional key origin [fingerprint/path] (h or ' marks a
// hardened step), unhardened derivation steps and an optional final /*;
// one step may be a BIP389 multipath tuple <a;b>. A non-ranged KEY may
// also be a hex public key (x-only in tr(), uncompressed in pkh() only).
//
// A ranged descriptor is watched as an HD account (a multisig one as
// branches of its own, see descriptor_msig.go), so its key (every ranged
// key of a multisig one) must end in /0/* (receive branch), /1/* (change
// branch) or /<0;1>/* (both, receive first as BIP389 says): anything else
// (/*, /5/*, /<0;1>/0/*) is refused with ErrUnsupportedDescriptor. Steps
// before the branch are derived into the account key.
//
// The checksum is verified when present and computed when absent. Every
// refusal is an *InputError naming the problem, wrapping one of
// ErrDescriptorChecksum, ErrInvalidDescriptor, ErrUnsupportedDescriptor,
// ErrPrivateKey, ErrHardenedStep, ErrWrongNetwork, ErrInvalidKey,
// ErrInvalidAddress, ErrUnmatchableScript or ErrUnknownNetwork.
func ParseDescriptor(s, network string) (*DescriptorInfo, error) {
	net, err := resolveNetwork(network)
	if err != nil {
		return nil, err
	}
	d, err := parseDescriptor(s, net.params)
	if err != nil {
		return nil, err
	}
	info, err := d.info(net.params)
	if err != nil {
		return nil, descErr(d.body, err)
	}
	return info, nil
}

// descErr wraps a reason as the *InputError of a descriptor. A private
// key's descriptor is not repeated in the message.
func descErr(desc string, err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		err = ie.Err
	}
	if errors.Is(err, ErrPrivateKey) {
		desc = ""
	}
	return inputErr("descriptor", desc, err)
}

// parseDescriptor parses and checks s for params (see ParseDescriptor).
func parseDescriptor(s string, params *chaincfg.Params) (*descriptor, error) {
	body, sum, err := splitChecksum(s)
	if err != nil {
		return nil, descErr(body, err)
	}
	d := &descriptor{body: body, checksum: sum}
	if d.expanded, err = expandMultipath(body); err != nil {
		return nil, descErr(body, err)
	}
	if err := d.parseTop(params); err != nil {
		return nil, descErr(body, err)
	}
	if d.kind == KindMultisig {
		return nil, descErr(body, fmt.Errorf("%w: bare %s() (an output script of the keys themselves, non-standard beyond 3 keys); watch it in wsh() or sh(); %s",
			ErrUnsupportedDescriptor, d.multi.name(), watchedFuncs))
	}
	if err := d.checkShape(); err != nil {
		return nil, descErr(body, err)
	}
	return d, nil
}

// parseAnyDescriptor parses and checks s for params as parseDescriptor
// does, but keeps what the wallet cannot watch and parseDescriptor
// refuses for it: bare multi(), and ranged shapes that are no HD
// account's. The BIP383 test vectors are run through it.
func parseAnyDescriptor(s string, params *chaincfg.Params) (*descriptor, error) {
	body, sum, err := splitChecksum(s)
	if err != nil {
		return nil, descErr(body, err)
	}
	d := &descriptor{body: body, checksum: sum}
	if d.expanded, err = expandMultipath(body); err != nil {
		return nil, descErr(body, err)
	}
	if err := d.parseTop(params); err != nil {
		return nil, descErr(body, err)
	}
	return d, nil
}

// checkShape checks that a ranged descriptor maps onto what the wallet
// derives: an HD account's branches (accountShape) or a multisig
// descriptor's (multiShape).
func (d *descriptor) checkShape() error {
	if !d.ranged() {
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
		return s, "", fmt.Errorf("%w: empty descriptor", ErrInvalidDescriptor)
	}
	if sum, err = descriptorChecksum(body); err != nil {
		return body, "", err
	}
	if hasSum {
		if err := checkDescriptorChecksum(given, sum); err != nil {
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
func (d *descriptor) parseTop(params *chaincfg.Params) error {
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
			return fmt.Errorf("%w: %s() is only valid at the top level, not inside sh()", ErrInvalidDescriptor, inner)
		case "pk":
			return fmt.Errorf("%w: sh(pk(...)) (P2SH-wrapped P2PK); %s", ErrUnsupportedDescriptor, watchedFuncs)
		}
		return unsupportedFunc("sh(" + inner + "(...))")
	case "tr":
		parts := splitTopLevel(args)
		if len(parts) > 1 {
			return fmt.Errorf("%w: tr() with a script tree; only key-path tr(KEY) is watched", ErrUnsupportedDescriptor)
		}
		d.kind = KindP2TR
		d.key, err = parseKeyExpr(args, ctxTR, params)
	case "addr":
		d.script, err = parseAddress(args, params)
		if err == nil {
			d.kind = d.script.kind
		}
	case "raw":
		var script []byte
		if !isHex(args) || len(args)%2 != 0 {
			return fmt.Errorf("%w: raw() takes an even number of hex digits", ErrInvalidDescriptor)
		}
		script, _ = hex.DecodeString(args)
		d.script, err = parseScript(script, params)
		if err == nil {
			d.kind = d.script.kind
		}
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
		return fmt.Errorf("%w: %s (%s); %s", ErrUnsupportedDescriptor, call, why, watchedFuncs)
	}
	if name == "pkh" {
		return fmt.Errorf("%w: %s (P2SH-wrapped P2PKH); %s", ErrUnsupportedDescriptor, call, watchedFuncs)
	}
	return fmt.Errorf("%w: unknown script function %s", ErrInvalidDescriptor, call)
}

// splitCall splits "name(args)" into its name and arguments, checking
// that the parentheses balance and the call spans all of s.
func splitCall(s string) (name, args string, err error) {
	open := strings.IndexByte(s, '(')
	if open <= 0 {
		return "", "", fmt.Errorf("%w: %q is not a script expression name(...)", ErrInvalidDescriptor, shorten(s))
	}
	name = s[:open]
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return "", "", fmt.Errorf("%w: %q is not a script function name", ErrInvalidDescriptor, shorten(name))
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
				return "", "", fmt.Errorf("%w: unexpected %q after %s(...)", ErrInvalidDescriptor, shorten(s[i+1:]), name)
			}
			if depth < 0 {
				return "", "", fmt.Errorf("%w: unbalanced ')'", ErrInvalidDescriptor)
			}
		}
	}
	if depth != 0 {
		return "", "", fmt.Errorf("%w: %s( is not closed", ErrInvalidDescriptor, name)
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

// descPurpose maps a descriptor's output type to the BIP43 purpose of the
// waddrmgr scope its accounts live in.
var descPurpose = map[Kind]uint32{
	KindP2PKH:      purposeBIP44,
	KindP2SHP2WPKH: purposeBIP49,
	KindP2WPKH:     purposeBIP84,
	KindP2TR:       purposeBIP86,
}

// descAccount is a ranged descriptor mapped onto a waddrmgr account.
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
func (d *descriptor) accountShape() (*descAccount, error) {
	k := d.key
	const want = "a ranged key is watched as an HD account and must end in /0/* (receive), /1/* (change) or /<0;1>/* (both)"
	if len(k.steps) == 0 {
		return nil, fmt.Errorf("%w: %s, not /* alone", ErrUnsupportedDescriptor, want)
	}
	last := len(k.steps) - 1
	for _, s := range k.steps[:last] {
		if len(s) > 1 {
			return nil, fmt.Errorf("%w: multipath step before the branch step; %s", ErrUnsupportedDescriptor, want)
		}
	}
	br := k.steps[last]
	switch {
	case len(br) == 1 && br[0] <= waddrmgr.InternalBranch:
	case len(br) == 2 && br[0] == waddrmgr.ExternalBranch && br[1] == waddrmgr.InternalBranch:
	case len(br) == 2 && br[0] == waddrmgr.InternalBranch && br[1] == waddrmgr.ExternalBranch:
		return nil, fmt.Errorf("%w: multipath <1;0>: the first path is the receive branch (BIP389), which is 0 in an HD account; use <0;1>", ErrUnsupportedDescriptor)
	default:
		return nil, fmt.Errorf("%w: branch step %s; %s", ErrUnsupportedDescriptor, stepText(br), want)
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

// scopeFor returns the waddrmgr scope a ranged descriptor of kind lives
// in.
func scopeFor(kind Kind, params *chaincfg.Params) waddrmgr.KeyScope {
	return waddrmgr.KeyScope{Purpose: descPurpose[kind], Coin: params.HDCoinType}
}

// accountPathOf returns the derivation path of a ranged descriptor's
// account key from its key origin ("m/84'/1'/0'"), or "" without one.
func (d *descriptor) accountPathOf(acct *descAccount) string {
	if !d.key.hasOrigin {
		return ""
	}
	steps := append([]uint32(nil), d.key.origin...)
	steps = append(steps, acct.pre...)
	return "m" + formatPath(steps)
}

// scripts returns the output scripts of a non-ranged descriptor: one per
// path of its key (two for a multipath key), or its address or raw
// script.
func (d *descriptor) scripts(params *chaincfg.Params) ([]*watchedScript, error) {
	if d.multi != nil {
		out := make([]*watchedScript, 0, d.multi.paths())
		for p := range d.multi.paths() {
			set, err := d.multiScriptAt(p, 0, params)
			if err != nil {
				return nil, err
			}
			out = append(out, set.ws)
		}
		return out, nil
	}
	if d.key == nil {
		return []*watchedScript{d.script}, nil
	}
	out := make([]*watchedScript, 0, d.key.paths())
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

// scriptAt returns the output script of a ranged descriptor's path p at
// child index.
func (d *descriptor) scriptAt(p int, index uint32, params *chaincfg.Params) (*watchedScript, error) {
	if d.multi != nil {
		set, err := d.multiScriptAt(p, index, params)
		if err != nil {
			return nil, err
		}
		return set.ws, nil
	}
	pub, err := d.key.pubKey(p, index)
	if err != nil {
		return nil, err
	}
	return scriptForKey(d.kind, pub, false, params)
}

// scriptForKey builds the watched script of kind for one public key. A
// P2TR output commits to the key by BIP86 (key path only):
// Q = P + H_TapTweak(P)*G with P the even-y lift of the key.
func scriptForKey(kind Kind, pub *btcec.PublicKey, uncompressed bool, params *chaincfg.Params) (*watchedScript, error) {
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
	return &watchedScript{pkScript: pkScript, element: addr.ScriptAddress(), kind: kind, address: addr.EncodeAddress()}, nil
}

// info describes d as ParseDescriptor returns it.
func (d *descriptor) info(params *chaincfg.Params) (*DescriptorInfo, error) {
	info := &DescriptorInfo{
		Descriptor: d.String(),
		Checksum:   d.checksum,
		Kind:       d.kind,
		Ranged:     d.ranged(),
	}
	for _, e := range d.expanded {
		sum, err := descriptorChecksum(e)
		if err != nil {
			return nil, err
		}
		info.Expanded = append(info.Expanded, e+"#"+sum)
	}
	if d.multi != nil {
		info.Threshold, info.Keys = d.multi.k, len(d.multi.keys)
	}
	if d.ranged() && d.multi != nil {
		branches, _, err := d.multiShape()
		if err != nil {
			return nil, err
		}
		info.Branches = branches
		return info, nil
	}
	if d.ranged() {
		acct, err := d.accountShape()
		if err != nil {
			return nil, err
		}
		info.Scope = scopeString(scopeFor(d.kind, params))
		info.Branches = append([]uint32(nil), acct.branches...)
		return info, nil
	}
	scripts, err := d.scripts(params)
	if err != nil {
		return nil, err
	}
	for _, ws := range scripts {
		info.Scripts = append(info.Scripts, hex.EncodeToString(ws.pkScript))
		info.Addresses = append(info.Addresses, ws.address)
	}
	return info, nil
}
