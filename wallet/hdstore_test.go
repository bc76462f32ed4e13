package wallet

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestBranchChildMatchesHDKeychain checks the wallet's CKDpub against
// hdkeychain's Derive for random branch keys and indexes.
func TestBranchChildMatchesHDKeychain(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "seed")
		master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
		require.NoError(t, err)
		pub, err := master.Neuter()
		require.NoError(t, err)
		bk, err := newBranchExt(pub, KindP2WPKH)
		require.NoError(t, err)
		for _, i := range []uint32{0, 1, rapid.Uint32Range(0, hdkeychain.HardenedKeyStart-1).Draw(t, "index")} {
			want, werr := pub.Derive(i)
			got, gerr := bk.child(i)
			if werr != nil {
				require.True(t, errors.Is(gerr, werr), "index %d: %v vs %v", i, gerr, werr)
				continue
			}
			require.NoError(t, gerr)
			wk, err := want.ECPubKey()
			require.NoError(t, err)
			require.Equal(t, wk.SerializeCompressed(), got.SerializeCompressed(), "index %d", i)
		}
	})
}

// TestBranchChildrenMatchHDKeychain checks a batched derivation across
// batch boundaries against hdkeychain's Derive.
func TestBranchChildrenMatchHDKeychain(t *testing.T) {
	pub, err := accountPriv(t, purposeBIP84, 1).Neuter()
	require.NoError(t, err)
	bk, err := newBranchExt(pub, KindP2WPKH)
	require.NoError(t, err)
	for _, r := range [][2]uint32{{0, 0}, {0, childBatch - 1}, {3, 2*childBatch + 7}, {childBatch, 6*childBatch + 2}, {1<<31 - 5, 1<<31 - 1}} {
		next := r[0]
		require.NoError(t, bk.children(r[0], r[1], func(i uint32, got *btcec.PublicKey) error {
			require.Equal(t, next, i, "indexes in order, none skipped")
			next++
			want, err := pub.Derive(i)
			require.NoError(t, err)
			wk, err := want.ECPubKey()
			require.NoError(t, err)
			require.Equal(t, wk.SerializeCompressed(), got.SerializeCompressed(), "index %d", i)
			return nil
		}))
		require.Equal(t, r[1]+1, next)
	}
	require.Error(t, bk.children(0, hdkeychain.HardenedKeyStart, func(uint32, *btcec.PublicKey) error { return nil }))
}

// TestHDScriptForKey checks hdScriptForKey and hdWatched against
// scriptForKey for every kind an HD account derives.
func TestHDScriptForKey(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	acct, err := accountPriv(t, purposeBIP84, 1).Neuter()
	require.NoError(t, err)
	for _, kind := range []Kind{KindP2PKH, KindP2SHP2WPKH, KindP2WPKH, KindP2TR} {
		for i := uint32(0); i < 5; i++ {
			child, err := acct.Derive(i)
			require.NoError(t, err)
			pub, err := child.ECPubKey()
			require.NoError(t, err)
			want, err := scriptForKey(kind, pub, params)
			require.NoError(t, err)
			script, err := hdScriptForKey(kind, pub)
			require.NoError(t, err)
			got, err := hdWatched(kind, script)
			require.NoError(t, err)
			require.Equal(t, want.pkScript, got.pkScript, "%s %d", kind, i)
			require.Equal(t, want.element, got.element, "%s %d", kind, i)
			require.NotEmpty(t, want.address, "%s %d", kind, i)
			require.Equal(t, want.address, got.addressOn(params), "%s %d", kind, i)
			require.Equal(t, want.kind, got.kind, "%s %d", kind, i)
		}
	}
	_, err = hdWatched(KindP2WPKH, []byte{0x00, 0x14, 1, 2})
	require.ErrorIs(t, err, ErrCorrupt)
}

// format1Fixture is a wallet written by the code of format 1 (HD
// addresses in waddrmgr's rows), by testdata/format1/fixture_test.go.txt
// run in a checkout of that code (commit 46cfd2b): the BIP84 and BIP49
// test accounts with gap limits 5 and 3, reserve 2, and three blocks:
// payments to receive 3, receive 8 and change 1, then a spend of the
// first with change to change 2. expected.json holds its Addresses and
// Balance as that code reported them.
const format1Fixture = "testdata/format1"

