package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/bloomwatch/bloomwatch/wallet/descriptor"
	"github.com/bloomwatch/bloomwatch/watch"
)

// Keys and addresses of the BIP84 test mnemonic's account 0 on test
// networks (m/84'/1'/0').
const (
	testVpub      = "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"
	testReceive0  = "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk"
	testMainXprv  = "xprv9s21ZrQH143K3GJpoapnV8SFfukcVBSfeCficPSGfubmSFDxo1kuHnLisriDvSnRRuL2Qrg5ggqHKNVpxR86QEC8w35uxmGoggxtQTPvfUu"
	testMainZpub  = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	testTestP2PKH = "mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV"
)

// createArgs returns `wallet create` on regtest with the test key.
func createArgs(dir string, extra ...string) []string {
	return append([]string{"wallet", "create", "--datadir", dir, "--network", "regtest", "--xpub", testVpub}, extra...)
}

// dirEntries lists a directory, nil when it does not exist.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWalletCreateBadInputLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "w")
	checkCLI(t, []cliCase{
		{name: "no network", args: []string{"wallet", "create", "--datadir", dir}, wantCode: 2, wantErrSub: "--network is required"},
		{name: "unknown network", args: []string{"wallet", "create", "--datadir", dir, "--network", "moon"}, wantCode: 2, wantErrSub: "unknown network"},
		{name: "bad checksum", args: []string{"wallet", "create", "--datadir", dir, "--network", "regtest", "--xpub", testVpub[:len(testVpub)-1] + "d"},
			wantCode: 2, wantErrSub: "bad checksum"},
		{name: "private key", args: []string{"wallet", "create", "--datadir", dir, "--network", "mainnet", "--xpub", testMainXprv},
			wantCode: 2, wantErrSub: "only public keys"},
		{name: "mainnet key on regtest", args: []string{"wallet", "create", "--datadir", dir, "--network", "regtest", "--xpub", testMainZpub},
			wantCode: 2, wantErrSub: "wrong network"},
		{name: "garbage address", args: createArgs(dir, "--address", "nope"), wantCode: 2, wantErrSub: "invalid address"},
		{name: "mainnet address on regtest", args: createArgs(dir, "--address", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"),
			wantCode: 2, wantErrSub: "wrong network"},
		{name: "negative birthday", args: createArgs(dir, "--birthday", "-3"), wantCode: 2, wantErrSub: "birthday"},
		{name: "gap too large", args: createArgs(dir, "--gap-external", "100000"), wantCode: 2, wantErrSub: "gap limit"},
		{name: "positional argument", args: createArgs(dir, "extra"), wantCode: 2, wantErrSub: "unknown command"},
	})
	names := dirEntries(t, parent)
	require.Empty(t, names, "failed creates left %v", names)
}

func TestWalletCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	checkCLI(t, []cliCase{
		{name: "create", args: createArgs(dir, "--address", testTestP2PKH, "--birthday", "7"),
			wantOutSub: []string{"created regtest wallet", "birthday 7", "account m/84'/1'/0 (key m/84'/1'/0') p2wpkh", "address " + testTestP2PKH}},
		{name: "create again", args: createArgs(dir), wantCode: 2, wantErrSub: "already exists"},
		{name: "balance", args: []string{"wallet", "balance", "--datadir", dir},
			wantOutSub: []string{"confirmed  0 sat", "not synced yet"}},
		{name: "txs empty", args: []string{"wallet", "txs", "--datadir", dir, "--json"}, wantOut: "[]\n"},
		{name: "utxos empty", args: []string{"wallet", "utxos", "--datadir", dir, "--json"}, wantOut: "[]\n"},
		{name: "addresses", args: []string{"wallet", "addresses", "--datadir", dir},
			wantOutSub: []string{testReceive0 + "  p2wpkh  m/84'/1'/0'/0/0", testTestP2PKH}},
		{name: "add both", args: []string{"wallet", "add", "--datadir", dir, "--xpub", testVpub, "--address", testTestP2PKH},
			wantCode: 2, wantErrSub: "exactly one"},
		{name: "add neither", args: []string{"wallet", "add", "--datadir", dir}, wantCode: 2, wantErrSub: "exactly one"},
		{name: "add duplicate key", args: []string{"wallet", "add", "--datadir", dir, "--xpub", testVpub}, wantCode: 2, wantErrSub: "already watched"},
		{name: "add duplicate address", args: []string{"wallet", "add", "--datadir", dir, "--address", testReceive0}, wantCode: 2, wantErrSub: "already watched"},
		{name: "add private key", args: []string{"wallet", "add", "--datadir", dir, "--xpub", testMainXprv}, wantCode: 2, wantErrSub: "only public keys"},
		{name: "add invalid address", args: []string{"wallet", "add", "--datadir", dir, "--address", "bcrt1qnjg0jd8228aq7egyzacy8cys3knf9xvr4kjhus"},
			wantCode: 2, wantErrSub: "invalid address"},
		{name: "stats negative fps", args: []string{"wallet", "stats", "--datadir", dir, "--fps", "-1"}, wantCode: 2, wantErrSub: "--fps"},
		// 20 + 100 receive and 10 + 100 change addresses (the gap limits
		// and the default lookahead reserve) and the imported address.
		{name: "stats", args: []string{"wallet", "stats", "--datadir", dir}, wantOutSub: []string{"filter elements 231 data + 0 outpoints"}},
		{name: "no wallet", args: []string{"wallet", "balance", "--datadir", filepath.Join(dir, "nope")}, wantCode: 2, wantErrSub: "no wallet"},
		{name: "no datadir", args: []string{"wallet", "txs"}, wantCode: 2, wantErrSub: noDefaultWallet},
	})
}

func TestWalletCorruptFileExitsOne(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wallet.db")
	garbage := bytes.Repeat([]byte("garbage!"), 1024)
	require.NoError(t, os.WriteFile(path, garbage, 0o600))
	checkCLI(t, []cliCase{
		{name: "corrupt", args: []string{"wallet", "balance", "--datadir", dir}, wantCode: 1, wantErrSub: "unreadable"},
	})
	after, err := os.ReadFile(path)
	require.NoError(t, err, "corrupt file changed (err %v)", err)
	require.Equal(t, garbage, after, "corrupt file changed (err %v)", err)
}

// fundWallet applies one block paying 5000 sat to the test key's first
// receive address, then one unconfirmed payment of 700 sat.
func fundWallet(t *testing.T, dir string) (chainhash.Hash, chainhash.Hash) {
	t.Helper()
	w, err := wallet.Open(dir)
	require.NoError(t, err)
	defer w.Close()
	addr, err := btcutil.DecodeAddress(testReceive0, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	script, err := txscript.PayToAddrScript(addr)
	require.NoError(t, err)
	pay := func(value int64, lock uint32) *wire.MsgTx {
		tx := wire.NewMsgTx(wire.TxVersion)
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{0xaa}, Index: lock}, nil, nil))
		tx.AddTxOut(wire.NewTxOut(value, script))
		tx.LockTime = lock
		return tx
	}
	confirmed, pending := pay(5_000, 1), pay(700, 2)
	header := wire.BlockHeader{Version: 4, Timestamp: time.Unix(1_700_000_000, 0), Bits: 0x207fffff}
	fb := &watch.FilteredBlock{Height: 7, Hash: header.BlockHash(), Header: header,
		Txs: []*wire.MsgTx{confirmed}, TxIndexes: []uint32{1}, TotalTxs: 2}
	_, err = w.ApplyBlock(fb)
	require.NoError(t, err)
	_, err = w.ApplyMempoolTx(pending)
	require.NoError(t, err)
	return confirmed.TxHash(), pending.TxHash()
}

func TestWalletReadCommandsJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	code, _, errOut := runCLI(t, createArgs(dir))
	require.Equal(t, 0, code, "create: %s", errOut)
	confirmed, pending := fundWallet(t, dir)

	decode := func(args []string, v any) {
		t.Helper()
		code, out, errOut := runCLI(t, args)
		require.Equal(t, 0, code, "%v: exit %d: %s", args, code, errOut)
		err := json.Unmarshal([]byte(out), v)
		require.NoError(t, err, "%v: %v in %q", args, err, out)
	}
	var bal struct {
		Confirmed    int64 `json:"confirmed_sat"`
		Unconfirmed  int64 `json:"unconfirmed_sat"`
		Immature     int64 `json:"immature_sat"`
		Total        int64 `json:"total_sat"`
		SyncedHeight int32 `json:"synced_height"`
	}
	decode([]string{"wallet", "balance", "--datadir", dir, "--json"}, &bal)
	require.Equal(t, int64(5_000), bal.Confirmed, "balance %+v", bal)
	require.Equal(t, int64(700), bal.Unconfirmed, "balance %+v", bal)
	require.Equal(t, int64(5_700), bal.Total, "balance %+v", bal)
	require.Equal(t, int32(7), bal.SyncedHeight, "balance %+v", bal)
	var txs []struct {
		Txid          string
		Height        int32
		Delta         int64 `json:"delta_sat"`
		Confirmations int32
	}
	decode([]string{"wallet", "txs", "--datadir", dir, "--json"}, &txs)
	require.Len(t, txs, 2, "txs %+v", txs)
	require.Equal(t, confirmed.String(), txs[0].Txid, "txs %+v", txs)
	require.Equal(t, int64(5_000), txs[0].Delta, "txs %+v", txs)
	require.Equal(t, int32(1), txs[0].Confirmations, "txs %+v", txs)
	require.Equal(t, pending.String(), txs[1].Txid, "txs %+v", txs)
	require.Equal(t, int32(-1), txs[1].Height, "txs %+v", txs)
	var utxos []struct {
		Txid    string
		Vout    uint32
		Amount  int64 `json:"amount_sat"`
		Address string
	}
	decode([]string{"wallet", "utxos", "--datadir", dir, "--json"}, &utxos)
	require.Len(t, utxos, 2, "utxos %+v", utxos)
	require.Equal(t, int64(5_000), utxos[0].Amount, "utxos %+v", utxos)
	require.Equal(t, testReceive0, utxos[0].Address, "utxos %+v", utxos)
	require.Equal(t, int64(700), utxos[1].Amount, "utxos %+v", utxos)
	var addrs []struct {
		Address string
		Used    bool
		Path    string
	}
	decode([]string{"wallet", "addresses", "--datadir", dir, "--json"}, &addrs)
	// Receive index 0 is used: the receive branch keeps its reserve of
	// 100 whole beyond the gap (through index 20), in a batch of a third
	// more: 21 + 133 receive addresses; the change branch keeps the 10 +
	// 100 derived at creation.
	require.Len(t, addrs, 264, "%d addresses %+v", len(addrs), addrs[:1])
	require.Equal(t, testReceive0, addrs[0].Address, "%d addresses %+v", len(addrs), addrs[:1])
	require.True(t, addrs[0].Used, "%d addresses %+v", len(addrs), addrs[:1])
	require.Equal(t, "m/84'/1'/0'/0/0", addrs[0].Path, "%d addresses %+v", len(addrs), addrs[:1])
	var st struct {
		BlocksApplied   int64  `json:"blocks_applied"`
		Relevant        uint64 `json:"relevant"`
		MempoolRelevant uint64 `json:"mempool_relevant"`
	}
	decode([]string{"wallet", "stats", "--datadir", dir, "--json", "--fps", "5"}, &st)
	require.Equal(t, int64(1), st.BlocksApplied, "stats %+v", st)
	require.Equal(t, uint64(1), st.Relevant, "stats %+v", st)
	require.Equal(t, uint64(1), st.MempoolRelevant, "stats %+v", st)
	code, out, _ := runCLI(t, []string{"wallet", "txs", "--datadir", dir})
	require.Equal(t, 0, code, "txs table %q", out)
	require.Contains(t, out, "mempool", "txs table %q", out)
	require.Contains(t, out, "+5000", "txs table %q", out)
}

