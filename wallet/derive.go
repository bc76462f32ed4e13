package wallet

import (
	"fmt"
	"hash"

	"github.com/btcsuite/btcd/btcec/v2"
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

// ensureGap records a payment to ref and keeps its branch's gap and
// lookahead reserve (see keepReserve): the addresses through ref.index +
// gap are needed from now on, and a reserve of unused addresses beyond
// them stays derived, so that a payment never needs a new filter to stay
// safe. height is the block being applied (the sync point for a mempool
// transaction). It reports whether new addresses (and so new filter
// elements) were added.
func (w *Wallet) ensureGap(am walletdb.ReadWriteBucket, ref addrRef, height int32) (bool, error) {
	if ref.imported {
		return false, nil
	}
	key := branchKey{ref.scope, ref.account, ref.branch}
	w.noteUse(key, ref.index, height)
	return w.keepReserve(key, w.hdBranch(am, key), height, 0)
}

// noteUse records that index of a branch was paid (or handed out) at
// height: the frontier the gap and the reserve are kept beyond.
func (w *Wallet) noteUse(key branchKey, index uint32, height int32) {
	s := w.watch
	if _, ok := s.due[key]; !ok {
		s.due[key] = s.usedHigh[key] + w.gapFor(key.branch)
	}
	if index+1 > s.usedHigh[key] {
		if s.usedHigh[key] == 0 {
			if _, ok := s.firstUse[key]; !ok {
				s.firstUse[key] = height
			}
		}
		s.usedHigh[key] = index + 1
	}
}

// branchOps derives one branch for keepReserve: an HD account's
// (deriveThrough) or a multisig descriptor's
// (msigDeriveThrough).
type branchOps struct {
	// derived returns how many addresses the branch has derived.
	derived func() uint32
	// through derives up to and including index last, as reserve
	// addresses when reserve is set, and reports whether the element
	// set grew.
	through func(last uint32, reserve bool) (bool, error)
}

// hdBranch returns the branchOps of an HD account's branch.
func (w *Wallet) hdBranch(am walletdb.ReadWriteBucket, key branchKey) branchOps {
	return branchOps{
		derived: func() uint32 { return w.watch.derived[key] },
		through: func(last uint32, reserve bool) (bool, error) { return w.deriveThrough(am, key, last, reserve) },
	}
}

// keepReserve keeps one branch's gap and lookahead reserve. The
// addresses below the highest used index + 1 + gap are needed: those
// derived earlier as reserve are reported due (spv.ElementDelta.Due),
// those not derived yet are derived now as needed ones (Data: the node
// re-fetches blocks if its filter lacks them, the gap-limit race). Beyond
// them the branch keeps at least reserveFor addresses derived (T): when
// fewer remain, it derives up to T + T/3 beyond the gap (T on a branch
// nothing used yet) and reports them
// as spv.ElementDelta.Reserve, which the node loads at its next scheduled
// reload (bitcoinj's DeterministicKeyChain: a lookahead of 100 kept
// whole, derived in batches of more than its threshold of a third). So
// when a top-up is decided the filters still hold T unused addresses
// beyond the gap: what the node needs to reach its next reload point and
// answer the window in flight. floor raises the reserve (FilterElements'
// catch-up reserve). It reports whether the element set grew.
//
// The frontier is the highest index used. Receive and a PSBT's change
// hand addresses out before they are paid and move it as a payment does
// (ensureGapOf, noteUse): the gap and the reserve then stay beyond the
// highest address handed out, and an address handed out is in the
// filters at once when it is within the gap and reserve they already
// hold, from the node's next reload point otherwise.
func (w *Wallet) keepReserve(key branchKey, ops branchOps, height int32, floor uint32) (bool, error) {
	s := w.watch
	need := s.usedHigh[key] + w.gapFor(key.branch)
	due, ok := s.due[key]
	if !ok {
		due = need
	}
	have := ops.derived()
	els := s.branchEls[key]
	for i := due; i < min(need, have); i++ {
		if int(i) < len(els) && els[i] != nil {
			s.log.AddDue(els[i])
		}
	}
	s.due[key] = max(due, need)
	grew := false
	if have < need {
		g, err := ops.through(need-1, false)
		if err != nil {
			return false, err
		}
		grew = g
	}
	target := max(w.reserveFor(key, height), floor)
	if target == 0 || ops.derived()-need >= target {
		return grew, nil
	}
	batch := target / 3
	if s.usedHigh[key] == 0 {
		batch = 0 // nothing used: nothing will run the reserve down yet
	}
	g, err := ops.through(need+target+batch-1, true)
	return grew || g, err
}

// reserveFor returns the lookahead reserve of a branch: the configured
// one (WithReserve, DefaultReserve; 0 turns the reserve off), or what the
// branch's own pace needs when larger: the addresses it used per block since its first use, times
// ReserveHorizon blocks (the node's reload spacing and the blocks it has
// in flight), at most MaxReserve.
func (w *Wallet) reserveFor(key branchKey, height int32) uint32 {
	r := w.opts.reserve
	s := w.watch
	u := s.usedHigh[key]
	if u == 0 || r == 0 {
		return r // a reserve of 0 is none, whatever the pace
	}
	first, ok := s.firstUse[key]
	if !ok {
		// Used before this process: count from the first block the
		// wallet applied (a lower bound of the pace).
		first = w.meta.firstApplied
		if first == noHeight {
			first = w.meta.birthday
		}
		s.firstUse[key] = first
	}
	span := int64(height) - int64(first) + 1
	if span < 1 {
		return r
	}
	// A pace is read over at least minPaceSpan blocks: twenty addresses
	// used in a wallet's first block are not twenty a block.
	paced := int64(u) * ReserveHorizon / max(span, minPaceSpan)
	return max(r, uint32(min(paced, MaxReserve)))
}

// minPaceSpan is the fewest blocks a branch's pace is read over (see
// reserveFor).
const minPaceSpan = 100

// catchUpReserve tops every HD branch's reserve up to at least
// CatchUpReserve (the wallet is about to catch up: the node will have
// hundreds of blocks in flight before its first scheduled reload), unless
// the reserve is off (WithReserve(0)). It reports whether the element set
// grew.
func (w *Wallet) catchUpReserve(b buckets) (bool, error) {
	if w.opts.reserve == 0 {
		return false, nil
	}
	floor := max(w.opts.reserve, min(CatchUpReserve, MaxReserve))
	grew := false
	for key, n := range w.watch.derived {
		if n == 0 {
			continue // a branch not watched (a receive-only descriptor)
		}
		g, err := w.keepReserve(key, w.hdBranch(b.am, key), w.synced.Height, floor)
		if err != nil {
			return false, err
		}
		grew = grew || g
	}
	for key := range w.watch.msig {
		g, err := w.keepReserve(key, w.msigBranch(b.own, key), w.synced.Height, floor)
		if err != nil {
			return false, err
		}
		grew = grew || g
	}
	return grew, nil
}

// deriveThrough derives the addresses of one branch up to and including
// index last and watches them, as reserve ones when reserve is set (see
// spv.ElementDelta). It reports whether the element set grew. Each address
// is derived once, from the branch key the watch set caches
// (branchExt.children), and its script appended to the branch's bucket of
// hd-scripts in the open write transaction (hdstore.go); waddrmgr, which
// holds the account key, writes nothing per address.
func (w *Wallet) deriveThrough(am walletdb.ReadWriteBucket, key branchKey, last uint32, reserve bool) (bool, error) {
	have := w.watch.derived[key]
	if last < have {
		return false, nil
	}
	own, err := w.writeOwn()
	if err != nil {
		return false, err
	}
	sm, err := w.addrMgr.FetchScopedKeyManager(key.scope)
	if err != nil {
		return false, fmt.Errorf("scope %v: %w", key.scope, err)
	}
	bk, err := w.branchExtKey(am, sm, key)
	if err != nil {
		return false, err
	}
	bb, err := hdBranchBucket(own, key)
	if err != nil {
		return false, err
	}
	grew := false
	err = bk.children(have, last, func(i uint32, pub *btcec.PublicKey) error {
		script, err := hdScriptForKey(bk.kind, pub)
		if err != nil {
			return err
		}
		ws, err := hdWatched(bk.kind, script)
		if err != nil {
			return err
		}
		if err := bb.Put(hdIndexKey(i), encodeHDValue(false, script)); err != nil {
			return fmt.Errorf("store %v/%d/%d/%d: %w", key.scope, key.account, key.branch, i, err)
		}
		if w.watch.add(ws, addrRef{scope: key.scope, account: key.account, branch: key.branch, index: i}, reserve) {
			grew = true
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("derive %v/%d/%d/%d-%d: %w", key.scope, key.account, key.branch, have, last, err)
	}
	w.watch.derived[key] = last + 1
	return grew, nil
}

// branchExt is the extended public key of one HD branch and the kind of
// address the account derives on it, with what child needs to derive its
// addresses: the public key as a curve point and in compressed form, and
// an HMAC-SHA512 keyed with the chain code.
type branchExt struct {
	key   *hdkeychain.ExtendedKey
	kind  Kind
	point btcec.JacobianPoint
	pub   [33]byte
	mac   hash.Hash
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
	kind := branchKind(sm, props, key.branch)
	if kind == KindScript {
		return nil, fmt.Errorf("%w: account %d of %v derives addresses of an unknown type", ErrCorrupt, key.account, key.scope)
	}
	k, err := props.AccountPubKey.Derive(key.branch)
	if err != nil {
		return nil, fmt.Errorf("derive branch %d of account %d of %v: %w", key.branch, key.account, key.scope, err)
	}
	bk, err := newBranchExt(k, kind)
	if err != nil {
		return nil, err
	}
	w.watch.branches[key] = bk
	return bk, nil
}

// ensureGapOf is ensureGap for any watched script: an HD address's
// account branch (ensureGap), a multisig descriptor's branch
// (msigEnsureGap), nothing for an imported script.
func (w *Wallet) ensureGapOf(b buckets, ref addrRef, height int32) (bool, error) {
	if ref.msig {
		return w.msigEnsureGap(b.own, ref, height)
	}
	return w.ensureGap(b.am, ref, height)
}

// markUsed flags a watched script as used: in hd-scripts for an HD
// address, in the multisig or imported bucket otherwise, and in the watch set. A
// script already flagged is not written again.
func (w *Wallet) markUsed(b buckets, e *watchEntry) error {
	if e.used {
		return nil
	}
	if e.ref.msig {
		if err := msigMarkUsed(b.own, e); err != nil {
			return err
		}
		w.watch.setUsed(e)
		return nil
	}
	if e.ref.imported {
		// The record is the entry's script and flag (load builds the
		// entry from it, import writes both), so it is written from
		// memory, not read back.
		r := importedRecord{ws: *e.ws, used: true}
		if err := b.own.NestedReadWriteBucket(bktImported).Put(e.ws.pkScript, r.encode()); err != nil {
			return fmt.Errorf("mark %x used: %w", e.ws.pkScript, err)
		}
		w.watch.setUsed(e)
		return nil
	}
	if err := hdMarkUsed(b.own, e); err != nil {
		return err
	}
	w.watch.setUsed(e)
	return nil
}
