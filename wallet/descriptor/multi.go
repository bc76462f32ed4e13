package descriptor

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
)

// Multisig descriptors (BIP383): multi(k,KEY_1,...,KEY_n) and
// sortedmulti(k,...), bare or inside sh(), wsh() and sh(wsh()).
//
// What a BIP37 server matches for them. A server tests every data push
// of every output script (and of every input's scriptSig) against the
// filter, never a witness. The output scripts are
//
//   - wsh(multi):      OP_0 <32-byte SHA-256 of the witness script>
//   - sh(multi):       OP_HASH160 <20-byte HASH160 of the redeem script> OP_EQUAL
//   - sh(wsh(multi)):  OP_HASH160 <20-byte HASH160 of OP_0 <32 bytes>> OP_EQUAL
//
// so the one element the filter needs per address is that push: the
// 32-byte program of P2WSH, the 20-byte script hash of P2SH. Neither
// public key is an element: no output script holds one, a spend of
// wsh() holds them only in its witness (never tested), and a spend of
// sh() pushes the whole redeem script (keys inside, not as pushes of
// their own), so inserting keys would cost filter bits and tell a server
// the cosigners' keys without matching anything more. A spend of a
// multisig output matches through its outpoint, which the wallet's
// filter holds for every unspent output (and BLOOM_UPDATE_ALL adds for
// every matched payment), exactly as for single-key outputs.

// Limits on the number of keys of a multisig expression (BIP383).
const (
	// maxBareMultiKeys: bare multi() at the top level (standardness).
	maxBareMultiKeys = 3
	// maxP2SHMultiKeys: inside sh(), bounded by the 520-byte redeem
	// script (15 compressed keys).
	maxP2SHMultiKeys = 15
	// maxMultiKeys: inside wsh() (OP_CHECKMULTISIG's 20).
	maxMultiKeys = 20
	// maxThresholdDigits bounds the threshold's text.
	maxThresholdDigits = 2
)

// multiExpr is a parsed multi() or sortedmulti() expression.
type multiExpr struct {
	sorted bool
	// k is the threshold, keys the key expressions in descriptor order.
	k    int
	keys []*keyExpr
}

// ranged reports whether any key derives a child per index.
func (m *multiExpr) ranged() bool {
	for _, k := range m.keys {
		if k.ranged {
			return true
		}
	}
	return false
}

// paths returns how many derivation paths the expression stands for:
// the length of its multipath steps (BIP389 makes them equal), or 1.
func (m *multiExpr) paths() int {
	n := 1
	for _, k := range m.keys {
		n = max(n, k.paths())
	}
	return n
}

// name is the function's name.
func (m *multiExpr) name() string {
	if m.sorted {
		return "sortedmulti"
	}
	return "multi"
}

// pubKeys returns the serialized public keys of path p at child index,
// in script order (sorted for sortedmulti, after derivation, as BIP383
// says).
func (m *multiExpr) pubKeys(p int, index uint32) ([][]byte, error) {
	out := make([][]byte, len(m.keys))
	for i, k := range m.keys {
		pub, err := k.pubKey(p, index)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		if k.uncompressed {
			out[i] = pub.SerializeUncompressed()
		} else {
			out[i] = pub.SerializeCompressed()
		}
	}
	if m.sorted {
		sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i], out[j]) < 0 })
	}
	return out, nil
}

// script returns the multisig script of path p at child index:
// OP_k KEY_1 ... KEY_n OP_n OP_CHECKMULTISIG (k and n above 16 as
// number pushes).
func (m *multiExpr) script(p int, index uint32) ([]byte, error) {
	keys, err := m.pubKeys(p, index)
	if err != nil {
		return nil, err
	}
	b := txscript.NewScriptBuilder().AddInt64(int64(m.k))
	for _, k := range keys {
		b.AddData(k)
	}
	return b.AddInt64(int64(len(keys))).AddOp(txscript.OP_CHECKMULTISIG).Script()
}

