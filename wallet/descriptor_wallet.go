package wallet

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcwallet/waddrmgr"

	"github.com/bloomwatch/bloomwatch/wallet/descriptor"
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

// ParseDescriptor checks an output descriptor for a network without a
// wallet, exactly as CreateConfig.Descriptors and AddDescriptor do, and
// describes it. It accepts what descriptor.Parse accepts:
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
		return nil, descErr(d.body(), err)
	}
	return info, nil
}

// watchedDesc is a parsed descriptor (package descriptor) with the
// script of an addr() or raw() one, which the wallet decodes as it
// decodes AddAddress's and AddScript's.
type watchedDesc struct {
	*descriptor.Descriptor
	// script is the one script of addr() and raw(), nil otherwise.
	script *watchedScript
}

// parseDescriptor parses and checks s for params (see ParseDescriptor).
func parseDescriptor(s string, params *chaincfg.Params) (*watchedDesc, error) {
	return parseWith(descriptor.Parse, s, params)
}

// parseAnyDescriptor parses and checks s for params as parseDescriptor
// does, but keeps what the wallet cannot watch (see descriptor.ParseAny).
func parseAnyDescriptor(s string, params *chaincfg.Params) (*watchedDesc, error) {
	return parseWith(descriptor.ParseAny, s, params)
}

// parseWith parses s with parse and decodes the script of addr() and
// raw(). Every refusal is the descriptor's *InputError.
func parseWith(parse func(string, *chaincfg.Params) (*descriptor.Descriptor, error), s string, params *chaincfg.Params) (*watchedDesc, error) {
	d, err := parse(s, params)
	if err != nil {
		return nil, descErr(bodyOf(s), err)
	}
	wd := &watchedDesc{Descriptor: d}
	if addr, ok := d.Addr(); ok {
		wd.script, err = parseAddress(addr, params)
	} else if raw, ok := d.Raw(); ok {
		wd.script, err = parseScript(raw, params)
	}
	if err != nil {
		return nil, descErr(wd.body(), err)
	}
	return wd, nil
}

// bodyOf returns the descriptor text an error about s names: s trimmed,
// without its "#checksum" (all of it when nothing precedes '#').
func bodyOf(s string) string {
	s = strings.TrimSpace(s)
	if body, _, _ := strings.Cut(s, "#"); body != "" {
		return body
	}
	return s
}

// body returns the descriptor without its checksum.
func (d *watchedDesc) body() string {
	body, _, _ := cutChecksum(d.String())
	return body
}