func TestWalletAddAfterSyncRescans(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	code, _, errOut := runCLI(t, createArgs(dir, "--birthday", "7"))
	require.Equal(t, 0, code, "create: %s", errOut)
	confirmed, _ := fundWallet(t, dir)
	checkCLI(t, []cliCase{
		{name: "add address", args: []string{"wallet", "add", "--datadir", dir, "--address", testTestP2PKH},
			wantOutSub: []string{"added address " + testTestP2PKH + " p2pkh", "rescans from the birthday (7)", "up to height 7"}},
		// The history found before stays confirmed at its height (it
		// read "mempool ... 0" and a confirmed balance of 0 before),
		// and each read says once that a rescan is pending.
		{name: "txs", args: []string{"wallet", "txs", "--datadir", dir},
			wantOutSub: []string{"7        " + confirmed.String() + "  +5000        1 ", "rescan pending", "up to height 7"}},
		{name: "balance", args: []string{"wallet", "balance", "--datadir", dir},
			wantOutSub: []string{"confirmed  5000 sat", "synced to height 7", "rescan pending"}},
		{name: "utxos", args: []string{"wallet", "utxos", "--datadir", dir},
			wantOutSub: []string{confirmed.String() + ":0", "rescan pending"}},
	})
	code, out, _ := runCLI(t, []string{"wallet", "txs", "--datadir", dir})
	require.Equal(t, 0, code, "txs: %d %q", code, out)
	require.Equal(t, 1, strings.Count(out, "rescan pending"), "txs: %d %q", code, out)
	// --limit: the newest (the unconfirmed payment), then the note once.
	code, out, _ = runCLI(t, []string{"wallet", "txs", "--datadir", dir, "--limit", "1"})
	require.Equal(t, 0, code, "txs --limit 1: %d %q", code, out)
	require.NotContains(t, out, confirmed.String(), "txs --limit 1: %d %q", code, out)
	require.Contains(t, out, "mempool", "txs --limit 1: %d %q", code, out)
	require.Contains(t, out, "the newest 1 of 2 transactions", "txs --limit 1: %d %q", code, out)
	require.Equal(t, 1, strings.Count(out, "rescan pending"), "txs --limit 1: %d %q", code, out)
	code, out, _ = runCLI(t, []string{"wallet", "txs", "--datadir", dir, "--limit", "1", "--json"})
	require.Equal(t, 0, code, "txs --limit 1 --json: %d %q", code, out)
	require.Equal(t, 1, strings.Count(out, `"txid"`), "txs --limit 1 --json: %d %q", code, out)
	code, out, _ = runCLI(t, []string{"wallet", "balance", "--datadir", dir, "--json"})
	require.Equal(t, 0, code, "balance --json: %d %q", code, out)
	require.Contains(t, out, `"rescan_pending":true`, "balance --json: %d %q", code, out)
	require.Contains(t, out, `"confirmed_sat":5000`, "balance --json: %d %q", code, out)
}

