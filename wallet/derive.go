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
// reports whether new addresses (and so new filter elements) were added.
// waddrmgr derives and stores the addresses; the wallet only indexes them.
//
// A branch grows in strides that grow with it (see nextStride): when a
// payment comes within gap of the end of a branch of D derived addresses,
// the branch is derived through ref.index + gap + nextStride(D, gap). Each
// change of the element set makes the light node reload its filter and
// fetch again the blocks in flight (up to 500 of them), so the number of
// changes, not the number of addresses, is what a wallet paid at fresh
// addresses pays for: a fixed stride of one gap made that one reload per
// gap addresses (784 reloads and 254 MB for 15,000 used addresses in the
// bench's addrs10000 xpub sync, 70x the minimal loop's bytes; 36 and
// 11.5 MB with growing strides).
func (w *Wallet) ensureGap(am walletdb.ReadWriteBucket, ref addrRef) (bool, error) {
	if ref.imported {
		return false, nil
	}
	key := branchKey{ref.scope, ref.account, ref.branch}
	gap := w.gapFor(ref.branch)
	have := w.watch.derived[key]
	if ref.index+gap < have {
		return false, nil
	}
	return w.deriveThrough(am, key, ref.index+gap+nextStride(have, gap))
}

// nextStride is how many addresses past the gap a branch of derived
// addresses grows by when a payment reaches its gap: half of what the
// branch holds, at least gap, at most MaxStride (or gap when the gap is
// larger). The branch so grows by about half at each extension: a wallet
// paid at N fresh addresses changes its filter O(log N) times until the
// stride reaches MaxStride (2,000 derived addresses), then once per
// MaxStride addresses, and watches at most gap + max(gap, min(derived/2,
// MaxStride)) unused addresses per branch beyond its last used one,
// against gap to 2*gap with a stride of one gap.
func nextStride(derived, gap uint32) uint32 {
	return max(gap, min(derived/2, MaxStride))
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

// ensureGapOf is ensureGap for any watched script: an HD address's
// account branch (ensureGap), a multisig descriptor's branch
// (msigEnsureGap), nothing for an imported script.
func (w *Wallet) ensureGapOf(b buckets, ref addrRef) (bool, error) {
	if ref.msig {
		return w.msigEnsureGap(b.own, ref)
	}
	return w.ensureGap(b.am, ref)
}

// markUsed flags a watched script as used: in waddrmgr for an HD address,
// in the multisig or imported bucket otherwise, and in the watch set. A
// script already flagged is not written again.
func (w *Wallet) markUsed(b buckets, e *watchEntry) error {
	if e.used {
		return nil
	}
	if e.ref.msig {
		if err := msigMarkUsed(b.own, e); err != nil {
			return err
		}
		e.used = true
		return nil
	}
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
		if !r.used {
			r.used = true
			if err := bkt.Put(e.ws.pkScript, r.encode()); err != nil {
				return fmt.Errorf("mark %x used: %w", e.ws.pkScript, err)
			}
		}
		e.used = true
		return nil
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
	e.used = true
	return nil
}