// parseMulti parses the arguments of multi() or sortedmulti() in ctx:
// a decimal threshold and one or more key expressions.
func parseMulti(name, args string, ctx keyContext, params *chaincfg.Params) (*multiExpr, error) {
	m := &multiExpr{sorted: name == "sortedmulti"}
	parts := splitTopLevel(args)
	if len(parts) < 2 {
		return nil, fmt.Errorf("%w: %s() takes a threshold and at least one key", ErrInvalid, name)
	}
	t := parts[0]
	if t == "" || len(t) > maxThresholdDigits || strings.TrimLeft(t, "0123456789") != "" {
		return nil, fmt.Errorf("%w: %s() threshold %q is not a number of signatures", ErrInvalid, name, shorten(t))
	}
	m.k, _ = strconv.Atoi(t)
	if m.k < 1 {
		return nil, fmt.Errorf("%w: %s() threshold of 0 (at least one signature, BIP383)", ErrInvalid, name)
	}
	limit := maxMultiKeys
	switch ctx {
	case ctxMulti:
		limit = maxBareMultiKeys
	case ctxSHMulti:
		limit = maxP2SHMultiKeys
	}
	if n := len(parts) - 1; n > limit {
		return nil, fmt.Errorf("%w: %s() with %d keys in %s (at most %d, BIP383)", ErrInvalid, name, n, ctx, limit)
	}
	for i, part := range parts[1:] {
		k, err := parseKeyExpr(part, ctx, params)
		if err != nil {
			return nil, fmt.Errorf("key %d of %s(): %w", i+1, name, err)
		}
		m.keys = append(m.keys, k)
	}
	if m.k > len(m.keys) {
		return nil, fmt.Errorf("%w: %s() threshold %d above its %d keys (BIP383)", ErrInvalid, name, m.k, len(m.keys))
	}
	if ctx == ctxSHMulti {
		// The redeem script is one push of at most 520 bytes.
		size := 3
		for _, k := range m.keys {
			size += 1 + 33
			if k.uncompressed {
				size += 32
			}
		}
		if size > txscript.MaxScriptElementSize {
			return nil, fmt.Errorf("%w: sh(%s()) redeem script of %d bytes (at most %d)", ErrInvalid, name, size, txscript.MaxScriptElementSize)
		}
	}
	return m, nil
}

// parseMultiTop parses the multisig forms of a descriptor: name is the
// top-level function (sh, wsh, multi or sortedmulti) and args its
// arguments. It reports handled = false for sh() of something else.
func (d *Descriptor) parseMultiTop(name, args string, params *chaincfg.Params) (handled bool, err error) {
	switch name {
	case "multi", "sortedmulti":
		d.kind = KindMultisig
		d.multi, err = parseMulti(name, args, ctxMulti, params)
		return true, err
	case "wsh":
		inner, innerArgs, err := splitCall(args)
		if err != nil {
			return true, fmt.Errorf("inside wsh(): %w", err)
		}
		d.kind = KindP2WSH
		return true, d.parseWSHInner(inner, innerArgs, "wsh", params)
	case "sh":
		inner, innerArgs, err := splitCall(args)
		if err != nil {
			return true, fmt.Errorf("inside sh(): %w", err)
		}
		switch inner {
		case "multi", "sortedmulti":
			d.kind = KindP2SH
			d.multi, err = parseMulti(inner, innerArgs, ctxSHMulti, params)
			return true, err
		case "wsh":
			in2, args2, err := splitCall(innerArgs)
			if err != nil {
				return true, fmt.Errorf("inside sh(wsh()): %w", err)
			}
			d.kind = KindP2SHP2WSH
			return true, d.parseWSHInner(in2, args2, "sh(wsh", params)
		}
	}
	return false, nil
}

