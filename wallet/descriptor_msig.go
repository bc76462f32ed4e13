package wallet

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
)

// How ranged multisig descriptors are watched.
//
// An HD account (a waddrmgr account) derives one key per address, so a
// ranged multisig descriptor cannot be one. The wallet derives it itself, with the
// rules of an HD account: each branch the descriptor covers (receive 0,
// change 1, as its keys' last step before /* or their <0;1> says) is
// derived gap-limit addresses ahead of its last used one, with the same
// lookahead reserve beyond them (keepReserve), marked used by payments and never
// un-derived by a rollback. Every derived address is stored in the
// msig-scripts bucket (output script -> descriptor number, branch, index,
// used), so opening the wallet derives nothing: only a branch that must
// grow parses its descriptor again (from the descriptor record, which
// keeps the text as given) and derives the new addresses. The descriptor
// number is the descriptor record's key (import order); the record holds
// the branches.
//
// A non-ranged multisig descriptor is one script per path, imported like
// an address (see importDescriptor).

// bktMsigScripts is the nested bucket of ownNS holding the derived
// addresses of ranged multisig descriptors, keyed by output script.
var bktMsigScripts = []byte("msig-scripts")

// msigScope is the scope of every multisig addrRef and branchKey: no
// waddrmgr scope (BIP43 purposes start at 1), so a multisig branch never
// collides with an HD account's.
var msigScope = waddrmgr.KeyScope{}

// msigBranch is one watched branch of a ranged multisig descriptor.
type msigBranch struct {
	// derived counts the addresses derived (indexes 0..derived-1).
	derived uint32
	// path is the multipath path that derives the branch.
	path int
}

// msigRecordVersion is the layout of an encoded msig-scripts value.
const msigRecordVersion = 1

// msigRecordSize is its size: version, descriptor number, branch, index
// and the used flag.
const msigRecordSize = 1 + 4 + 4 + 4 + 1

// encodeMsigRecord encodes where a multisig address is and whether it was
// used.
func encodeMsigRecord(ref addrRef, used bool) []byte {
	b := make([]byte, 0, msigRecordSize)
	b = append(b, msigRecordVersion)
	b = binary.BigEndian.AppendUint32(b, ref.account)
	b = binary.BigEndian.AppendUint32(b, ref.branch)
	b = binary.BigEndian.AppendUint32(b, ref.index)
	if used {
		return append(b, 1)
	}
	return append(b, 0)
}

// decodeMsigRecord decodes an msig-scripts value.
func decodeMsigRecord(v []byte) (addrRef, bool, error) {
	if len(v) != msigRecordSize || v[0] != msigRecordVersion || v[13] > 1 {
		return addrRef{}, false, fmt.Errorf("%w: multisig address record malformed", ErrCorrupt)
	}
	ref := addrRef{
		msig:    true,
		scope:   msigScope,
		account: binary.BigEndian.Uint32(v[1:]),
		branch:  binary.BigEndian.Uint32(v[5:]),
		index:   binary.BigEndian.Uint32(v[9:]),
	}
	return ref, v[13] == 1, nil
}

// msigPath returns the multipath path that derives branch br of a
// descriptor watching branches: its position in <0;1>, or 0 for a
// descriptor of one branch.
func msigPath(branches []uint32, br uint32) int {
	if len(branches) == 2 {
		return int(br)
	}
	return 0
}

// loadMultisig adds every derived address of the ranged multisig
// descriptors, in script order (the bucket's), with the branches' derived
// counts.
func loadMultisig(own walletdb.ReadBucket, params *chaincfg.Params, ws *watchSet) error {
	bkt := own.NestedReadBucket(bktMsigScripts)
	if bkt == nil {
		return nil
	}
	recs, err := readDescriptorRecords(own)
	if err != nil {
		return err
	}
	byID := map[uint32]*descriptorRecord{}
	for _, r := range recs {
		if r.multisig && r.ranged {
			byID[r.id] = r
			for _, br := range r.branches {
				ws.msig[branchKey{msigScope, r.id, br}] = &msigBranch{path: msigPath(r.branches, br)}
			}
		}
	}
	return bkt.ForEach(func(k, v []byte) error {
		ref, used, err := decodeMsigRecord(v)
		if err != nil {
			return err
		}
		rec, ok := byID[ref.account]
		key := branchKey{msigScope, ref.account, ref.branch}
		b := ws.msig[key]
		if !ok || b == nil {
			return fmt.Errorf("%w: multisig address of descriptor %d branch %d, which the wallet does not watch", ErrCorrupt, ref.account, ref.branch)
		}
		// k lives in the database's memory map only while the
		// transaction is open; parseScript keeps slices of what it is
		// given.
		s, err := parseScript(bytes.Clone(k), params)
		if err != nil {
			return fmt.Errorf("%w: multisig address %x: %v", ErrCorrupt, k, err)
		}
		s.kind = rec.kind
		b.derived = max(b.derived, ref.index+1)
		ws.addUsed(s, ref, used, false)
		return nil
	})
}

