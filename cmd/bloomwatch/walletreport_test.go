package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/bloomwatch/bloomwatch/watch"
)

// walletRescanNote returns the rescan note of w's state as a read sees it.
func walletRescanNote(t *testing.T, w *wallet.Wallet) string {
	t.Helper()
	info, err := (&nodeapi.Local{W: w}).Balance(context.Background())
	require.NoError(t, err)
	return stateRescanNote(info.State)
}

// newRegtestWallet creates a regtest wallet watching the demo keyring's
// BIP84 account.
func newRegtestWallet(t *testing.T) *wallet.Wallet {
	t.Helper()
	n, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	key, err := testnet.NewKeyring(testnet.DemoSeed, n.Params)
	require.NoError(t, err)
	xpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{Network: "regtest", Xpubs: []string{xpub}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func TestBalanceReport(t *testing.T) {
	w := newRegtestWallet(t)
	r, err := readBalanceReport(context.Background(), &nodeapi.Local{W: w})
	require.NoError(t, err)
	require.Equal(t, int32(-1), r.SyncedHeight)
	require.Empty(t, r.SyncedHash)
	var b strings.Builder
	require.NoError(t, r.writeTable(&b))
	require.Contains(t, b.String(), "not synced yet")

	r = balanceReport{Balance: wallet.Balance{Confirmed: 5_000, Unconfirmed: 700, PendingSpent: 5_000, Conflicts: 3}, Total: 700, SyncedHeight: 12}
	b.Reset()
	require.NoError(t, r.writeTable(&b))
	lines := strings.Split(b.String(), "\n")
	require.Equal(t, "      confirmed  5000 sat  0.00005000 BTC", lines[0])
	require.Equal(t, "  pending spent  5000 sat  0.00005000 BTC", lines[3])
	require.Equal(t, "          total   700 sat  0.00000700 BTC", lines[4])
	require.Equal(t, "      conflicts      3 tx", strings.TrimRight(lines[5], " "))
	require.Contains(t, b.String(), "total is the worst case")
	require.Equal(t, "synced to height 12", lines[len(lines)-2])
}

// TestBalanceReportRescanPending: an address imported into a wallet that
// applied a block marks a rescan pending, which the report and the note
// say, with the height the kept history reaches.
func TestBalanceReportRescanPending(t *testing.T) {
	w := newRegtestWallet(t)
	hdr := wire.BlockHeader{Version: 1, Timestamp: time.Unix(1_700_000_000, 0)}
	_, err := w.ApplyBlock(&watch.FilteredBlock{Height: 5, Hash: hdr.BlockHash(), Header: hdr, TotalTxs: 1})
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	require.Empty(t, walletRescanNote(t, w))
	info, err := w.AddAddress("bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080")
	require.NoError(t, err)
	require.True(t, info.Rescan)
	r, err := readBalanceReport(context.Background(), &nodeapi.Local{W: w})
	require.NoError(t, err)
	require.True(t, r.RescanPending)
	require.Equal(t, int32(5), r.SyncedHeight)
	require.Equal(t, hdr.BlockHash().String(), r.SyncedHash)
	require.Contains(t, walletRescanNote(t, w), "rescan pending")
	require.Contains(t, walletRescanNote(t, w), "up to height 5")
}

func TestTxAndUTXOTables(t *testing.T) {
	a, c := chainhash.DoubleHashH([]byte("a")), chainhash.DoubleHashH([]byte("c"))
	exp := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("x", 3600))
	txs := []wallet.TxSummary{
		{Txid: a, Height: 10, Delta: 5_000, Confirmations: 3},
		{Txid: c, Height: -1, Delta: -300, Expires: &exp, Conflicts: []chainhash.Hash{a, c}},
		{Txid: a, Height: -1, Conflicted: true},
	}
	var b strings.Builder
	require.NoError(t, writeTxTable(&b, txs))
	lines := strings.Split(b.String(), "\n")
	require.Regexp(t, `^HEIGHT +TXID +DELTA \(sat\) +CONFIRMATIONS +EXPIRES +CONFLICTS$`, lines[0])
	require.Regexp(t, `^10 +`+a.String()+` +\+5000 +3 +- +-$`, lines[1])
	require.Regexp(t, `^mempool +`+c.String()+` +-300 +0 +2026-05-06 06:08 UTC +`+a.String()+`,`+c.String()+`$`, lines[2])
	require.Contains(t, lines[3], "via a conflicted parent")
	require.Equal(t, "-", conflictsNote(wallet.TxSummary{Height: -1}))

	for u, want := range map[*wallet.UTXO]string{
		{}:                                     "-",
		{PendingSpend: true}:                   "spent",
		{SpentBy: []chainhash.Hash{a}}:         "spent by " + a.String(),
		{SpentBy: []chainhash.Hash{a, c, c}}:   "spent by " + a.String() + " (+2 conflicting)",
		{Conflicted: true, PendingSpend: true}: "conflicted; spent",
	} {
		require.Equal(t, want, pendingNote(*u))
	}
	b.Reset()
	require.NoError(t, writeUTXOTable(&b, []wallet.UTXO{{Txid: a, Index: 2, Amount: 900, Height: 10, Confirmations: 3, Address: "addr"}}))
	require.Regexp(t, `(?m)^`+a.String()+`:2 +900 +10 +3 +addr +-$`, b.String())
}

func TestAddressTable(t *testing.T) {
	var b strings.Builder
	require.NoError(t, writeAddressTable(&b, []wallet.AddressInfo{
		{Address: "addr1", Kind: wallet.KindP2WPKH, Path: "m/84'/1'/0'/0/0", Used: true, Descriptor: "abcd1234"},
		{Address: "addr2", Kind: wallet.KindP2PKH, Imported: true},
		{Element: "00ff", Kind: wallet.KindP2WPKH, Imported: true},
	}))
	lines := strings.Split(b.String(), "\n")
	require.Regexp(t, `^addr1 +p2wpkh +m/84'/1'/0'/0/0 +true +#abcd1234$`, lines[1])
	require.Regexp(t, `^addr2 +p2pkh +imported +false +-$`, lines[2])
	require.Regexp(t, `^script:00ff +`, lines[3])
}

func TestStatsReport(t *testing.T) {
	w := newRegtestWallet(t)
	r, err := readStatsReport(context.Background(), &nodeapi.Local{W: w}, 5)
	require.NoError(t, err)
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, st, r.Stats)
	require.NotNil(t, r.Descriptors)
	require.Empty(t, r.FalsePositiveTxs)
	var b strings.Builder
	require.NoError(t, r.writeText(&b))
	require.True(t, strings.HasPrefix(b.String(), "blocks applied 0\nblock matches 0: relevant 0, false positives 0\n"), b.String())
	require.Contains(t, b.String(), "watched scripts\naddresses ")
}
