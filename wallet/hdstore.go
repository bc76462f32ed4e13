package wallet

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"runtime"
	"sort"
	"sync"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
)

// How the addresses of HD accounts are stored.
//
// waddrmgr keeps each watch-only account (its extended public key, address
// schema and name) and the sync point. The addresses the wallet derives
// from an account live in the hd-scripts bucket of ownNS: one nested
// bucket per branch, keyed by hdBranchBucketKey (purpose, coin, account,
// branch), mapping each index (4 bytes big-endian) to a flags byte (used)
// and the output script. A stride of addresses is a run of appends in one
// page of one bucket, written in the transaction of the block (or import)
// that derives it; opening the wallet reads the scripts back and derives
// nothing. waddrmgr's per-address rows (each public key encrypted under the
// public crypto key, plus an address index and a used index) are not
// written: they cost more than the derivation itself, and the wallet reads
// none of them.
//
// Each address is derived once, from the branch key the watch set caches
// (branchExt.children): the watch set is the derivation cache the filter
// elements, the relevance lookups and the used marks share.
//
// A wallet of format 1 kept its derived addresses in waddrmgr only; Open
// copies them into hd-scripts with their used flags and moves the wallet to
// format 2 in one transaction (migrateHD). An older bloomwatch refuses a
// format-2 wallet (readMeta's format check) rather than watch an account
// with no addresses.

// bktHDScripts is the nested bucket of ownNS holding the derived addresses
// of the HD accounts, one nested bucket per branch.
var bktHDScripts = []byte("hd-scripts")

// formatHDInWaddrmgr is the wallet format whose HD addresses are
// waddrmgr's rows (migrated by migrateHD).
const formatHDInWaddrmgr = 1

// hdFlagUsed marks a used address in the flags byte of an hd-scripts value.
const hdFlagUsed = 1

// hdBranchBucketKey is the name of a branch's bucket in hd-scripts: the
// scope's purpose and coin, the account and the branch, each 4 bytes
// big-endian, so the buckets sort in the watch order.
func hdBranchBucketKey(key branchKey) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b[0:], key.scope.Purpose)
	binary.BigEndian.PutUint32(b[4:], key.scope.Coin)
	binary.BigEndian.PutUint32(b[8:], key.account)
	binary.BigEndian.PutUint32(b[12:], key.branch)
	return b
}

// hdIndexKey is the key of an address in its branch's bucket.
func hdIndexKey(i uint32) []byte { return binary.BigEndian.AppendUint32(nil, i) }

// encodeHDValue encodes an hd-scripts value: the flags byte, then the
// output script.
func encodeHDValue(used bool, pkScript []byte) []byte {
	v := make([]byte, 1, 1+len(pkScript))
	if used {
		v[0] = hdFlagUsed
	}
	return append(v, pkScript...)
}

// hdBranchBucket returns a branch's bucket, creating hd-scripts and it when
// missing.
func hdBranchBucket(own walletdb.ReadWriteBucket, key branchKey) (walletdb.ReadWriteBucket, error) {
	hd, err := own.CreateBucketIfNotExists(bktHDScripts)
	if err != nil {
		return nil, fmt.Errorf("hd-scripts bucket: %w", err)
	}
	bb, err := hd.CreateBucketIfNotExists(hdBranchBucketKey(key))
	if err != nil {
		return nil, fmt.Errorf("bucket of %v account %d branch %d: %w", key.scope, key.account, key.branch, err)
	}
	return bb, nil
}

// hdScriptForKey returns the output script of kind for a derived public
// key: what scriptForKey computes, without building and encoding an
// address (TestHDScriptForKey compares the two).
func hdScriptForKey(kind Kind, pub *btcec.PublicKey) ([]byte, error) {
	ser := pub.SerializeCompressed()
	switch kind {
	case KindP2WPKH:
		return append([]byte{txscript.OP_0, txscript.OP_DATA_20}, btcutil.Hash160(ser)...), nil
	case KindP2PKH:
		s := make([]byte, 0, 25)
		s = append(s, txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20)
		s = append(s, btcutil.Hash160(ser)...)
		return append(s, txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG), nil
	case KindP2SHP2WPKH:
		redeem := append([]byte{txscript.OP_0, txscript.OP_DATA_20}, btcutil.Hash160(ser)...)
		s := make([]byte, 0, 23)
		s = append(s, txscript.OP_HASH160, txscript.OP_DATA_20)
		s = append(s, btcutil.Hash160(redeem)...)
		return append(s, txscript.OP_EQUAL), nil
	case KindP2TR:
		out := txscript.ComputeTaprootKeyNoScript(pub)
		return append([]byte{txscript.OP_1, txscript.OP_DATA_32}, schnorr.SerializePubKey(out)...), nil
	default:
		return nil, fmt.Errorf("no script for kind %s", kind)
	}
}

