package descriptor

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/bloomwatch/bloomwatch/wallet/internal/secret"
)

// Hex public key lengths a descriptor may hold, in characters.
const (
	hexXOnlyLen        = 2 * 32 // tr() only (BIP386)
	hexCompressedLen   = 2 * 33
	hexUncompressedLen = 2 * 65 // pkh() only (BIP381)
	fingerprintHexLen  = 8
)

// keyContext is the script function a key expression is an argument of:
// it decides which key forms are valid.
type keyContext string

const (
	ctxPKH    keyContext = "pkh"
	ctxWPKH   keyContext = "wpkh"
	ctxSHWPKH keyContext = "sh(wpkh)"
	ctxTR     keyContext = "tr"
	// The keys of multi() and sortedmulti() (BIP383), bare, inside sh()
	// and inside wsh() (also sh(wsh())).
	ctxMulti    keyContext = "multi"
	ctxSHMulti  keyContext = "sh(multi)"
	ctxWSHMulti keyContext = "wsh(multi)"
)

// allowsUncompressed reports whether a key expression in ctx may be an
// uncompressed public key: in pkh() (BIP381), bare multi() and
// sh(multi()) (BIP383), never in a segwit script (BIP382: wpkh(), wsh()).
func (ctx keyContext) allowsUncompressed() bool {
	return ctx == ctxPKH || ctx == ctxMulti || ctx == ctxSHMulti
}

// keyExpr is a parsed BIP380 key expression with its BIP389 multipath
// step: an extended public key with its derivation, or a hex public key.
type keyExpr struct {
	// hasOrigin, fingerprint and origin are the key origin
	// "[fingerprint/path]", when given.
	hasOrigin   bool
	fingerprint uint32
	origin      []uint32
	// ext is the extended public key; nil for a hex key.
	ext *hdkeychain.ExtendedKey
	// pub is the hex public key (nil for an extended key);
	// uncompressed tells its serialization (pkh(), bare and P2SH multi()).
	pub          *btcec.PublicKey
	uncompressed bool
	// steps are the unhardened derivation steps after ext; a multipath
	// step holds its several child numbers, the others one.
	steps [][]uint32
	// ranged: the expression ends in /* (every child index).
	ranged bool
}

// paths returns how many derivation paths the key stands for: the length
// of its multipath step, or 1.
func (k *keyExpr) paths() int {
	for _, s := range k.steps {
		if len(s) > 1 {
			return len(s)
		}
	}
	return 1
}

// pathSteps returns the derivation steps of path p (0 <= p < paths()).
func (k *keyExpr) pathSteps(p int) []uint32 {
	out := make([]uint32, len(k.steps))
	for i, s := range k.steps {
		if len(s) > 1 {
			out[i] = s[p]
		} else {
			out[i] = s[0]
		}
	}
	return out
}

// pubKey returns the public key of path p, at child index when the key is
// ranged (index is ignored otherwise).
func (k *keyExpr) pubKey(p int, index uint32) (*btcec.PublicKey, error) {
	if k.ext == nil {
		return k.pub, nil
	}
	steps := k.pathSteps(p)
	if k.ranged {
		steps = append(steps, index)
	}
	key := k.ext
	for _, c := range steps {
		var err error
		if key, err = key.Derive(c); err != nil {
			return nil, fmt.Errorf("derive child %d: %w", c, err)
		}
	}
	pub, err := key.ECPubKey()
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	return pub, nil
}

