package wallet

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/btcsuite/btcwallet/wtxmgr"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

// testMnemonic is the BIP39 mnemonic of the BIP44/49/84 test vectors.
const testMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

// bip39Seed derives the BIP39 seed of a mnemonic with an empty passphrase.
func bip39Seed(t testing.TB, mnemonic string) []byte {
	t.Helper()
	const (
		bip39Rounds  = 2048
		bip39SeedLen = 64
	)
	seed, err := pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"), bip39Rounds, bip39SeedLen)
	require.NoError(t, err)
	return seed
}

// accountPriv derives the account private key m/purpose'/coin'/0' of the
// test mnemonic.
func accountPriv(t testing.TB, purpose, coin uint32) *hdkeychain.ExtendedKey {
	t.Helper()
	master, err := hdkeychain.NewMaster(bip39Seed(t, testMnemonic), &chaincfg.MainNetParams)
	require.NoError(t, err)
	k := master
	for _, i := range []uint32{purpose, coin, 0} {
		k, err = k.Derive(hdkeychain.HardenedKeyStart + i)
		require.NoError(t, err)
	}
	return k
}

// accountXpub returns the account extended public key of the test
// mnemonic, serialized with the given version.
func accountXpub(t testing.TB, purpose, coin uint32, version hdVersion) string {
	t.Helper()
	pub, err := accountPriv(t, purpose, coin).Neuter()
	require.NoError(t, err)
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], uint32(version))
	pub, err = pub.CloneWithVersion(v[:])
	require.NoError(t, err)
	return pub.String()
}

// testKeys derives child public keys of an account key for building
// payments in tests.
type testKeys struct {
	t      testing.TB
	acct   *hdkeychain.ExtendedKey
	params *chaincfg.Params
}

func newTestKeys(t testing.TB, purpose, coin uint32, params *chaincfg.Params) *testKeys {
	pub, err := accountPriv(t, purpose, coin).Neuter()
	require.NoError(t, err)
	return &testKeys{t: t, acct: pub, params: params}
}

// p2wpkh returns the P2WPKH output script of branch/index.
func (k *testKeys) p2wpkh(branch, index uint32) []byte {
	k.t.Helper()
	br, err := k.acct.Derive(branch)
	require.NoError(k.t, err)
	child, err := br.Derive(index)
	require.NoError(k.t, err)
	pk, err := child.ECPubKey()
	require.NoError(k.t, err)
	addr, err := btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(pk.SerializeCompressed()), k.params)
	require.NoError(k.t, err)
	script, err := txscript.PayToAddrScript(addr)
	require.NoError(k.t, err)
	return script
}

// foreignScript returns a P2WPKH script nobody in the test watches.
func foreignScript(n uint32) []byte {
	var h [20]byte
	binary.BigEndian.PutUint32(h[:], n)
	h[19] = 0xee
	script, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(h[:]).Script()
	return script
}

// output is one output of a test transaction.
type output struct {
	script []byte
	value  int64
}

// txFactory builds distinct test transactions.
type txFactory struct{ n uint32 }

// external returns an outpoint of a transaction outside the wallet.
func (f *txFactory) external() wire.OutPoint {
	f.n++
	var h chainhash.Hash
	binary.BigEndian.PutUint32(h[:], f.n)
	h[31] = 0xab
	return wire.OutPoint{Hash: h, Index: f.n % 3}
}

// tx builds a transaction spending ins (an external outpoint when empty)
// to outs.
func (f *txFactory) tx(ins []wire.OutPoint, outs ...output) *wire.MsgTx {
	tx := wire.NewMsgTx(wire.TxVersion)
	if len(ins) == 0 {
		ins = []wire.OutPoint{f.external()}
	}
	for _, op := range ins {
		in := wire.NewTxIn(&op, nil, [][]byte{{0x30, 0x44}, {0x02}})
		tx.AddTxIn(in)
	}
	for _, o := range outs {
		tx.AddTxOut(wire.NewTxOut(o.value, o.script))
	}
	f.n++
	tx.LockTime = f.n // keeps identical payments distinct
	return tx
}

// coinbase builds a coinbase paying a foreign script.
func (f *txFactory) coinbase(height int32) *wire.MsgTx {
	tx := wire.NewMsgTx(wire.TxVersion)
	sig, _ := txscript.NewScriptBuilder().AddInt64(int64(height)).AddInt64(int64(f.n)).Script()
	tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), sig, nil))
	tx.AddTxOut(wire.NewTxOut(50*btcutil.SatoshiPerBitcoin, foreignScript(0xc0)))
	f.n++
	return tx
}