// hdWatched returns the watched script of a stored HD address of kind:
// its element is a slice of pkScript (one allocation per address).
func hdWatched(kind Kind, pkScript []byte) (*watchedScript, error) {
	var el []byte
	n := len(pkScript)
	switch {
	case kind == KindP2WPKH && n == 22 && pkScript[0] == txscript.OP_0 && pkScript[1] == txscript.OP_DATA_20:
		el = pkScript[2:22]
	case kind == KindP2PKH && n == 25 && pkScript[0] == txscript.OP_DUP && pkScript[1] == txscript.OP_HASH160 &&
		pkScript[2] == txscript.OP_DATA_20 && pkScript[23] == txscript.OP_EQUALVERIFY && pkScript[24] == txscript.OP_CHECKSIG:
		el = pkScript[3:23]
	case kind == KindP2SHP2WPKH && n == 23 && pkScript[0] == txscript.OP_HASH160 && pkScript[1] == txscript.OP_DATA_20 &&
		pkScript[22] == txscript.OP_EQUAL:
		el = pkScript[2:22]
	case kind == KindP2TR && n == 34 && pkScript[0] == txscript.OP_1 && pkScript[1] == txscript.OP_DATA_32:
		el = pkScript[2:34]
	default:
		return nil, fmt.Errorf("%w: stored %s address script %x malformed", ErrCorrupt, kind, pkScript)
	}
	// The address text is encoded when it is shown (addressOn): most
	// derived addresses, a reserve's, never are.
	return &watchedScript{pkScript: pkScript, element: el[:len(el):len(el)], kind: kind}, nil
}