func TestOpenOrCreateWallet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	f := &walletFlags{datadir: dir, gapExternal: wallet.DefaultGapExternal, gapInternal: wallet.DefaultGapInternal}
	_, _, err := openOrCreateWallet("sync", f)
	require.Error(t, err, "no network: %v", err)
	require.Contains(t, err.Error(), "--network is required", "no network: %v", err)
	f.network, f.xpubs = "regtest", []string{testVpub}
	w, created, err := openOrCreateWallet("sync", f)
	require.NoError(t, err, "create: %v", created)
	require.True(t, created, "create: %v %v", created, err)
	require.NoError(t, w.Close())
	// Reopening with the same flags imports nothing new; a new address
	// is added.
	f.addresses = []string{testTestP2PKH}
	w, created, err = openOrCreateWallet("sync", f)
	require.NoError(t, err, "reopen: %v", created)
	require.False(t, created, "reopen: %v %v", created, err)
	accounts, err := w.Accounts()
	require.NoError(t, err, "accounts %v", accounts)
	require.Len(t, accounts, 1, "accounts %v %v", accounts, err)
	st, err := w.Stats()
	require.NoError(t, err, "scripts %d", st.Scripts)
	require.Equal(t, 31, st.Scripts, "scripts %d %v", st.Scripts, err)
	require.NoError(t, w.Close())
	f.network = "testnet3"
	_, _, err = openOrCreateWallet("sync", f)
	var ue usageError
	require.ErrorAs(t, err, &ue, "wrong network: %v", err)
	require.ErrorIs(t, err, wallet.ErrWrongNetwork, "wrong network: %v", err)
}

// testTpub is testVpub with the plain testnet version descriptors take.
func testTpub(t *testing.T) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(testVpub)
	require.NoError(t, err)
	tk, err := k.CloneWithVersion(chaincfg.TestNet3Params.HDPublicKeyID[:])
	require.NoError(t, err)
	return tk.String()
}

func TestWalletDescriptors(t *testing.T) {
	tpub := testTpub(t)
	desc := "wpkh([73c5da0a/84h/1h/0h]" + tpub + "/<0;1>/*)"
	parent := t.TempDir()
	bad := filepath.Join(parent, "bad")
	checkCLI(t, []cliCase{
		{name: "wrong checksum", args: []string{"wallet", "create", "--datadir", bad, "--network", "regtest", "--descriptor", desc + "#aaaaaaaa"},
			wantCode: 2, wantErrSub: "checksum"},
		{name: "private key", args: []string{"wallet", "create", "--datadir", bad, "--network", "mainnet", "--descriptor", "wpkh(" + testMainXprv + "/0/*)"},
			wantCode: 2, wantErrSub: "only public keys"},
		{name: "hardened step after the xpub", args: []string{"wallet", "create", "--datadir", bad, "--network", "regtest", "--descriptor", "wpkh(" + tpub + "/0h/*)"},
			wantCode: 2, wantErrSub: "hardened"},
		{name: "unsupported function", args: []string{"wallet", "create", "--datadir", bad, "--network", "regtest", "--descriptor", "multi(1," + tpub + "/0/*)"},
			wantCode: 2, wantErrSub: "bare multi()"},
	})
	names := dirEntries(t, parent)
	require.Empty(t, names, "refused descriptors left %v", names)
	dir := filepath.Join(parent, "w")
	code, out, errOut := runCLI(t, []string{"wallet", "create", "--datadir", dir, "--network", "regtest", "--descriptor", desc})
	require.Equal(t, 0, code, "create: exit %d, out %q, err %q", code, out, errOut)
	require.Contains(t, out, "descriptor "+desc+"#", "create: exit %d, out %q, err %q", code, out, errOut)
	checksum := out[strings.Index(out, desc+"#")+len(desc)+1:][:descriptor.ChecksumLen]
	checkCLI(t, []cliCase{
		{name: "addresses name the descriptor", args: []string{"wallet", "addresses", "--datadir", dir},
			wantOutSub: []string{testReceive0 + "  p2wpkh  m/84'/1'/0'/0/0", "#" + checksum}},
		{name: "stats print the checksum", args: []string{"wallet", "stats", "--datadir", dir}, wantOutSub: []string{"checksum " + checksum}},
		{name: "add it again", args: []string{"wallet", "add", "--datadir", dir, "--descriptor", desc}, wantCode: 2, wantErrSub: "already watched"},
		{name: "add an addr descriptor", args: []string{"wallet", "add", "--datadir", dir, "--descriptor", "addr(" + testTestP2PKH + ")"},
			wantOutSub: []string{"added descriptor addr(" + testTestP2PKH + ")#"}},
	})
}

