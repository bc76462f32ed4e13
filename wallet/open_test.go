package wallet

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

// snapshot is everything a caller can read from a wallet.
type snapshot struct {
	Synced    watch.SyncPoint
	Birthday  int32
	Network   string
	Balance   Balance
	Txs       []TxSummary
	UTXOs     []UTXO
	Addresses []AddressInfo
	Stats     Stats
	Data      [][]byte
	OutPoints []wire.OutPoint
	FPs       []FalsePositive
}

func takeSnapshot(t testing.TB, w *Wallet) snapshot {
	t.Helper()
	var s snapshot
	var err error
	s.Synced, err = w.SyncedTo()
	require.NoError(t, err)
	s.Birthday, s.Network = w.Birthday(), w.Network()
	s.Balance = mustBalance(t, w)
	s.Txs, err = w.Txs()
	require.NoError(t, err)
	for i := range s.Txs {
		s.Txs[i].Time = s.Txs[i].Time.UTC()
	}
	s.UTXOs, err = w.UTXOs()
	require.NoError(t, err)
	s.Addresses, err = w.Addresses()
	require.NoError(t, err)
	s.Stats, err = w.Stats()
	require.NoError(t, err)
	el, err := w.FilterElements()
	require.NoError(t, err)
	s.Data, s.OutPoints = el.Data, el.OutPoints
	s.FPs, err = w.FalsePositives(0)
	require.NoError(t, err)
	return s
}

// requireSameState compares snapshots; the element order may differ (a
// reopened wallet lists elements by derivation path, a running one in the
// order it derived them; outpoints come in no particular order).
func requireSameState(t testing.TB, want, got snapshot) {
	t.Helper()
	require.ElementsMatch(t, want.Data, got.Data)
	require.ElementsMatch(t, want.OutPoints, got.OutPoints)
	want.Data, got.Data = nil, nil
	want.OutPoints, got.OutPoints = nil, nil
	require.Equal(t, want, got)
}

func TestReopenRestoresState(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{
		Network:     "regtest",
		Xpubs:       []string{accountXpub(t, purposeBIP84, 1, versionVpub)},
		Addresses:   []string{"mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV"},
		Birthday:    100,
		GapExternal: 7,
		GapInternal: 4,
	}, WithBatch(50, 0), WithClock(fixedClock()))
	require.NoError(t, err)
	keys := newTestKeys(t, purposeBIP84, 1, w.net.params)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 6), 100_000}, output{foreignScript(3), 1})
	mustApply(t, w, chain.add(fund, f.tx(nil, output{foreignScript(1), 1})).filtered())
	spend := f.tx([]wire.OutPoint{op(fund, 0)}, output{keys.p2wpkh(intBranch, 3), 30_000})
	mustApply(t, w, chain.add(spend).filtered())
	_, err = w.ApplyMempoolTx(f.tx([]wire.OutPoint{op(spend, 0)}, output{keys.p2wpkh(extBranch, 12), 29_000}))
	require.NoError(t, err)
	_, err = w.ApplyMempoolTx(f.tx(nil, output{foreignScript(2), 1}))
	require.NoError(t, err)
	mustApply(t, w, chain.add().filtered()) // left in the open batch
	before := takeSnapshot(t, w)
	require.Equal(t, int32(102), before.Synced.Height)
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "Close is idempotent")
	_, err = w.Balance()
	require.ErrorIs(t, err, ErrClosed)

	w, err = Open(dir, WithNetwork("regtest"))
	require.NoError(t, err)
	defer w.Close()
	// An unconfirmed false positive is counted, never stored: the
	// reopened wallet lists only the one of block 100.
	require.Len(t, before.FPs, 2)
	require.Equal(t, int32(-1), before.FPs[0].Height)
	before.FPs = before.FPs[1:]
	requireSameState(t, before, takeSnapshot(t, w))
	ext, in := w.GapLimits()
	require.Equal(t, [2]uint32{7, 4}, [2]uint32{ext, in})
}