// fullBlock is a test block with all its transactions.
type fullBlock struct {
	height int32
	header wire.BlockHeader
	txs    []*wire.MsgTx
}

// testChain builds connected blocks.
type testChain struct {
	f      *txFactory
	blocks []*fullBlock
	prev   chainhash.Hash
	height int32
	start  time.Time
}

// newTestChain starts a chain whose next block is at height start.
func newTestChain(f *txFactory, start int32) *testChain {
	return &testChain{
		f:      f,
		height: start - 1,
		prev:   chainhash.Hash{0x01, byte(start)},
		start:  time.Unix(1_700_000_000, 0),
	}
}

// add mines a block holding a coinbase then txs.
func (c *testChain) add(txs ...*wire.MsgTx) *fullBlock {
	return c.addBlockWithCoinbase(c.f.coinbase(c.height+1), txs...)
}

// addBlockWithCoinbase mines a block holding the given coinbase then txs.
func (c *testChain) addBlockWithCoinbase(coinbase *wire.MsgTx, txs ...*wire.MsgTx) *fullBlock {
	c.height++
	all := append([]*wire.MsgTx{coinbase}, txs...)
	utxs := make([]*btcutil.Tx, len(all))
	for i, tx := range all {
		utxs[i] = btcutil.NewTx(tx)
	}
	root := blockchain.CalcMerkleRoot(utxs, false)
	b := &fullBlock{
		height: c.height,
		header: wire.BlockHeader{
			Version:    4,
			PrevBlock:  c.prev,
			MerkleRoot: root,
			Timestamp:  c.start.Add(time.Duration(c.height) * 10 * time.Minute),
			Bits:       0x207fffff,
			Nonce:      uint32(c.height),
		},
		txs: all,
	}
	c.prev = b.header.BlockHash()
	c.blocks = append(c.blocks, b)
	return b
}

// fork returns a chain that continues from the block at height (which
// must be in c), sharing the factory.
func (c *testChain) fork(height int32) *testChain {
	n := &testChain{f: c.f, start: c.start.Add(time.Second)}
	for _, b := range c.blocks {
		if b.height <= height {
			n.blocks = append(n.blocks, b)
		}
	}
	last := n.blocks[len(n.blocks)-1]
	n.height, n.prev = last.height, last.header.BlockHash()
	return n
}

// filtered delivers the block's transactions at the given positions (all
// but the coinbase when none are given), as a peer's merkleblock would.
func (b *fullBlock) filtered(positions ...int) *watch.FilteredBlock {
	if len(positions) == 0 {
		for i := 1; i < len(b.txs); i++ {
			positions = append(positions, i)
		}
	}
	fb := &watch.FilteredBlock{
		Height:   b.height,
		Hash:     b.header.BlockHash(),
		Header:   b.header,
		TotalTxs: uint32(len(b.txs)),
	}
	for _, p := range positions {
		fb.Txs = append(fb.Txs, b.txs[p])
		fb.TxIndexes = append(fb.TxIndexes, uint32(p))
	}
	return fb
}

// newRegtestWallet creates a wallet watching the BIP84 test account on
// regtest.
func newRegtestWallet(t testing.TB, opts ...Option) (*Wallet, *testKeys) {
	t.Helper()
	w, err := Create(t.TempDir(), CreateConfig{
		Network: "regtest",
		Xpubs:   []string{accountXpub(t, purposeBIP84, 1, versionVpub)},
	}, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w, newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)
}

// mustApply applies a block and fails the test on error.
func mustApply(t testing.TB, w *Wallet, fb *watch.FilteredBlock) watch.BlockResult {
	t.Helper()
	res, err := w.ApplyBlock(fb)
	require.NoError(t, err)
	return res
}

// mustBalance returns the wallet's balance.
func mustBalance(t testing.TB, w *Wallet) Balance {
	t.Helper()
	b, err := w.Balance()
	require.NoError(t, err)
	return b
}

// deltaTracker keeps a copy of the wallet's elements the way the node
// does: read once, then changed only by the deltas the wallet reports.
type deltaTracker struct {
	t    testing.TB
	w    *Wallet
	data map[string]bool
	ops  map[wire.OutPoint]bool
}