// spendPending relays, as unconfirmed, two conflicting spends of the
// confirmed coin fundWallet paid (a and b), the first with change to the
// test key's first receive address, and a child spending that change
// (conflicted through its parent).
func spendPending(t *testing.T, dir string, coin chainhash.Hash) (a, b, child chainhash.Hash) {
	t.Helper()
	w, err := wallet.Open(dir)
	require.NoError(t, err)
	defer w.Close()
	addr, err := btcutil.DecodeAddress(testReceive0, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	own, err := txscript.PayToAddrScript(addr)
	require.NoError(t, err)
	foreign, err := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(bytes.Repeat([]byte{0xee}, 20)).Script()
	require.NoError(t, err)
	spend := func(in wire.OutPoint, lock uint32, outs ...*wire.TxOut) *wire.MsgTx {
		tx := wire.NewMsgTx(wire.TxVersion)
		tx.AddTxIn(wire.NewTxIn(&in, nil, nil))
		for _, o := range outs {
			tx.AddTxOut(o)
		}
		tx.LockTime = lock
		return tx
	}
	txA := spend(wire.OutPoint{Hash: coin}, 10, wire.NewTxOut(3_000, foreign), wire.NewTxOut(1_900, own))
	txB := spend(wire.OutPoint{Hash: coin}, 11, wire.NewTxOut(4_900, foreign))
	txC := spend(wire.OutPoint{Hash: txA.TxHash(), Index: 1}, 12, wire.NewTxOut(1_800, foreign))
	for _, tx := range []*wire.MsgTx{txA, txB, txC} {
		res, err := w.ApplyMempoolTx(tx)
		require.NoError(t, err, "relay %v: relevant %v", tx.TxHash(), res.Relevant)
		require.True(t, res.Relevant, "relay %v: relevant %v, %v", tx.TxHash(), res.Relevant, err)
	}
	return txA.TxHash(), txB.TxHash(), txC.TxHash()
}

// TestWalletUnconfirmedColumns checks that balance, utxos and txs show
// what unconfirmed transactions do: pending spends, conflicts and expiry.
func TestWalletUnconfirmedColumns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	code, _, errOut := runCLI(t, createArgs(dir))
	require.Equal(t, 0, code, "create: %s", errOut)
	confirmed, pending := fundWallet(t, dir)
	a, b, child := spendPending(t, dir, confirmed)

	var bal struct {
		Confirmed    int64 `json:"confirmed_sat"`
		Unconfirmed  int64 `json:"unconfirmed_sat"`
		PendingSpent int64 `json:"pending_spent_sat"`
		Conflicts    int   `json:"conflicts"`
		Total        int64 `json:"total_sat"`
	}
	code, out, errOut := runCLI(t, []string{"wallet", "balance", "--datadir", dir, "--json"})
	require.Equal(t, 0, code, "balance --json: exit %d %q %q", code, out, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &bal), "balance --json: exit %d %q %q", code, out, errOut)
	// The confirmed coin stays confirmed until a spend confirms; the
	// two spends conflict (and the child through its parent); the
	// worst case keeps only the unconflicted 700 coming in.
	require.Equal(t, int64(5_000), bal.Confirmed, "balance %+v", bal)
	require.Equal(t, int64(5_000), bal.PendingSpent, "balance %+v", bal)
	require.Equal(t, int64(700), bal.Unconfirmed, "balance %+v", bal)
	require.Equal(t, 3, bal.Conflicts, "balance %+v", bal)
	require.Equal(t, int64(700), bal.Total, "balance %+v", bal)

	code, out, _ = runCLI(t, []string{"wallet", "txs", "--datadir", dir, "--json"})
	var txs []wallet.TxSummary
	require.Equal(t, 0, code, "txs --json: exit %d %q", code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &txs), "txs --json: exit %d %q", code, out)
	require.Len(t, txs, 5, "txs --json: exit %d %q", code, out)
	expires := map[chainhash.Hash]string{}
	for _, tx := range txs {
		if tx.Height < 0 {
			require.NotNil(t, tx.Expires, "unconfirmed %v has no expiry", tx.Txid)
			expires[tx.Txid] = tx.Expires.UTC().Format(expiryLayout)
		}
	}
	// rowOf returns the row of a table whose column col is id.
	rowOf := func(out string, col int, id string) string {
		t.Helper()
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > col && f[col] == id {
				return line
			}
		}
		require.FailNow(t, fmt.Sprintf("no row for %s in %q", id, out))
		return ""
	}
	checkCLI(t, []cliCase{
		{name: "balance rows", args: []string{"wallet", "balance", "--datadir", dir}, wantOutSub: []string{
			"pending spent  5000 sat", "3 tx", "total   700 sat",
			"confirmed ignores unconfirmed spends", "total is the worst case", "synced to height 7"}},
		{name: "utxos pending column", args: []string{"wallet", "utxos", "--datadir", dir}, wantOutSub: []string{
			"PENDING", confirmed.String() + ":0", "(+1 conflicting)", "conflicted; spent by " + child.String()}},
		{name: "txs expiry and conflicts", args: []string{"wallet", "txs", "--datadir", dir}, wantOutSub: []string{
			"EXPIRES", "CONFLICTS", expires[a], "via a conflicted parent"}},
	})
	_, table, _ := runCLI(t, []string{"wallet", "txs", "--datadir", dir})
	row := rowOf(table, 1, a.String())
	require.Contains(t, row, b.String(), "row of %v lacks its conflict %v or expiry %s: %q", a, b, expires[a], row)
	require.Contains(t, row, expires[a], "row of %v lacks its conflict %v or expiry %s: %q", a, b, expires[a], row)
	row = rowOf(table, 1, pending.String())
	require.True(t, strings.HasSuffix(strings.TrimSpace(row), "-"), "unconflicted pending row %q", row)
	f := strings.Fields(rowOf(table, 1, confirmed.String()))
	require.Equal(t, "-", f[len(f)-2], "confirmed row %q has an expiry or conflicts", f)
	require.Equal(t, "-", f[len(f)-1], "confirmed row %q has an expiry or conflicts", f)
	_, utxos, _ := runCLI(t, []string{"wallet", "utxos", "--datadir", dir})
	row = rowOf(utxos, 0, confirmed.String()+":0")
	require.False(t, !strings.Contains(row, "spent by "+a.String()) && !strings.Contains(row, "spent by "+b.String()), "confirmed coin row %q", row)
	row = rowOf(utxos, 0, pending.String()+":0")
	require.True(t, strings.HasSuffix(strings.TrimSpace(row), "-"), "unspent pending coin row %q", row)
}

