package wallet

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
)

// gapFor returns the gap limit of an HD branch.
func (w *Wallet) gapFor(branch uint32) uint32 {
	if branch == waddrmgr.InternalBranch {
		return w.meta.gapInternal
	}
	return w.meta.gapExternal
}

// ensureGap makes sure the branch of ref has addresses derived through
// ref.index + gap, so that gap unused addresses follow a used one. It
// derives in strides: when a branch must grow it grows to ref.index +
// 2*gap, so the element set (and so the peers' filters) changes about once
// per gap addresses used, not at every payment. Each change makes the
// light node reload its filter and fetch again the blocks filtered with the
// old one; one change per payment multiplied the bytes downloaded (6.7x
// the minimal loop with an xpub wallet in the bench) for no gain. It
// reports whether new addresses (and so new filter elements) were added.
// waddrmgr derives and stores the addresses; the wallet only indexes them.
func (w *Wallet) ensureGap(am walletdb.ReadWriteBucket, ref addrRef) (bool, error) {
	if ref.imported {
		return false, nil
	}
	key := branchKey{ref.scope, ref.account, ref.branch}
	gap := w.gapFor(ref.branch)
	if ref.index+gap < w.watch.derived[key] {
		return false, nil
	}
	return w.deriveThrough(am, key, ref.index+2*gap)
}

// deriveThrough derives the addresses of one branch up to and including
// index last and watches them. It reports whether the element set grew.
// waddrmgr derives and stores the addresses (Extend*Addresses); the wallet
// derives each again from its cached branch key to learn which they are,
// and takes waddrmgr's record of each (from its cache, filled by the
// extension), so an address the wallet computed differently is an error,
// never a wrong watch set. Asking waddrmgr by path (DeriveFromKeyPath)
// derived the branch key again for every address: the stride cost 3
// derivations per address instead of 2.
func (w *Wallet) deriveThrough(am walletdb.ReadWriteBucket, key branchKey, last uint32) (bool, error) {
	have := w.watch.derived[key]
	if last < have {
		return false, nil
	}
	sm, err := w.addrMgr.FetchScopedKeyManager(key.scope)
	if err != nil {
		return false, fmt.Errorf("scope %v: %w", key.scope, err)
	}
	if key.branch == waddrmgr.InternalBranch {
		err = sm.ExtendInternalAddresses(am, key.account, last)
	} else {
		err = sm.ExtendExternalAddresses(am, key.account, last)
	}
	if err != nil {
		return false, fmt.Errorf("derive %v account %d branch %d through %d: %w",
			key.scope, key.account, key.branch, last, err)
	}
	bk, err := w.branchExtKey(am, sm, key)
	if err != nil {
		return false, err
	}
	grew := false
	for i := have; i <= last; i++ {
		child, err := bk.key.Derive(i)
		if errors.Is(err, hdkeychain.ErrInvalidChild) {
			// BIP32 skips an index whose key is invalid (odds
			// about 2^-127); waddrmgr skipped it too.
			continue
		}
		if err != nil {
			return false, fmt.Errorf("derive %v/%d/%d/%d: %w", key.scope, key.account, key.branch, i, err)
		}
		pub, err := child.ECPubKey()
		if err != nil {
			return false, fmt.Errorf("derive %v/%d/%d/%d: %w", key.scope, key.account, key.branch, i, err)
		}
		ws, err := scriptForKey(bk.kind, pub, false, w.net.params)
		if err != nil {
			return false, err
		}
		ma, err := sm.Address(am, ws.addr)
		if err != nil {
			return false, fmt.Errorf("%w: %v account %d: address manager has no %s at %d/%d: %v",
				ErrCorrupt, key.scope, key.account, ws.address, key.branch, i, err)
		}
		if pka, ok := ma.(waddrmgr.ManagedPubKeyAddress); ok {
			if _, path, ok := pka.DerivationInfo(); !ok || path.InternalAccount != key.account ||
				path.Branch != key.branch || path.Index != i {
				return false, fmt.Errorf("%w: %v account %d: %s is not at %d/%d in the address manager",
					ErrCorrupt, key.scope, key.account, ws.address, key.branch, i)
			}
		}
		s, err := scriptForManaged(ma)
		if err != nil {
			return false, err
		}
		if w.watch.add(s, addrRef{scope: key.scope, account: key.account, branch: key.branch, index: i}) {
			grew = true
		}
	}
	w.watch.derived[key] = last + 1
	return grew, nil
}

// branchExt is the extended public key of one HD branch and the kind of
// address the account derives on it.
type branchExt struct {
	key  *hdkeychain.ExtendedKey
	kind Kind
}

// branchExtKey returns the branch key of key from the cache (kept with the
// watch set, rebuilt on load), deriving it from the account key once.
func (w *Wallet) branchExtKey(am walletdb.ReadBucket, sm *waddrmgr.ScopedKeyManager, key branchKey) (*branchExt, error) {
	if bk, ok := w.watch.branches[key]; ok {
		return bk, nil
	}
	props, err := sm.AccountProperties(am, key.account)
	if err != nil {
		return nil, fmt.Errorf("account %d of %v: %w", key.account, key.scope, err)
	}
	if props.AccountPubKey == nil {
		return nil, fmt.Errorf("%w: account %d of %v has no public key", ErrCorrupt, key.account, key.scope)
	}
	schema := sm.AddrSchema()
	if props.AddrSchema != nil {
		schema = *props.AddrSchema
	}
	t := schema.ExternalAddrType
	if key.branch == waddrmgr.InternalBranch {
		t = schema.InternalAddrType
	}
	kind := kindOfAddrType(t)
	if kind == KindScript {
		return nil, fmt.Errorf("%w: account %d of %v derives addresses of type %v", ErrCorrupt, key.account, key.scope, t)
	}
	k, err := props.AccountPubKey.Derive(key.branch)
	if err != nil {
		return nil, fmt.Errorf("derive branch %d of account %d of %v: %w", key.branch, key.account, key.scope, err)
	}
	bk := &branchExt{key: k, kind: kind}
	w.watch.branches[key] = bk
	return bk, nil
}

// markUsed flags a watched script as used: in waddrmgr for an HD address,
// in the imported bucket otherwise.
func (w *Wallet) markUsed(b buckets, e *watchEntry) error {
	if e.ref.imported {
		bkt := b.own.NestedReadWriteBucket(bktImported)
		v := bkt.Get(e.ws.pkScript)
		if v == nil {
			return fmt.Errorf("%w: imported script %x has no record", ErrCorrupt, e.ws.pkScript)
		}
		r, err := decodeImportedRecord(e.ws.pkScript, v)
		if err != nil {
			return err
		}
		if r.used {
			return nil
		}
		r.used = true
		return bkt.Put(e.ws.pkScript, r.encode())
	}
	sm, err := w.addrMgr.FetchScopedKeyManager(e.ref.scope)
	if err != nil {
		return fmt.Errorf("scope %v: %w", e.ref.scope, err)
	}
	if e.ws.addr == nil {
		return fmt.Errorf("address %s has no decoded form", e.ws.address)
	}
	if err := sm.MarkUsed(b.am, e.ws.addr); err != nil {
		return fmt.Errorf("mark %s used: %w", e.ws.address, err)
	}
	return nil
}