// child derives the public key at index i of the branch (BIP32 CKDpub),
// as hdkeychain.ExtendedKey.Derive does; see children.
func (bk *branchExt) child(i uint32) (*btcec.PublicKey, error) {
	var out *btcec.PublicKey
	err := bk.children(i, i, func(_ uint32, pub *btcec.PublicKey) error {
		out = pub
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, hdkeychain.ErrInvalidChild
	}
	return out, nil
}

// childBatch is how many children share one field inversion in children.
const childBatch = 256

// children derives the public keys at indexes from through to of the
// branch (BIP32 CKDpub, as hdkeychain.ExtendedKey.Derive does) and calls
// fn with each in index order, skipping an index whose key is invalid
// (hdkeychain's ErrInvalidChild: odds about 2^-127). It works from the
// branch's public key kept as a curve point: hdkeychain parses
// (decompresses) the parent key at every call and the caller the child's
// once more, two square roots per address; and the children of a batch
// of childBatch share one field inversion to affine coordinates
// (Montgomery's trick) instead of one each. A range of several batches
// is derived on up to GOMAXPROCS goroutines, one batch each at a time,
// and handed to fn in order as each window of batches completes: a
// first sync of a large wallet derives thousands of addresses while the
// peer has nothing to send. TestBranchChildMatchesHDKeychain and
// TestBranchChildrenMatchHDKeychain compare them with hdkeychain's.
func (bk *branchExt) children(from, to uint32, fn func(i uint32, pub *btcec.PublicKey) error) error {
	if to >= hdkeychain.HardenedKeyStart {
		return fmt.Errorf("derive %d: hardened index from a public key", to)
	}
	batches := (uint64(to)-uint64(from))/childBatch + 1
	workers := min(uint64(runtime.GOMAXPROCS(0)), batches)
	if workers <= 1 {
		var d childDeriver
		for start := uint64(from); start <= uint64(to); start += childBatch {
			d.derive(bk, bk.mac, start, min(uint64(to), start+childBatch-1))
			if err := d.hand(fn); err != nil {
				return err
			}
		}
		return nil
	}
	ds := make([]childDeriver, workers)
	macs := make([]hash.Hash, workers)
	for k := range macs {
		macs[k] = hmac.New(sha512.New, bk.key.ChainCode())
	}
	var wg sync.WaitGroup
	for start := uint64(from); start <= uint64(to); start += workers * childBatch {
		n := 0
		for k := range ds {
			s := start + uint64(k)*childBatch
			if s > uint64(to) {
				break
			}
			n++
			wg.Add(1)
			go func(d *childDeriver, mac hash.Hash, s uint64) {
				defer wg.Done()
				d.derive(bk, mac, s, min(uint64(to), s+childBatch-1))
			}(&ds[k], macs[k], s)
		}
		wg.Wait()
		for k := 0; k < n; k++ {
			if err := ds[k].hand(fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// childDeriver holds one batch of children (at most childBatch) of a
// branch while they are brought to affine coordinates.
type childDeriver struct {
	pts [childBatch]btcec.JacobianPoint
	idx [childBatch]uint32
	acc [childBatch]btcec.FieldVal
	sum [64]byte
	n   int
}

// derive computes the children start through end (end - start <
// childBatch) of bk with mac, an HMAC-SHA512 keyed with its chain code
// that no other goroutine uses meanwhile.
func (d *childDeriver) derive(bk *branchExt, mac hash.Hash, start, end uint64) {
	var (
		ib   [4]byte
		il   btcec.ModNScalar
		zInv btcec.FieldVal
	)
	n := 0
	for i := uint32(start); uint64(i) <= end; i++ {
		mac.Reset()
		_, _ = mac.Write(bk.pub[:])
		binary.BigEndian.PutUint32(ib[:], i)
		_, _ = mac.Write(ib[:])
		sum := mac.Sum(d.sum[:0])
		if overflow := il.SetByteSlice(sum[:32]); overflow || il.IsZero() {
			continue
		}
		p := &d.pts[n]
		btcec.ScalarBaseMultNonConst(&il, p)
		btcec.AddNonConst(p, &bk.point, p)
		p.Z.Normalize()
		if p.Z.IsZero() {
			continue // the point at infinity
		}
		d.idx[n] = i
		n++
	}
	d.n = n
	if n == 0 {
		return
	}
	// acc[k] = Z_0 * ... * Z_k; one inversion of acc[n-1], then
	// walking back, zInv = 1/Z_k and the inverse of acc[k-1].
	pts, acc := &d.pts, &d.acc
	acc[0].Set(&pts[0].Z)
	for k := 1; k < n; k++ {
		acc[k].Set(&acc[k-1]).Mul(&pts[k].Z).Normalize()
	}
	var inv btcec.FieldVal
	inv.Set(&acc[n-1]).Inverse()
	affine := func(p *btcec.JacobianPoint, zInv *btcec.FieldVal) {
		var z2 btcec.FieldVal
		z2.SquareVal(zInv)
		p.X.Mul(&z2).Normalize()
		z2.Mul(zInv)
		p.Y.Mul(&z2).Normalize()
		p.Z.SetInt(1)
	}
	for k := n - 1; k >= 1; k-- {
		zInv.Set(&inv).Mul(&acc[k-1]).Normalize()
		inv.Mul(&pts[k].Z).Normalize()
		affine(&pts[k], &zInv)
	}
	affine(&pts[0], &inv)
}

// hand calls fn with each derived child in index order.
func (d *childDeriver) hand(fn func(i uint32, pub *btcec.PublicKey) error) error {
	for k := 0; k < d.n; k++ {
		if err := fn(d.idx[k], btcec.NewPublicKey(&d.pts[k].X, &d.pts[k].Y)); err != nil {
			return err
		}
	}
	return nil
}

// newBranchExt prepares a branch key for child.
func newBranchExt(k *hdkeychain.ExtendedKey, kind Kind) (*branchExt, error) {
	pub, err := k.ECPubKey()
	if err != nil {
		return nil, fmt.Errorf("branch key: %w", err)
	}
	bk := &branchExt{key: k, kind: kind, mac: hmac.New(sha512.New, k.ChainCode())}
	copy(bk.pub[:], pub.SerializeCompressed())
	pub.AsJacobian(&bk.point)
	return bk, nil
}

// branchKind returns the kind of address an account derives on branch.
func branchKind(sm *waddrmgr.ScopedKeyManager, props *waddrmgr.AccountProperties, branch uint32) Kind {
	schema := sm.AddrSchema()
	if props.AddrSchema != nil {
		schema = *props.AddrSchema
	}
	t := schema.ExternalAddrType
	if branch == waddrmgr.InternalBranch {
		t = schema.InternalAddrType
	}
	return kindOfAddrType(t)
}

// loadAccounts adds every derived address of every HD account from
// hd-scripts, in (scope, account, branch, index) order, with the branches'
// derived counts.
func loadAccounts(am, own walletdb.ReadBucket, mgr *waddrmgr.Manager, params *chaincfg.Params, ws *watchSet) error {
	hd := own.NestedReadBucket(bktHDScripts)
	if hd == nil {
		return fmt.Errorf("%w: bucket %q missing", ErrCorrupt, bktHDScripts)
	}
	for _, sm := range sortedScopes(mgr) {
		scope := sm.Scope()
		accounts, err := hdAccounts(am, sm)
		if err != nil {
			return err
		}
		for _, acct := range accounts {
			props, err := sm.AccountProperties(am, acct)
			if err != nil {
				return fmt.Errorf("%w: account %d of %v: %v", ErrCorrupt, acct, scope, err)
			}
			for _, br := range bothBranches {
				key := branchKey{scope, acct, br}
				bb := hd.NestedReadBucket(hdBranchBucketKey(key))
				if bb == nil {
					continue
				}
				kind := branchKind(sm, props, br)
				var derived uint32
				var slab scriptSlab
				err := bb.ForEach(func(k, v []byte) error {
					if len(k) != 4 || len(v) < 1 || v[0]&^hdFlagUsed != 0 {
						return fmt.Errorf("%w: address record of %v account %d branch %d malformed", ErrCorrupt, scope, acct, br)
					}
					i := binary.BigEndian.Uint32(k)
					s, err := hdWatched(kind, slab.clone(v[1:]))
					if err != nil {
						return err
					}
					ws.addUsed(s, addrRef{scope: scope, account: acct, branch: br, index: i}, v[0]&hdFlagUsed != 0, false)
					derived = i + 1
					return nil
				})
				if err != nil {
					return err
				}
				ws.derived[key] = derived
			}
		}
	}
	return nil
}

// scriptSlab copies the scripts read from a database transaction (valid
// only inside it) into shared chunks: one allocation per 4 KiB of scripts
// instead of one per address.
type scriptSlab struct{ buf []byte }

// clone returns a copy of b in the slab.
func (s *scriptSlab) clone(b []byte) []byte {
	if cap(s.buf)-len(s.buf) < len(b) {
		s.buf = make([]byte, 0, max(4096, len(b)))
	}
	off := len(s.buf)
	s.buf = append(s.buf, b...)
	return s.buf[off:len(s.buf):len(s.buf)]
}

// hdAccounts returns a scope's accounts (not waddrmgr's imported-address
// account), sorted.
func hdAccounts(am walletdb.ReadBucket, sm *waddrmgr.ScopedKeyManager) ([]uint32, error) {
	var accounts []uint32
	if err := sm.ForEachAccount(am, func(acct uint32) error {
		if acct != waddrmgr.ImportedAddrAccount {
			accounts = append(accounts, acct)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%w: accounts of %v: %v", ErrCorrupt, sm.Scope(), err)
	}
	sort.Slice(accounts, func(i, j int) bool { return accounts[i] < accounts[j] })
	return accounts, nil
}

// hdMarkUsed sets the used flag of an HD address in hd-scripts. The value
// is written from the watch entry, whose script is the stored one (load
// builds the entries from hd-scripts and deriveThrough stores each one it
// adds, in the same transaction), so nothing is read back.
func hdMarkUsed(own walletdb.ReadWriteBucket, e *watchEntry) error {
	key := branchKey{e.ref.scope, e.ref.account, e.ref.branch}
	var bb walletdb.ReadWriteBucket
	if hd := own.NestedReadWriteBucket(bktHDScripts); hd != nil {
		bb = hd.NestedReadWriteBucket(hdBranchBucketKey(key))
	}
	if bb == nil {
		return fmt.Errorf("%w: address script %x has no branch bucket", ErrCorrupt, e.ws.pkScript)
	}
	if err := bb.Put(hdIndexKey(e.ref.index), encodeHDValue(true, e.ws.pkScript)); err != nil {
		return fmt.Errorf("mark %x used: %w", e.ws.pkScript, err)
	}
	return nil
}

// storedFormat returns the format record of a wallet database (0 when it
// has none: not a wallet, which load reports).
func storedFormat(db walletdb.DB) (uint32, error) {
	var format uint32
	err := walletdb.View(db, func(tx walletdb.ReadTx) error {
		own := tx.ReadBucket(ownNS)
		if own == nil {
			return nil
		}
		if v := own.Get(keyFormat); len(v) == 4 {
			format = binary.BigEndian.Uint32(v)
		}
		return nil
	})
	return format, err
}

// migrateHD moves a format-1 wallet to format 2, in one transaction: every
// derived address of every HD account, with its used flag, is read from
// waddrmgr and written to hd-scripts (waddrmgr's rows stay, unread). A
// wallet of another format is left as it is. A failure leaves the file as
// it was.
func migrateHD(db walletdb.DB) error {
	format, err := storedFormat(db)
	if err != nil {
		return err
	}
	if format != formatHDInWaddrmgr {
		return nil
	}
	return walletdb.Update(db, func(tx walletdb.ReadWriteTx) error {
		am, own := tx.ReadWriteBucket(waddrmgrNS), tx.ReadWriteBucket(ownNS)
		if am == nil {
			return fmt.Errorf("%w: not a bloomwatch wallet (namespaces missing)", ErrCorrupt)
		}
		net, err := resolveNetwork(string(own.Get(keyNetwork)))
		if err != nil {
			return fmt.Errorf("%w: stored network: %v", ErrCorrupt, err)
		}
		mgr, err := waddrmgr.Open(am, publicPassphrase, net.params)
		if err != nil {
			return fmt.Errorf("%w: address manager: %v", ErrCorrupt, err)
		}
		defer mgr.Close()
		if _, err := own.CreateBucketIfNotExists(bktHDScripts); err != nil {
			return fmt.Errorf("hd-scripts bucket: %w", err)
		}
		for _, sm := range sortedScopes(mgr) {
			accounts, err := hdAccounts(am, sm)
			if err != nil {
				return err
			}
			for _, acct := range accounts {
				if err := migrateAccount(am, own, sm, acct); err != nil {
					return err
				}
			}
		}
		return putUint32(own, keyFormat, formatVersion)
	})
}

// migrateAccount copies one waddrmgr account's derived addresses into
// hd-scripts.
func migrateAccount(am walletdb.ReadBucket, own walletdb.ReadWriteBucket, sm *waddrmgr.ScopedKeyManager, acct uint32) error {
	scope := sm.Scope()
	type row struct {
		index  uint32
		script []byte
		used   bool
	}
	rows := map[uint32][]row{}
	err := sm.ForEachAccountAddress(am, acct, func(ma waddrmgr.ManagedAddress) error {
		pka, ok := ma.(waddrmgr.ManagedPubKeyAddress)
		if !ok {
			return nil
		}
		_, path, ok := pka.DerivationInfo()
		if !ok {
			return nil
		}
		s, err := scriptForManaged(ma)
		if err != nil {
			return err
		}
		rows[path.Branch] = append(rows[path.Branch], row{path.Index, s.pkScript, ma.Used(am)})
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: addresses of account %d of %v: %v", ErrCorrupt, acct, scope, err)
	}
	for br, rs := range rows {
		if br != waddrmgr.ExternalBranch && br != waddrmgr.InternalBranch {
			return fmt.Errorf("%w: account %d of %v has addresses on branch %d", ErrCorrupt, acct, scope, br)
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].index < rs[j].index })
		bb, err := hdBranchBucket(own, branchKey{scope, acct, br})
		if err != nil {
			return err
		}
		for _, r := range rs {
			if err := bb.Put(hdIndexKey(r.index), encodeHDValue(r.used, r.script)); err != nil {
				return fmt.Errorf("migrate %v account %d branch %d: %w", scope, acct, br, err)
			}
		}
	}
	return nil
}

// errNoWriteTx reports a derivation outside a write transaction.
var errNoWriteTx = errors.New("derivation outside a write transaction")

// writeOwn returns ownNS of the open write transaction (the batch, or the
// one Create initializes the wallet in).
func (w *Wallet) writeOwn() (walletdb.ReadWriteBucket, error) {
	if w.batch == nil {
		return nil, errNoWriteTx
	}
	own := w.batch.tx.ReadWriteBucket(ownNS)
	if own == nil {
		return nil, fmt.Errorf("%w: namespaces missing", ErrCorrupt)
	}
	return own, nil
}