// newDeltaTracker reads the wallet's elements once.
func newDeltaTracker(t testing.TB, w *Wallet) *deltaTracker {
	t.Helper()
	els, err := w.FilterElements()
	require.NoError(t, err)
	d := &deltaTracker{t: t, w: w, data: map[string]bool{}, ops: map[wire.OutPoint]bool{}}
	d.apply(watch.ElementDelta{Data: els.Data, OutPoints: els.OutPoints})
	return d
}

// apply applies one delta.
func (d *deltaTracker) apply(delta watch.ElementDelta) {
	for _, e := range delta.Due {
		require.True(d.t, d.data[string(e)], "delta reports %x due, which it never added", e)
	}
	for _, list := range [][][]byte{delta.Data, delta.Reserve} {
		for _, e := range list {
			d.data[string(e)] = true
		}
	}
	for _, op := range delta.OutPoints {
		d.ops[op] = true
	}
	for _, op := range delta.Spent {
		require.True(d.t, d.ops[op], "delta removes %v, which it never added", op)
		delete(d.ops, op)
	}
}

// check requires the tracked copy to equal the wallet's elements read
// afresh (which also restarts the wallet's delta log).
func (d *deltaTracker) check() {
	d.t.Helper()
	els, err := d.w.FilterElements()
	require.NoError(d.t, err)
	data := map[string]bool{}
	for _, e := range els.Data {
		data[string(e)] = true
	}
	ops := map[wire.OutPoint]bool{}
	for _, op := range els.OutPoints {
		ops[op] = true
	}
	require.Equal(d.t, data, d.data, "data elements built from deltas")
	require.Equal(d.t, ops, d.ops, "outpoints built from deltas")
	requireOutpointsMatchStore(d.t, d.w)
}

// requireOutpointsMatchStore requires the wallet's outpoint set and guards,
// however it maintained them, to equal what a full read of wtxmgr through
// its public API gives (UnspentOutputs, which decodes a transaction per
// output), and so does the walk of wtxmgr's unspent index Open uses; and
// the coins Balance and UTXOs read to equal those read through
// UnspentOutputs: as the coin cache holds them, read from the database
// with the cache emptied, and read again from the cache that read filled.
// The confirmed history as the history cache holds it must equal a full
// read of wtxmgr's confirmed transactions.
func requireOutpointsMatchStore(t testing.TB, w *Wallet) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var ops, guards, walked, walkedGuards map[wire.OutPoint]struct{}
	var kept, coins, warm, want []coin
	var history, wantHistory []minedTx
	require.NoError(t, w.view(func(b readBuckets) error {
		var err error
		if ops, guards, err = referenceOutpoints(b.tm, w.txStore); err != nil {
			return err
		}
		if walked, walkedGuards, err = unspentOutpoints(b.tm, w.txStore); err != nil {
			return err
		}
		ps, err := w.readPending(b.tm)
		if err != nil {
			return err
		}
		if kept, err = w.readCoins(b.tm, ps); err != nil {
			return err
		}
		w.coins.reset()
		if coins, err = w.readCoins(b.tm, ps); err != nil {
			return err
		}
		// Again, from the coin cache the cold read filled.
		if warm, err = w.readCoins(b.tm, ps); err != nil {
			return err
		}
		if want, err = referenceCoins(w, b.tm, ps); err != nil {
			return err
		}
		h, err := w.minedHistory(b.tm)
		if err != nil {
			return err
		}
		h.each(func(m *minedTx) { history = append(history, *m) })
		if wantHistory, err = referenceHistory(w, b.tm); err != nil {
			return err
		}
		fresh, _, err := loadPending(b.tm, b.own, w.txStore, w.now())
		if err != nil {
			return err
		}
		require.Len(t, w.pending, len(fresh), "pending entries = the unconfirmed set")
		for h, e := range fresh {
			require.Contains(t, w.pending, h)
			require.Equal(t, e.pendingCost, w.pending[h].pendingCost, "budget cost of %v", h)
		}
		return nil
	}))
	require.Equal(t, ops, w.watch.outpoints, "watched outpoints = wtxmgr's unspent outputs and pending spends")
	require.Equal(t, guards, w.watch.guards, "guards = other inputs of pending transactions")
	require.Equal(t, ops, walked, "the unspent index walk = UnspentOutputs")
	require.Equal(t, guards, walkedGuards)
	byOp := func(cs []coin) map[wire.OutPoint]coin {
		m := make(map[wire.OutPoint]coin, len(cs))
		for _, c := range cs {
			m[c.op] = c
		}
		return m
	}
	require.Equal(t, byOp(want), byOp(kept), "coins as the cache kept them = coins read through UnspentOutputs")
	require.Equal(t, byOp(want), byOp(coins), "coins read once per transaction = coins read through UnspentOutputs")
	require.Equal(t, byOp(want), byOp(warm), "coins read from the cache = coins read through UnspentOutputs")
	require.Equal(t, wantHistory, history, "the history cache = wtxmgr's confirmed transactions")
}

