package wallet

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

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
func (w *Wallet) importDescriptor(b buckets, d *descriptor) (*DescriptorInfo, error) {
	params := w.net.params
	info, err := d.info(params)
	if err != nil {
		return nil, descErr(d.body, err)
	}
	rec := &descriptorRecord{desc: d.String(), kind: d.kind, ranged: d.ranged(), multisig: d.multi != nil}
	if d.ranged() && d.multi != nil {
		id, err := nextDescriptorID(b.own)
		if err != nil {
			return nil, err
		}
		branches, err := w.importMultisig(b.own, d, id)
		if errors.Is(err, ErrDuplicate) {
			return nil, descErr(d.body, fmt.Errorf("%w: its first addresses are already watched", ErrDuplicate))
		}
		if err != nil {
			return nil, err
		}
		rec.scope, rec.account, rec.branches = msigScope, id, branches
		info.Account = id
	} else if d.ranged() {
		acct, err := d.accountShape()
		if err != nil {
			return nil, descErr(d.body, err)
		}
		k := &accountKey{
			key:    acct.key,
			scope:  scopeFor(d.kind, params),
			schema: scopeSchemas[descPurpose[d.kind]],
			kind:   d.kind,
		}
		var fingerprint uint32
		if d.key.hasOrigin {
			fingerprint = d.key.fingerprint
		}
		ai, err := w.importAccount(b.am, k, acct.branches, fingerprint)
		if errors.Is(err, ErrDuplicate) {
			return nil, descErr(d.body, fmt.Errorf("%w: its account key and branches are already watched", ErrDuplicate))
		}
		if err != nil {
			return nil, err
		}
		rec.scope, rec.account, rec.branches = k.scope, ai.Account, acct.branches
		rec.path = d.accountPathOf(acct)
		info.Account = ai.Account
	} else {
		scripts, err := d.scripts(params)
		if err != nil {
			return nil, descErr(d.body, err)
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
				return nil, descErr(d.body, fmt.Errorf("%w: %s", ErrDuplicate, shown))
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
		if err != nil || d.multi == nil {
			return nil, fmt.Errorf("%w: stored descriptor %d: %v", ErrCorrupt, r.id, err)
		}
		info.Threshold, info.Keys = d.multi.k, len(d.multi.keys)
	}
	expanded, err := expandMultipath(body)
	if err != nil {
		return nil, fmt.Errorf("%w: stored descriptor: %v", ErrCorrupt, err)
	}
	for _, e := range expanded {
		s, err := descriptorChecksum(e)
		if err != nil {
			return nil, fmt.Errorf("%w: stored descriptor: %v", ErrCorrupt, err)
		}
		info.Expanded = append(info.Expanded, e+"#"+s)
	}
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
			addr = e.ws.address
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