// kind returns the output type of d's scripts.
func (d *watchedDesc) kind() Kind {
	if d.script != nil {
		return d.script.kind
	}
	return d.Kind()
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

// watched converts a script of package descriptor.
func watched(s *descriptor.Script) *watchedScript {
	return &watchedScript{pkScript: s.PkScript, element: s.Element, kind: s.Kind, address: s.Address}
}

// scripts returns the output scripts of a non-ranged descriptor: one per
// path of its key (two for a multipath key), or its address or raw
// script.
func (d *watchedDesc) scripts(params *chaincfg.Params) ([]*watchedScript, error) {
	if d.script != nil {
		return []*watchedScript{d.script}, nil
	}
	ss, err := d.Scripts(params)
	if err != nil {
		return nil, err
	}
	out := make([]*watchedScript, len(ss))
	for i, s := range ss {
		out[i] = watched(s)
	}
	return out, nil
}

// scriptAt returns the output script of a ranged descriptor's path p at
// child index.
func (d *watchedDesc) scriptAt(p int, index uint32, params *chaincfg.Params) (*watchedScript, error) {
	s, err := d.ScriptAt(p, index, params)
	if err != nil {
		return nil, err
	}
	return watched(s), nil
}

// scriptForKey builds the watched script of kind for one compressed
// public key (see descriptor.KeyScript).
func scriptForKey(kind Kind, pub *btcec.PublicKey, params *chaincfg.Params) (*watchedScript, error) {
	s, err := descriptor.KeyScript(kind, pub, params)
	if err != nil {
		return nil, err
	}
	return watched(s), nil
}

// descPurpose maps a descriptor's output type to the BIP43 purpose of the
// waddrmgr scope its accounts live in.
var descPurpose = map[Kind]uint32{
	KindP2PKH:      purposeBIP44,
	KindP2SHP2WPKH: purposeBIP49,
	KindP2WPKH:     purposeBIP84,
	KindP2TR:       purposeBIP86,
}

// scopeFor returns the waddrmgr scope a ranged descriptor of kind lives
// in.
func scopeFor(kind Kind, params *chaincfg.Params) waddrmgr.KeyScope {
	return waddrmgr.KeyScope{Purpose: descPurpose[kind], Coin: params.HDCoinType}
}

// info describes d as ParseDescriptor returns it.
func (d *watchedDesc) info(params *chaincfg.Params) (*DescriptorInfo, error) {
	body, sum, _ := cutChecksum(d.String())
	info := &DescriptorInfo{
		Descriptor: d.String(),
		Checksum:   sum,
		Kind:       d.kind(),
		Ranged:     d.Ranged(),
	}
	var err error
	if info.Expanded, err = descriptor.Expand(body); err != nil {
		return nil, err
	}
	info.Threshold, info.Keys = d.Threshold()
	if d.Ranged() {
		if info.Branches, _, err = d.Branches(); err != nil {
			return nil, err
		}
		if info.Keys == 0 {
			info.Scope = scopeString(scopeFor(d.Kind(), params))
		}
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

// How descriptors are watched.
//
// A ranged descriptor is mapped onto a waddrmgr watch-only account rather
// than derived here: its key, derived through the steps before the branch
// step, is the account key, in the scope of its script type (BIP44 for
// pkh, BIP49 for sh(wpkh), BIP84 for wpkh, BIP86 for tr, with the
// network's coin type), and its branch step selects the account's
// branches. So a descriptor account is exactly an xpub account: the same
// gap limits and lookahead reserve (ensureGap), used flags, relevance,
// persistence of derived addresses and reopen (loadAccounts), and the same
// rollback (a rollback never un-derives addresses, for either). waddrmgr
// derives TaprootPubKey addresses with the BIP86 tweak, checked against
// BIP86's published vectors in the tests. The cost is the shape: waddrmgr
// derives account/branch/index, so a ranged key must end in /0/*, /1/*
// or /<0;1>/*; other shapes (/*, /7/*, /<0;1>/0/*) are refused rather
// than watched by a second derivation engine with its own gap and
// persistence rules. Bitcoin Core (/0/* and /1/* pairs), Sparrow, Specter
// and BDK (/<0;1>/*) all export that shape.
//
// A ranged multisig descriptor cannot be a waddrmgr account (one key per
// address): it is derived by the wallet itself with the same gap limits
// and lookahead reserve, its addresses stored in a bucket of their own
// (descriptor_msig.go).
//
// Core's pair wpkh(K/0/*) and wpkh(K/1/*) lands on one account: the
// first creates it with its receive branch only, the second adds the
// change branch. A non-ranged descriptor (a hex key, an xpub with a fixed
// path, addr(), raw()) becomes one or two (multipath) imported scripts,
// like AddAddress and AddScript. Each descriptor is also stored as given,
// with its checksum, so Descriptors lists it after reopen.

// AddDescriptor watches one more output descriptor (see ParseDescriptor
// for what is accepted) and commits. A refused descriptor writes nothing.
// A ranged descriptor whose account key (and scope) is already watched
// adds the branches not watched yet; one adding nothing, or a non-ranged
// one whose script is watched, gives ErrDuplicate. If the wallet had
// applied blocks, the next sync rescans from its birthday, as after
// AddXpub.
func (w *Wallet) AddDescriptor(desc string) (*DescriptorInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	d, err := parseDescriptor(desc, w.net.params)
	if err != nil {
		return nil, err
	}
	var info *DescriptorInfo
	err = w.updateNow(func(b buckets) error {
		var err error
		if info, err = w.importDescriptor(b, d); err != nil {
			return err
		}
		info.Rescan, err = w.rescanIfSynced(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// importDescriptor watches d and stores its record inside a write.
func (w *Wallet) importDescriptor(b buckets, d *watchedDesc) (*DescriptorInfo, error) {
	params := w.net.params
	info, err := d.info(params)
	if err != nil {
		return nil, descErr(d.body(), err)
	}
	_, keys := d.Threshold()
	rec := &descriptorRecord{desc: d.String(), kind: d.kind(), ranged: d.Ranged(), multisig: keys > 0}
	if d.Ranged() && rec.multisig {
		id, err := nextDescriptorID(b.own)
		if err != nil {
			return nil, err
		}
		branches, err := w.importMultisig(b.own, d, id)
		if errors.Is(err, ErrDuplicate) {
			return nil, descErr(d.body(), fmt.Errorf("%w: its first addresses are already watched", ErrDuplicate))
		}
		if err != nil {
			return nil, err
		}
		rec.scope, rec.account, rec.branches = msigScope, id, branches
		info.Account = id
	} else if d.Ranged() {
		acct, err := d.Account()
		if err != nil {
			return nil, descErr(d.body(), err)
		}
		k := &accountKey{
			key:    acct.Key,
			scope:  scopeFor(d.Kind(), params),
			schema: scopeSchemas[descPurpose[d.Kind()]],
			kind:   d.Kind(),
		}
		ai, err := w.importAccount(b.am, k, acct.Branches, acct.Fingerprint)
		if errors.Is(err, ErrDuplicate) {
			return nil, descErr(d.body(), fmt.Errorf("%w: its account key and branches are already watched", ErrDuplicate))
		}
		if err != nil {
			return nil, err
		}
		rec.scope, rec.account, rec.branches = k.scope, ai.Account, acct.Branches
		rec.path = acct.Path
		info.Account = ai.Account
	} else {
		scripts, err := d.scripts(params)
		if err != nil {
			return nil, descErr(d.body(), err)
		}
		for i, ws := range scripts {
			dup := w.watch.lookup(ws.pkScript) != nil
			for _, prev := range scripts[:i] {
				dup = dup || bytes.Equal(prev.pkScript, ws.pkScript)
			}
			if dup {
				shown := ws.address
				if shown == "" {
					shown = hex.EncodeToString(ws.pkScript)
				}
				return nil, descErr(d.body(), fmt.Errorf("%w: %s", ErrDuplicate, shown))
			}
		}
		for _, ws := range scripts {
			if err := w.importScript(b.own, ws); err != nil {
				return nil, err
			}
			rec.scripts = append(rec.scripts, ws.pkScript)
		}
	}
	if err := putDescriptorRecord(b.own, rec); err != nil {
		return nil, err
	}
	return info, nil
}

// Descriptors returns the imported descriptors in import order, each with
// its checksum and where the wallet watches it.
func (w *Wallet) Descriptors() ([]DescriptorInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []DescriptorInfo
	err = w.view(func(b readBuckets) error {
		recs, err := readDescriptorRecords(b.own)
		if err != nil {
			return err
		}
		for _, r := range recs {
			info, err := w.recordInfo(r)
			if err != nil {
				return err
			}
			out = append(out, *info)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("descriptors: %w", err)
	}
	return out, nil
}

// recordInfo describes a stored descriptor.
func (w *Wallet) recordInfo(r *descriptorRecord) (*DescriptorInfo, error) {
	body, sum, _ := cutChecksum(r.desc)
	info := &DescriptorInfo{Descriptor: r.desc, Checksum: sum, Kind: r.kind, Ranged: r.ranged}
	if r.multisig {
		d, err := parseAnyDescriptor(r.desc, w.net.params)
		if err == nil {
			info.Threshold, info.Keys = d.Threshold()
		}
		if err != nil || info.Keys == 0 {
			return nil, fmt.Errorf("%w: stored descriptor %d: %v", ErrCorrupt, r.id, err)
		}
	}
	expanded, err := descriptor.Expand(body)
	if err != nil {
		return nil, fmt.Errorf("%w: stored descriptor: %v", ErrCorrupt, err)
	}
	info.Expanded = expanded
	if r.ranged {
		info.Scope, info.Account = scopeString(r.scope), r.account
		if r.multisig {
			info.Scope = ""
		}
		info.Branches = append([]uint32(nil), r.branches...)
		return info, nil
	}
	for _, s := range r.scripts {
		info.Scripts = append(info.Scripts, hex.EncodeToString(s))
		addr := ""
		if e := w.watch.lookup(s); e != nil {
			addr = e.ws.addressOn(w.net.params)
		}
		info.Addresses = append(info.Addresses, addr)
	}
	return info, nil
}

// cutChecksum splits a stored "body#checksum" (neither part holds '#').
func cutChecksum(desc string) (body, checksum string, ok bool) {
	return strings.Cut(desc, "#")
}

// descriptorOwners maps what the stored descriptors watch to their
// checksums and key-origin paths, for Addresses.
type descriptorOwners struct {
	branches map[branchKey]string
	paths    map[branchKey]string // by scope and account, branch 0
	scripts  map[string]string
}

// readDescriptorOwners indexes the stored descriptors.
func readDescriptorOwners(b readBuckets) (*descriptorOwners, error) {
	recs, err := readDescriptorRecords(b.own)
	if err != nil {
		return nil, err
	}
	o := &descriptorOwners{
		branches: make(map[branchKey]string),
		paths:    make(map[branchKey]string),
		scripts:  make(map[string]string),
	}
	for _, r := range recs {
		_, sum, _ := cutChecksum(r.desc)
		// The first descriptor to cover a branch owns it (a later
		// multipath one may cover it again when it added the other).
		for _, br := range r.branches {
			if k := (branchKey{r.scope, r.account, br}); o.branches[k] == "" {
				o.branches[k] = sum
			}
		}
		if k := (branchKey{scope: r.scope, account: r.account}); r.ranged && r.path != "" && o.paths[k] == "" {
			o.paths[k] = r.path
		}
		for _, s := range r.scripts {
			o.scripts[string(s)] = sum
		}
	}
	return o, nil
}