// referenceHistory reads every confirmed transaction through wtxmgr's
// RangeTransactions, in its order, as the history cache must hold them.
func referenceHistory(w *Wallet, tm walletdb.ReadBucket) ([]minedTx, error) {
	var out []minedTx
	err := w.txStore.RangeTransactions(tm, 0, math.MaxInt32, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			out = append(out, minedTx{txid: d.Hash, height: d.Block.Height, block: d.Block.Hash,
				time: d.Block.Time, delta: netAmount(d)})
		}
		return false, nil
	})
	return out, err
}

// referenceOutpoints is unspentOutpoints through wtxmgr's public API
// (UnspentOutputs): what the wallet did before it walked the unspent
// index.
func referenceOutpoints(tm walletdb.ReadBucket, store *wtxmgr.Store) (ops, guards map[wire.OutPoint]struct{}, err error) {
	credits, err := store.UnspentOutputs(tm)
	if err != nil {
		return nil, nil, err
	}
	ops = make(map[wire.OutPoint]struct{}, len(credits))
	for _, c := range credits {
		ops[c.OutPoint] = struct{}{}
	}
	guards = make(map[wire.OutPoint]struct{})
	err = store.RangeTransactions(tm, noHeight, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			debit := make(map[uint32]bool, len(d.Debits))
			for _, deb := range d.Debits {
				ops[d.MsgTx.TxIn[deb.Index].PreviousOutPoint] = struct{}{}
				debit[deb.Index] = true
			}
			for j, in := range d.MsgTx.TxIn {
				if !debit[uint32(j)] {
					guards[in.PreviousOutPoint] = struct{}{}
				}
			}
		}
		return false, nil
	})
	return ops, guards, err
}

// referenceCoins is readCoins through wtxmgr's UnspentOutputs and the
// unconfirmed debits: what the wallet did before it read each
// transaction once.
func referenceCoins(w *Wallet, tm walletdb.ReadBucket, ps *pendingSet) ([]coin, error) {
	credits, err := w.txStore.UnspentOutputs(tm)
	if err != nil {
		return nil, err
	}
	out := make([]coin, 0, len(credits))
	have := make(map[wire.OutPoint]struct{}, len(credits))
	for _, c := range credits {
		out = append(out, coin{op: c.OutPoint, amount: c.Amount, height: c.Height, pkScript: c.PkScript, coinbase: c.FromCoinBase})
		have[c.OutPoint] = struct{}{}
	}
	for _, p := range ps.txs {
		d := p.details
		for _, deb := range d.Debits {
			prev := d.MsgTx.TxIn[deb.Index].PreviousOutPoint
			if _, ok := have[prev]; ok {
				continue
			}
			c := coin{op: prev, amount: deb.Amount, height: noHeight}
			if parent, ok := ps.txs[prev.Hash]; ok {
				c.pkScript = parent.details.MsgTx.TxOut[prev.Index].PkScript
			} else {
				md, err := w.txStore.TxDetails(tm, &prev.Hash)
				if err != nil || md == nil {
					return nil, fmt.Errorf("credit %v: %v", prev, errOrMissing(err))
				}
				c.height = md.Block.Height
				c.pkScript = md.MsgTx.TxOut[prev.Index].PkScript
				c.coinbase = blockchain.IsCoinBaseTx(&md.MsgTx)
			}
			have[prev] = struct{}{}
			out = append(out, c)
		}
	}
	for i := range out {
		c := &out[i]
		c.spentBy = ps.spenders[c.op]
		if c.height < 0 {
			if p, ok := ps.txs[c.op.Hash]; ok {
				c.conflicted = p.conflicted
			}
		}
	}
	return out, nil
}

// mustRollback rolls w back to height and returns the delta.
func mustRollback(t testing.TB, w *Wallet, height int32) watch.ElementDelta {
	t.Helper()
	d, err := w.Rollback(height)
	require.NoError(t, err)
	return d
}