func TestOpenErrors(t *testing.T) {
	makeWallet := func(t *testing.T) string {
		dir := t.TempDir()
		w, err := Create(dir, CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(t, purposeBIP84, 1, versionVpub)}})
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return dir
	}
	writeFile := func(data []byte) func(t *testing.T) string {
		return func(t *testing.T) string {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, dbFileName), data, 0o600))
			return dir
		}
	}
	random := make([]byte, 64*1024)
	_, err := rand.Read(random)
	require.NoError(t, err)

	tests := []struct {
		name    string
		setup   func(t *testing.T) string
		opts    []Option
		wantErr error
	}{
		{"missing directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, nil, ErrNoWallet},
		{"empty directory", func(t *testing.T) string { return t.TempDir() }, nil, ErrNoWallet},
		{"empty file", writeFile(nil), nil, ErrCorrupt},
		{"short file", writeFile([]byte("not a database")), nil, ErrCorrupt},
		{"random bytes", writeFile(random), nil, ErrCorrupt},
		{"directory in place of the file", func(t *testing.T) string {
			dir := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(dir, dbFileName), 0o700))
			return dir
		}, nil, ErrCorrupt},
		{"bbolt file without wallet", func(t *testing.T) string {
			dir := t.TempDir()
			db, err := walletdb.Create(dbDriver, filepath.Join(dir, dbFileName), noFreelistSync, dbOpenTimeout)
			require.NoError(t, err)
			require.NoError(t, db.Close())
			return dir
		}, nil, ErrCorrupt},
		{"truncated wallet", func(t *testing.T) string {
			dir := makeWallet(t)
			path := filepath.Join(dir, dbFileName)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data[:len(data)/3], 0o600))
			return dir
		}, nil, ErrCorrupt},
		{"zeroed meta pages", func(t *testing.T) string {
			dir := makeWallet(t)
			path := filepath.Join(dir, dbFileName)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			clear(data[:8192])
			require.NoError(t, os.WriteFile(path, data, 0o600))
			return dir
		}, nil, ErrCorrupt},
		{"wrong network", makeWallet, []Option{WithNetwork("testnet3")}, ErrWrongNetwork},
		{"unknown expected network", makeWallet, []Option{WithNetwork("dogecoin")}, ErrUnknownNetwork},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t)
			path := filepath.Join(dir, dbFileName)
			before, _ := os.ReadFile(path)
			w, err := Open(dir, tc.opts...)
			require.ErrorIs(t, err, tc.wantErr)
			require.Nil(t, w)
			after, _ := os.ReadFile(path)
			require.True(t, bytes.Equal(before, after), "a failed open must leave the file as it was")
			if errors.Is(err, ErrCorrupt) {
				require.Contains(t, err.Error(), "left as it was")
			}
		})
	}
}

func TestOpenWhileOpenIsInUse(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{Network: "regtest"})
	require.NoError(t, err)
	defer w.Close()
	_, err = Open(dir)
	require.ErrorIs(t, err, ErrInUse)
}

func TestCreateErrorsLeaveNothingBehind(t *testing.T) {
	tests := []struct {
		name    string
		cfg     CreateConfig
		wantErr error
	}{
		{"unknown network", CreateConfig{Network: "litecoin"}, ErrUnknownNetwork},
		{"bad xpub", CreateConfig{Network: "regtest", Xpubs: []string{"tpubnonsense"}}, ErrInvalidKey},
		{"xprv", CreateConfig{Network: "mainnet", Xpubs: []string{vectorZprv84}}, ErrPrivateKey},
		{"wrong network xpub", CreateConfig{Network: "regtest", Xpubs: []string{vectorZpub84}}, ErrWrongNetwork},
		{"garbage address", CreateConfig{Network: "regtest", Addresses: []string{"xyz"}}, ErrInvalidAddress},
		{"wrong network address", CreateConfig{Network: "regtest", Addresses: []string{"1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA"}}, ErrWrongNetwork},
		{"negative birthday", CreateConfig{Network: "regtest", Birthday: -1}, ErrInvalidConfig},
		{"gap too large", CreateConfig{Network: "regtest", GapExternal: MaxGap + 1}, ErrInvalidConfig},
		{"derived address imported too", CreateConfig{Network: "regtest",
			Xpubs:     []string{accountXpub(t, purposeBIP49, 1, versionUpub)},
			Addresses: []string{"2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2"}}, ErrDuplicate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "a", "b")
			_, err := Create(dir, tc.cfg)
			require.ErrorIs(t, err, tc.wantErr)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			entries, err := os.ReadDir(parent)
			require.NoError(t, err)
			require.Empty(t, entries, "a failed create leaves nothing behind")
		})
	}
}

func TestCreateOverExistingWalletFails(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{Network: "regtest", Birthday: 5})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	before, err := os.ReadFile(filepath.Join(dir, dbFileName))
	require.NoError(t, err)

	_, err = Create(dir, CreateConfig{Network: "mainnet"})
	require.ErrorIs(t, err, ErrExists)
	after, err := os.ReadFile(filepath.Join(dir, dbFileName))
	require.NoError(t, err)
	require.Equal(t, before, after)
	w, err = Open(dir)
	require.NoError(t, err)
	defer w.Close()
	require.Equal(t, int32(5), w.Birthday())
	require.Equal(t, "regtest", w.Network())
}

func TestAddAfterSyncRescans(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 10)
	mustApply(t, w, chain.add(f.tx(nil, output{keys.p2wpkh(extBranch, 0), 5_000})).filtered())
	info, err := w.AddAddress("mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV")
	require.NoError(t, err)
	require.True(t, info.Rescan)
	require.Equal(t, KindP2PKH, info.Kind)
	sp, err := w.SyncedTo()
	require.NoError(t, err)
	require.Equal(t, int32(-1), sp.Height, "the next sync starts again from the birthday")
	_, err = w.AddAddress("mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV")
	require.ErrorIs(t, err, ErrDuplicate)
	_, err = w.AddAddress("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
	require.ErrorIs(t, err, ErrWrongNetwork)
	_, err = w.AddXpub(vectorZprv84)
	require.ErrorIs(t, err, ErrPrivateKey)
	acct, err := w.AddXpub(accountXpub(t, purposeBIP49, 1, versionUpub))
	require.NoError(t, err)
	require.True(t, acct.Rescan, "the pending rescan covers it too")
	require.Equal(t, "m/49'/1'", acct.Scope)
}

func TestOpenDatadirIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	_, err := Open(file)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrCorrupt)
	_, err = Create(file, CreateConfig{Network: "regtest"})
	require.Error(t, err)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, []byte("x"), data)
}