// regtestAddrs returns n distinct regtest P2WPKH addresses nobody uses.
func regtestAddrs(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		h := btcutil.Hash160([]byte{byte(i), byte(i >> 8), 0x42})
		a, err := btcutil.NewAddressWitnessPubKeyHash(h, &chaincfg.RegressionNetParams)
		require.NoError(t, err)
		out[i] = a.EncodeAddress()
	}
	return out
}

// TestWalletAddAddressList imports addresses from --address flags and an
// addresses file in one commit, and refuses a list with a bad, repeated or
// watched entry, naming its line and writing nothing.
func TestWalletAddAddressList(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "w")
	code, _, errOut := runCLI(t, createArgs(dir))
	require.Equal(t, 0, code, "create: %s", errOut)
	addrs := regtestAddrs(t, 6)
	write := func(name, body string) string {
		t.Helper()
		path := filepath.Join(root, name)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		return path
	}
	stats := func() string {
		t.Helper()
		code, out, errOut := runCLI(t, []string{"wallet", "stats", "--datadir", dir})
		require.Equal(t, 0, code, "stats: %s", errOut)
		return out
	}
	before := stats()
	bad := write("bad.txt", "# exported\n"+addrs[0]+"\n\n"+addrs[1]+"  # second\nbcrt1qnotanaddress\n")
	repeated := write("repeated.txt", addrs[0]+"\n"+addrs[1]+"\n"+addrs[0]+"\n")
	watched := write("watched.txt", addrs[0]+"\n"+testReceive0+"\n")
	words := write("words.txt", addrs[0]+" label\n")
	empty := write("empty.txt", "# nothing\n\n")
	good := write("good.txt", "# exported\n"+addrs[0]+"\n\n"+addrs[1]+"  # second\n"+addrs[2]+"\n")
	add := func(extra ...string) []string {
		return append([]string{"wallet", "add", "--datadir", dir}, extra...)
	}
	checkCLI(t, []cliCase{
		{name: "bad line", args: add("--addresses-file", bad), wantCode: 2,
			wantErrSub: "bad.txt line 5: address \"bcrt1qnotanaddress\": wallet: invalid address"},
		{name: "repeated line", args: add("--addresses-file", repeated), wantCode: 2,
			wantErrSub: "repeated.txt line 3: address " + addrs[0] + " repeats " + repeated + " line 1; nothing was imported"},
		{name: "watched line", args: add("--addresses-file", watched), wantCode: 2, wantErrSub: "watched.txt line 2: address"},
		{name: "flag then file", args: add("--address", addrs[3], "--addresses-file", repeated), wantCode: 2, wantErrSub: "repeated.txt line 3"},
		{name: "two words", args: add("--addresses-file", words), wantCode: 2, wantErrSub: "words.txt line 1: one address per line, found 2 words"},
		{name: "no address", args: add("--addresses-file", empty), wantCode: 2, wantErrSub: "empty.txt holds no address"},
		{name: "missing file", args: add("--addresses-file", filepath.Join(root, "nope.txt")), wantCode: 2, wantErrSub: "--addresses-file"},
	})
	after := stats()
	require.Equal(t, before, after, "a refused list changed the wallet:\n%s\n%s", before, after)
	checkCLI(t, []cliCase{
		{name: "file and flags", args: add("--addresses-file", good, "--address", addrs[3], "--address", addrs[4]),
			wantOutSub: []string{"added 5 addresses (p2wpkh 5)"}},
		{name: "imported", args: []string{"wallet", "stats", "--datadir", dir}, wantOutSub: []string{"5 imported (0 used)"}},
		{name: "one flag", args: add("--address", addrs[5], "--json"), wantOutSub: []string{`"address":"` + addrs[5] + `"`}},
	})
	code, out, errOut := runCLI(t, add("--address", testTestP2PKH, "--address", regtestAddrs(t, 7)[6], "--json"))
	var res struct {
		Added     int
		Addresses []wallet.ImportInfo
		Rescan    bool
	}
	require.Equal(t, 0, code, "add --json: exit %d %q %q", code, out, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &res), "add --json: exit %d %q %q", code, out, errOut)
	require.Equal(t, 2, res.Added, "add --json: exit %d %q %q", code, out, errOut)
	require.Len(t, res.Addresses, 2, "add --json: exit %d %q %q", code, out, errOut)
	require.Equal(t, testTestP2PKH, res.Addresses[0].Address, "add --json: exit %d %q %q", code, out, errOut)
	require.Equal(t, wallet.KindP2PKH, res.Addresses[0].Kind, "add --json: exit %d %q %q", code, out, errOut)
}