// parseKeyExpr parses a key expression for params: origin, key, steps. A
// private key (extended or WIF) gives ErrPrivateKey, a hardened step after
// an extended key ErrHardenedStep, a key of another network
// ErrWrongNetwork, a key form ctx does not allow ErrInvalid.
func parseKeyExpr(s string, ctx keyContext, params *chaincfg.Params) (*keyExpr, error) {
	k := &keyExpr{}
	if s == "" {
		return nil, fmt.Errorf("%w: %s() has no key", ErrInvalid, ctx)
	}
	if strings.ContainsAny(s, "(){},") {
		return nil, fmt.Errorf("%w: %s() takes one key expression, got %q", ErrInvalid, ctx, s)
	}
	rest := s
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return nil, fmt.Errorf("%w: key origin is not closed with ']'", ErrInvalid)
		}
		if err := k.parseOrigin(rest[1:end]); err != nil {
			return nil, err
		}
		rest = rest[end+1:]
	}
	if strings.ContainsAny(rest, "[]") {
		return nil, fmt.Errorf("%w: misplaced '[' or ']' in key expression (one key origin, before the key)", ErrInvalid)
	}
	if rest == "" {
		return nil, fmt.Errorf("%w: key origin with no key after it", ErrInvalid)
	}
	parts := strings.Split(rest, "/")
	keyText, steps := parts[0], parts[1:]
	if isHex(keyText) {
		if len(steps) > 0 {
			return nil, fmt.Errorf("%w: a hex public key takes no derivation steps", ErrInvalid)
		}
		if err := k.parseHexKey(keyText, ctx); err != nil {
			return nil, err
		}
		return k, nil
	}
	ext, extErr := hdkeychain.NewKeyFromString(keyText)
	if extErr != nil {
		if _, err := btcutil.DecodeWIF(keyText); err == nil {
			return nil, fmt.Errorf("%w: a WIF private key in %s(); bloomwatch never holds private keys, give the public key", ErrPrivateKey, ctx)
		}
		if errors.Is(extErr, hdkeychain.ErrBadChecksum) {
			return nil, fmt.Errorf("%w: extended key with a bad checksum", ErrInvalidKey)
		}
		return nil, fmt.Errorf("%w: %q is neither a hex public key nor an extended public key", ErrInvalidKey, shorten(keyText))
	}
	if ext.IsPrivate() {
		return nil, fmt.Errorf("%w: an extended private key in %s(); bloomwatch never holds private keys, give the xpub/tpub", ErrPrivateKey, ctx)
	}
	if err := checkDescriptorKeyVersion(ext, params); err != nil {
		return nil, err
	}
	if _, err := ext.ECPubKey(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	k.ext = ext
	for i, st := range steps {
		last := i == len(steps)-1
		switch {
		case st == "*" && last:
			k.ranged = true
			continue
		case st == "*h" || st == "*'":
			if last {
				return nil, fmt.Errorf("%w: hardened wildcard %s after an extended public key", ErrHardenedStep, st)
			}
		}
		if strings.HasPrefix(st, "*") {
			return nil, fmt.Errorf("%w: '*' must be the last step", ErrInvalid)
		}
		children, err := parseStep(st)
		if err != nil {
			return nil, err
		}
		k.steps = append(k.steps, children)
	}
	return k, nil
}

// parseStep parses one derivation step after an extended public key: a
// number or a multipath tuple "<a;b;...>", none of them hardened.
func parseStep(st string) ([]uint32, error) {
	elems := []string{st}
	if strings.HasPrefix(st, "<") && strings.HasSuffix(st, ">") {
		elems = strings.Split(st[1:len(st)-1], ";")
	}
	children := make([]uint32, 0, len(elems))
	for _, e := range elems {
		c, hardened, err := parsePathElem(e)
		if err != nil {
			return nil, err
		}
		if hardened {
			return nil, fmt.Errorf("%w: step %s after an extended public key; export the descriptor with its hardened steps in the key origin (BIP380)", ErrHardenedStep, e)
		}
		children = append(children, c)
	}
	return children, nil
}

// parseOrigin parses the inside of a key origin: an 8-hex-digit
// fingerprint and derivation steps (hardened or not; no wildcard, no
// multipath).
func (k *keyExpr) parseOrigin(s string) error {
	parts := strings.Split(s, "/")
	fp := parts[0]
	if len(fp) != fingerprintHexLen || !isHex(fp) {
		return fmt.Errorf("%w: key origin fingerprint %q is not 8 hex digits", ErrInvalid, fp)
	}
	b, _ := hex.DecodeString(fp)
	// BIP32 order: the big-endian number of the fingerprint's bytes.
	k.hasOrigin, k.fingerprint = true, binary.BigEndian.Uint32(b)
	for _, p := range parts[1:] {
		if strings.ContainsAny(p, "*<>;") {
			return fmt.Errorf("%w: key origin step %q: only numbers, hardened or not", ErrInvalid, p)
		}
		c, _, err := parsePathElem(p)
		if err != nil {
			return fmt.Errorf("key origin: %w", err)
		}
		k.origin = append(k.origin, c)
	}
	return nil
}

// parseHexKey parses a hex public key, checking the form against ctx:
// x-only (64 characters) only in tr(), uncompressed only in pkh().
func (k *keyExpr) parseHexKey(s string, ctx keyContext) error {
	b, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	switch len(s) {
	case hexXOnlyLen:
		if ctx != ctxTR {
			return fmt.Errorf("%w: x-only public key in %s() (only tr() takes them, BIP386)", ErrInvalid, ctx)
		}
		k.pub, err = schnorr.ParsePubKey(b)
	case hexCompressedLen:
		if b[0] != 0x02 && b[0] != 0x03 {
			return fmt.Errorf("%w: compressed public key must start with 02 or 03", ErrInvalidKey)
		}
		k.pub, err = btcec.ParsePubKey(b)
	case hexUncompressedLen:
		if !ctx.allowsUncompressed() {
			return fmt.Errorf("%w: uncompressed public key in %s() (only pkh(), bare multi() and sh(multi()) take them, BIP381-383, 386)", ErrInvalid, ctx)
		}
		if b[0] != 0x04 {
			return fmt.Errorf("%w: uncompressed public key must start with 04", ErrInvalidKey)
		}
		k.pub, err = btcec.ParsePubKey(b)
		k.uncompressed = true
	default:
		return fmt.Errorf("%w: hex public key of %d characters (66 compressed, 130 uncompressed, 64 x-only in tr())", ErrInvalidKey, len(s))
	}
	if err != nil {
		return fmt.Errorf("%w: not a point on the curve: %v", ErrInvalidKey, err)
	}
	return nil
}

