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
	grew := false
	for i := have; i <= last; i++ {
		path := waddrmgr.DerivationPath{InternalAccount: key.account, Account: key.account, Branch: key.branch, Index: i}
		ma, err := sm.DeriveFromKeyPath(am, path)
		if errors.Is(err, hdkeychain.ErrInvalidChild) {
			// BIP32 skips an index whose key is invalid (odds
			// about 2^-127); waddrmgr skipped it too.
			continue
		}
		if err != nil {
			return false, fmt.Errorf("derive %v/%d/%d/%d: %w", key.scope, key.account, key.branch, i, err)
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