// parseWSHInner parses the script inside wsh() (where is "wsh" or
// "sh(wsh" for the messages): multi() or sortedmulti(); the other
// functions BIP380-386 allow there are not watched, and those they do not
// allow are invalid.
func (d *Descriptor) parseWSHInner(inner, args, where string, params *chaincfg.Params) error {
	closing := strings.Repeat(")", strings.Count(where, "(")+1)
	switch inner {
	case "multi", "sortedmulti":
		var err error
		d.multi, err = parseMulti(inner, args, ctxWSHMulti, params)
		return err
	case "pk", "pkh":
		return fmt.Errorf("%w: %s(%s(...)%s: only multi() and sortedmulti() are watched inside wsh(); %s", ErrUnsupported, where, inner, closing, watchedFuncs)
	case "wpkh", "tr", "sh", "wsh", "addr", "raw":
		return fmt.Errorf("%w: %s() is not valid inside wsh() (BIP380-386)", ErrInvalid, inner)
	}
	return unsupportedFunc(where + "(" + inner + "(...)" + closing)
}

// multiShape maps a ranged multisig descriptor onto the branches the
// wallet watches it as: the last derivation step of every ranged key
// before /* is the branch, 0 (receive), 1 (change) or <0;1> (both), the
// same in every ranged key, and a multipath step appears nowhere else.
// It returns the branches and, per branch, the multipath path that
// derives it.
func (d *Descriptor) multiShape() (branches []uint32, paths []int, err error) {
	const want = "a ranged multisig key is watched in branches and must end in /0/* (receive), /1/* (change) or /<0;1>/* (both), the same in every ranged key"
	var shape []uint32
	for i, k := range d.multi.keys {
		last := len(k.steps) - 1
		for j, s := range k.steps {
			if len(s) > 1 && (!k.ranged || j != last) {
				return nil, nil, fmt.Errorf("%w: key %d has a multipath step before its branch step; %s", ErrUnsupported, i+1, want)
			}
		}
		if !k.ranged {
			continue
		}
		if last < 0 {
			return nil, nil, fmt.Errorf("%w: key %d ends in /* alone; %s", ErrUnsupported, i+1, want)
		}
		br := k.steps[last]
		switch {
		case len(br) == 1 && br[0] <= internalBranch:
		case len(br) == 2 && br[0] == externalBranch && br[1] == internalBranch:
		default:
			return nil, nil, fmt.Errorf("%w: key %d has branch step %s; %s", ErrUnsupported, i+1, stepText(br), want)
		}
		if shape != nil && !slicesEqual(shape, br) {
			return nil, nil, fmt.Errorf("%w: key %d has branch step %s, key 1 %s; %s", ErrUnsupported, i+1, stepText(br), stepText(shape), want)
		}
		shape = br
	}
	if len(shape) == 2 {
		return []uint32{externalBranch, internalBranch}, []int{0, 1}, nil
	}
	return []uint32{shape[0]}, []int{0}, nil
}

// slicesEqual reports whether two steps hold the same children.
func slicesEqual(a, b []uint32) bool {
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

// multiScriptAt returns the address of path p at child index (index is
// ignored by a non-ranged descriptor), with the scripts a signer needs
// to spend it.
func (d *Descriptor) multiScriptAt(p int, index uint32, params *chaincfg.Params) (*Script, error) {
	ms, err := d.multi.script(p, index)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	keys, _ := d.multi.pubKeys(p, index)
	set := &Script{}
	var addr btcutil.Address
	switch d.kind {
	case KindP2WSH:
		sum := sha256.Sum256(ms)
		set.Witness = ms
		addr, err = btcutil.NewAddressWitnessScriptHash(sum[:], params)
	case KindP2SH:
		set.Redeem = ms
		addr, err = btcutil.NewAddressScriptHash(ms, params)
	case KindP2SHP2WSH:
		sum := sha256.Sum256(ms)
		set.Witness = ms
		set.Redeem, err = txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(sum[:]).Script()
		if err == nil {
			addr, err = btcutil.NewAddressScriptHash(set.Redeem, params)
		}
	case KindMultisig:
		// Bare multisig has no address; its elements are the keys.
		set.PkScript, set.Element, set.Kind = ms, keys[0], KindMultisig
		return set, nil
	default:
		return nil, fmt.Errorf("no multisig script for kind %s", d.kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s address: %w", d.kind, err)
	}
	pkScript, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("script of %s: %w", addr, err)
	}
	set.PkScript, set.Element, set.Kind, set.Address = pkScript, addr.ScriptAddress(), d.kind, addr.EncodeAddress()
	return set, nil
}
