package wallet

import (
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/stretchr/testify/require"
)

func TestFormatBTC(t *testing.T) {
	for sat, want := range map[int64]string{0: "0.00000000 BTC", 1: "0.00000001 BTC", 150_000_000: "1.50000000 BTC",
		-12_000: "-0.00012000 BTC", 2_100_000_000_000_000: "21000000.00000000 BTC"} {
		require.Equal(t, want, FormatBTC(sat))
	}
}

func TestBalanceReport(t *testing.T) {
	w, _ := newRegtestWallet(t)
	r, err := w.BalanceReport()
	require.NoError(t, err)
	require.Equal(t, int32(-1), r.SyncedHeight)
	require.Empty(t, r.SyncedHash)
	var b strings.Builder
	require.NoError(t, r.WriteTable(&b))
	require.Contains(t, b.String(), "not synced yet")

	r = BalanceReport{Balance: Balance{Confirmed: 5_000, Unconfirmed: 700, PendingSpent: 5_000, Conflicts: 3}, Total: 700, SyncedHeight: 12}
	b.Reset()
	require.NoError(t, r.WriteTable(&b))
	lines := strings.Split(b.String(), "\n")
	require.Equal(t, "      confirmed  5000 sat  0.00005000 BTC", lines[0])
	require.Equal(t, "  pending spent  5000 sat  0.00005000 BTC", lines[3])
	require.Equal(t, "          total   700 sat  0.00000700 BTC", lines[4])
	require.Equal(t, "      conflicts      3 tx", strings.TrimRight(lines[5], " "))
	require.Contains(t, b.String(), "total is the worst case")
	require.Equal(t, "synced to height 12", lines[len(lines)-2])
}

func TestTxAndUTXOTables(t *testing.T) {
	a, c := chainhash.DoubleHashH([]byte("a")), chainhash.DoubleHashH([]byte("c"))
	exp := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("x", 3600))
	txs := []TxSummary{
		{Txid: a, Height: 10, Delta: 5_000, Confirmations: 3},
		{Txid: c, Height: -1, Delta: -300, Expires: &exp, Conflicts: []chainhash.Hash{a, c}},
		{Txid: a, Height: -1, Conflicted: true},
	}
	var b strings.Builder
	require.NoError(t, WriteTxTable(&b, txs))
	lines := strings.Split(b.String(), "\n")
	require.Regexp(t, `^HEIGHT +TXID +DELTA \(sat\) +CONFIRMATIONS +EXPIRES +CONFLICTS$`, lines[0])
	require.Regexp(t, `^10 +`+a.String()+` +\+5000 +3 +- +-$`, lines[1])
	require.Regexp(t, `^mempool +`+c.String()+` +-300 +0 +2026-05-06 06:08 UTC +`+a.String()+`,`+c.String()+`$`, lines[2])
	require.Contains(t, lines[3], "via a conflicted parent")
	require.Equal(t, "-", TxSummary{Height: -1}.ConflictsNote())

	for u, want := range map[*UTXO]string{
		{}:                                     "-",
		{PendingSpend: true}:                   "spent",
		{SpentBy: []chainhash.Hash{a}}:         "spent by " + a.String(),
		{SpentBy: []chainhash.Hash{a, c, c}}:   "spent by " + a.String() + " (+2 conflicting)",
		{Conflicted: true, PendingSpend: true}: "conflicted; spent",
	} {
		require.Equal(t, want, u.PendingNote())
	}
	b.Reset()
	require.NoError(t, WriteUTXOTable(&b, []UTXO{{Txid: a, Index: 2, Amount: 900, Height: 10, Confirmations: 3, Address: "addr"}}))
	require.Regexp(t, `(?m)^`+a.String()+`:2 +900 +10 +3 +addr +-$`, b.String())
}

func TestAddressTable(t *testing.T) {
	var b strings.Builder
	require.NoError(t, WriteAddressTable(&b, []AddressInfo{
		{Address: "addr1", Kind: KindP2WPKH, Path: "m/84'/1'/0'/0/0", Used: true, Descriptor: "abcd1234"},
		{Address: "addr2", Kind: KindP2PKH, Imported: true},
		{Element: "00ff", Kind: KindP2WPKH, Imported: true},
	}))
	lines := strings.Split(b.String(), "\n")
	require.Regexp(t, `^addr1 +p2wpkh +m/84'/1'/0'/0/0 +true +#abcd1234$`, lines[1])
	require.Regexp(t, `^addr2 +p2pkh +imported +false +-$`, lines[2])
	require.Regexp(t, `^script:00ff +`, lines[3])
}

func TestStatsReport(t *testing.T) {
	w, _ := newRegtestWallet(t)
	r, err := w.StatsReport(5)
	require.NoError(t, err)
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, st, r.Stats)
	require.NotNil(t, r.Descriptors)
	require.Empty(t, r.FalsePositiveTxs)
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	require.True(t, strings.HasPrefix(b.String(), "blocks applied 0\nblock matches 0: relevant 0, false positives 0\n"), b.String())
	require.Contains(t, b.String(), "watched scripts\naddresses ")
}