// format1Chain rebuilds the fixture's three blocks (the same factory
// sequence as the generator) and returns the chain to continue it.
func format1Chain(t *testing.T, k *testKeys) *testChain {
	f := &txFactory{}
	c := newTestChain(f, 1)
	pay0 := f.tx(nil, output{k.p2wpkh(0, 3), 50_000})
	c.add(pay0)
	c.add(f.tx(nil, output{k.p2wpkh(0, 8), 70_000}, output{k.p2wpkh(1, 1), 10_000}))
	c.add(f.tx([]wire.OutPoint{{Hash: pay0.TxHash(), Index: 0}}, output{foreignScript(7), 40_000}, output{k.p2wpkh(1, 2), 9_000}))
	return c
}

// TestOpenMigratesFormat1 opens a data dir written by the format-1 code:
// Open moves its HD addresses into hd-scripts, the wallet reports what
// the old code reported, opens again without migrating, and syncs on
// from where the old code stopped, deriving past the migrated addresses.
func TestOpenMigratesFormat1(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(format1Fixture, "wallet.db"), filepath.Join(dir, dbFileName))
	raw, err := os.ReadFile(filepath.Join(format1Fixture, "expected.json"))
	require.NoError(t, err)
	var want struct {
		Addresses []AddressInfo `json:"addresses"`
		Balance   Balance       `json:"balance"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&want), "expected.json must name every key as the wallet's JSON does")
	require.NotEmpty(t, want.Addresses)
	require.NotZero(t, want.Balance.Confirmed)

	check := func(w *Wallet) {
		t.Helper()
		format, err := storedFormat(w.db)
		require.NoError(t, err)
		require.Equal(t, uint32(formatVersion), format)
		got, err := w.Addresses()
		require.NoError(t, err)
		require.Equal(t, want.Addresses, got)
		require.Equal(t, want.Balance, mustBalance(t, w))
	}
	w, err := Open(dir)
	require.NoError(t, err)
	check(w)
	requireUsedFlagsMatchStore(t, w)
	require.NoError(t, w.Close())

	w, err = Open(dir)
	require.NoError(t, err)
	defer w.Close()
	check(w)

	// Sync on: a payment to the last derived receive address makes the
	// wallet derive beyond what it migrated, each address the account
	// key's.
	k := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)
	ext := branchKey{waddrmgr.KeyScope{Purpose: purposeBIP84, Coin: 1}, 0, waddrmgr.ExternalBranch}
	last := w.watch.derived[ext] - 1
	c := format1Chain(t, k)
	pay := c.f.tx(nil, output{k.p2wpkh(0, last), 5_000})
	res := mustApply(t, w, c.add(pay).filtered())
	require.Equal(t, []chainhash.Hash{pay.TxHash()}, res.Relevant)
	require.Greater(t, w.watch.derived[ext], last+1)
	for i := uint32(0); i < w.watch.derived[ext]; i++ {
		require.NotNil(t, w.watch.lookup(k.p2wpkh(0, i)), "receive %d watched", i)
	}
	require.Equal(t, want.Balance.Confirmed+5_000, mustBalance(t, w).Confirmed)
	requireUsedFlagsMatchStore(t, w)
	require.NoError(t, w.Flush())
}

// TestMigrateHDFailureLeavesFile checks that a format-1 wallet whose
// migration fails is left as it was: a format-1 file with an address row
// of an unknown branch is refused as corrupt, and stays format 1.
func TestMigrateHDFailureLeavesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, dbFileName)
	copyFile(t, filepath.Join(format1Fixture, "wallet.db"), path)
	db, err := walletdb.Open(dbDriver, path, noFreelistSync, dbOpenTimeout)
	require.NoError(t, err)
	require.NoError(t, walletdb.Update(db, func(tx walletdb.ReadWriteTx) error {
		// A bucket where migrateHD creates hd-scripts: not a bucket.
		return tx.ReadWriteBucket(ownNS).Put(bktHDScripts, []byte{1})
	}))
	require.NoError(t, db.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = Open(dir)
	require.Error(t, err)
	db, err = walletdb.Open(dbDriver, path, noFreelistSync, dbOpenTimeout)
	require.NoError(t, err)
	format, err := storedFormat(db)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.Equal(t, uint32(formatHDInWaddrmgr), format)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, len(before), len(after))
}