// msigDescriptor returns the parsed descriptor number id, from the cache
// or its stored record.
func (w *Wallet) msigDescriptor(own walletdb.ReadBucket, id uint32) (*watchedDesc, error) {
	if d, ok := w.watch.msigDescs[id]; ok {
		return d, nil
	}
	recs, err := readDescriptorRecords(own)
	if err != nil {
		return nil, err
	}
	var rec *descriptorRecord
	for _, r := range recs {
		if r.id == id && r.multisig {
			rec = r
		}
	}
	if rec == nil {
		return nil, fmt.Errorf("%w: no multisig descriptor %d", ErrCorrupt, id)
	}
	d, err := parseDescriptor(rec.desc, w.net.params)
	if err != nil {
		return nil, fmt.Errorf("%w: stored descriptor %d: %v", ErrCorrupt, id, err)
	}
	w.watch.msigDescs[id] = d
	return d, nil
}

// msigEnsureGap is ensureGap for a multisig address: its branch keeps
// the gap and the lookahead reserve beyond the highest index used.
func (w *Wallet) msigEnsureGap(own walletdb.ReadWriteBucket, ref addrRef, height int32) (bool, error) {
	key := branchKey{msigScope, ref.account, ref.branch}
	if w.watch.msig[key] == nil {
		return false, fmt.Errorf("%w: multisig descriptor %d has no branch %d", ErrCorrupt, ref.account, ref.branch)
	}
	w.noteUse(key, ref.index, height)
	return w.keepReserve(key, w.msigBranch(own, key), height, 0)
}

// msigBranch returns the branchOps of a multisig descriptor's branch.
func (w *Wallet) msigBranch(own walletdb.ReadWriteBucket, key branchKey) branchOps {
	return branchOps{
		derived: func() uint32 { return w.watch.msig[key].derived },
		through: func(last uint32, reserve bool) (bool, error) { return w.msigDeriveThrough(own, key, last, reserve) },
	}
}

// msigDeriveThrough derives the addresses of one multisig branch up to
// and including index last, stores and watches them (as reserve ones when
// reserve is set). It reports whether the element set grew.
func (w *Wallet) msigDeriveThrough(own walletdb.ReadWriteBucket, key branchKey, last uint32, reserve bool) (bool, error) {
	b := w.watch.msig[key]
	if last < b.derived {
		return false, nil
	}
	d, err := w.msigDescriptor(own, key.account)
	if err != nil {
		return false, err
	}
	bkt, err := own.CreateBucketIfNotExists(bktMsigScripts)
	if err != nil {
		return false, fmt.Errorf("multisig addresses bucket: %w", err)
	}
	grew := false
	for i := b.derived; i <= last; i++ {
		ws, err := d.scriptAt(b.path, i, w.net.params)
		if err != nil {
			return false, fmt.Errorf("derive multisig %d/%d/%d: %w", key.account, key.branch, i, err)
		}
		ref := addrRef{msig: true, scope: msigScope, account: key.account, branch: key.branch, index: i}
		if w.watch.lookup(ws.pkScript) != nil {
			// Another descriptor watches the same script (the same
			// keys twice): the first keeps it.
			continue
		}
		if err := bkt.Put(ws.pkScript, encodeMsigRecord(ref, false)); err != nil {
			return false, fmt.Errorf("store multisig address: %w", err)
		}
		if w.watch.add(ws, ref, reserve) {
			grew = true
		}
	}
	b.derived = last + 1
	return grew, nil
}

// msigMarkUsed sets the used flag of a multisig address's record.
func msigMarkUsed(own walletdb.ReadWriteBucket, e *watchEntry) error {
	bkt := own.NestedReadWriteBucket(bktMsigScripts)
	if bkt == nil || bkt.Get(e.ws.pkScript) == nil {
		return fmt.Errorf("%w: multisig address %s has no record", ErrCorrupt, e.ws.address)
	}
	if err := bkt.Put(e.ws.pkScript, encodeMsigRecord(e.ref, true)); err != nil {
		return fmt.Errorf("mark %s used: %w", e.ws.address, err)
	}
	return nil
}

// importMultisig watches the branches of a ranged multisig descriptor
// that will be stored as descriptor number id: it derives the first
// gap-limit addresses of each, and the lookahead reserve beyond them. A descriptor whose first address of a
// branch is already watched gives ErrDuplicate, unwrapped.
func (w *Wallet) importMultisig(own walletdb.ReadWriteBucket, d *watchedDesc, id uint32) ([]uint32, error) {
	branches, paths, err := d.Branches()
	if err != nil {
		return nil, err
	}
	for i := range branches {
		ws, err := d.scriptAt(paths[i], 0, w.net.params)
		if err != nil {
			return nil, err
		}
		if w.watch.lookup(ws.pkScript) != nil {
			return nil, ErrDuplicate
		}
	}
	w.watch.msigDescs[id] = d
	for i, br := range branches {
		key := branchKey{msigScope, id, br}
		w.watch.msig[key] = &msigBranch{path: paths[i]}
		if _, err := w.msigDeriveThrough(own, key, w.gapFor(br)-1, false); err != nil {
			return nil, err
		}
		if _, err := w.keepReserve(key, w.msigBranch(own, key), w.synced.Height, 0); err != nil {
			return nil, err
		}
	}
	return branches, nil
}