// slip132Names names the SLIP-132 public versions (ypub, zpub, upub,
// vpub and their multisig Ypub, Zpub, Upub, Vpub), which descriptors do
// not use.
var slip132Names = map[uint32]string{
	0x049d7cb2: "ypub", 0x04b24746: "zpub", 0x044a5262: "upub", 0x045f1cf6: "vpub",
	0x0295b43f: "Ypub", 0x02aa7ed3: "Zpub", 0x024289ef: "Upub", 0x02575483: "Vpub",
}

// bip32Families names the networks of each plain BIP32 public version
// btcd gives a network: xpub, tpub (testnet3, testnet4, signet and
// regtest) and spub (simnet).
var bip32Families = map[uint32]string{
	0x0488b21e: "mainnet", 0x043587cf: "test networks", 0x0420bd3a: "simnet",
}

// checkDescriptorKeyVersion accepts only the network's own BIP32 public
// version: xpub on mainnet, tpub on testnet3, testnet4, signet and
// regtest, spub on simnet (btcd's). Descriptors give the script type in
// their function (BIP380 calls version bytes for script types a layer
// violation), so the SLIP-132 ypub/zpub/upub/vpub are refused rather than
// reinterpreted, as Bitcoin Core does.
func checkDescriptorKeyVersion(k *hdkeychain.ExtendedKey, params *chaincfg.Params) error {
	version := binary.BigEndian.Uint32(k.Version())
	own := binary.BigEndian.Uint32(params.HDPublicKeyID[:])
	if version == own {
		return nil
	}
	if name, ok := slip132Names[version]; ok {
		return fmt.Errorf("%w: SLIP-132 %s key: descriptors take the plain BIP32 version (xpub/tpub), the function gives the script type", ErrInvalidKey, name)
	}
	if name, ok := bip32Families[version]; ok {
		return fmt.Errorf("%w: key is for %s, wallet is %s", ErrWrongNetwork, name, params.Name)
	}
	return fmt.Errorf("%w: unknown extended key version %08x", ErrInvalidKey, version)
}

// isHex reports whether s is a non-empty string of hex digits.
func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// shorten truncates s for an error message; a private key is not shown
// at all.
func shorten(s string) string {
	if kind := secret.In(s); kind != "" {
		return "(" + kind + ", not shown)"
	}
	if len(s) > maxShown {
		return s[:maxShown] + "..."
	}
	return s
}

// maxShown bounds how much of a bad input an error message repeats (as
// wallet.InputError does).
const maxShown = 24

// Derivation is the BIP32 derivation of one key of a descriptor's
// script.
type Derivation struct {
	// PubKey is the key as the script serializes it (33 bytes, or 65 for
	// an uncompressed hex key).
	PubKey []byte
	// Fingerprint and Path name the key: its key origin's fingerprint
	// (BIP32 byte order, big-endian) and full path when it has an origin,
	// else its own fingerprint (the extended key's, or the hex key's) and
	// the path from it.
	Fingerprint uint32
	Path        []uint32
}

// Derivations returns the derivations of the keys of d's script at path
// p and child index: the one key of a single-key descriptor, every key
// of a multisig one in descriptor order; none for addr() and raw().
func (d *Descriptor) Derivations(p int, index uint32) ([]Derivation, error) {
	keys := []*keyExpr{d.key}
	switch {
	case d.multi != nil:
		keys = d.multi.keys
	case d.key == nil:
		return nil, nil
	}
	out := make([]Derivation, 0, len(keys))
	for _, k := range keys {
		der, err := k.derivation(p, index)
		if err != nil {
			return nil, err
		}
		out = append(out, der)
	}
	return out, nil
}

// derivation returns the derivation of k at path p and child index.
func (k *keyExpr) derivation(p int, index uint32) (Derivation, error) {
	pub, err := k.pubKey(p, index)
	if err != nil {
		return Derivation{}, err
	}
	fp, path := k.originOf()
	if k.ext != nil {
		path = append(path, k.pathSteps(p)...)
		if k.ranged {
			path = append(path, index)
		}
	}
	ser := pub.SerializeCompressed()
	if k.uncompressed {
		ser = pub.SerializeUncompressed()
	}
	return Derivation{PubKey: ser, Fingerprint: fp, Path: path}, nil
}

// originOf returns k's fingerprint and path prefix: its origin when it
// has one, else the extended key's own fingerprint (or the hex key's)
// and an empty prefix.
func (k *keyExpr) originOf() (uint32, []uint32) {
	if k.hasOrigin {
		return k.fingerprint, append([]uint32(nil), k.origin...)
	}
	var pub *btcec.PublicKey
	if k.ext != nil {
		pub, _ = k.ext.ECPubKey()
	} else {
		pub = k.pub
	}
	if pub == nil {
		return 0, nil
	}
	return binary.BigEndian.Uint32(btcutil.Hash160(pub.SerializeCompressed())[:4]), nil
}
