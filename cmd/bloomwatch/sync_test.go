package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/testnet"
)

// syncChain builds a regtest chain with payments to a keyring's BIP84
// account among noise and returns the harness, the keyring's xpub and the
// truth.
func syncChain(t *testing.T, spec testnet.ChainSpec) (*testnet.Harness, *testnet.Truth) {
	t.Helper()
	h := testnet.NewT(t, testnet.Options{})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	spec.Keyring = key
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	truth, err := h.BuildChain(ctx, spec)
	require.NoError(t, err)
	return h, truth
}

// runSyncJSON runs `bloomwatch sync --json` and decodes the summary.
func runSyncJSON(t *testing.T, args ...string) *session.Summary {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"sync", "--json", "--until-synced", "--log-level", "warn"}, args...), &out, &errb)
	require.Equal(t, 0, code, "sync exit %d: %s", code, errb.String())
	checkJSONKeys(t, "bloomwatch sync", out.Bytes())
	var sum session.Summary
	err := json.Unmarshal(out.Bytes(), &sum)
	require.NoError(t, err, "decode summary: %v\n%s", err, out.String())
	return &sum
}

// checkAgainstTruth compares a sync summary with the chain's truth, to the
// satoshi.
func checkAgainstTruth(t *testing.T, sum *session.Summary, truth *testnet.Truth) {
	t.Helper()
	require.Equal(t, truth.TipHeight, sum.TipHeight, "tip %d %s, want %d %s", sum.TipHeight, sum.TipHash, truth.TipHeight, truth.TipHash)
	require.Equal(t, truth.TipHash.String(), sum.TipHash, "tip %d %s, want %d %s", sum.TipHeight, sum.TipHash, truth.TipHeight, truth.TipHash)
	require.Equal(t, truth.Balance, sum.BalanceSat, "balance %d (+%d unconfirmed), want %d", sum.BalanceSat, sum.UnconfirmedSat, truth.Balance)
	require.Equal(t, int64(0), sum.UnconfirmedSat, "balance %d (+%d unconfirmed), want %d", sum.BalanceSat, sum.UnconfirmedSat, truth.Balance)
	want := map[string]int64{}
	for _, tx := range truth.Txs {
		want[tx.Txid.String()] = tx.Delta
	}
	got := map[string]int64{}
	for _, tx := range sum.Txs {
		got[tx.Txid] = tx.DeltaSat
	}
	for id, d := range want {
		g, ok := got[id]
		require.True(t, ok, "missing wallet tx %s (delta %d)", id, d)
		require.Equal(t, d, g, "tx %s delta %d, want %d", id, g, d)
	}
	for id := range got {
		_, ok := want[id]
		require.True(t, ok, "unexpected wallet tx %s", id)
	}
	wantU := map[string]int64{}
	for _, u := range truth.UTXOs {
		wantU[u.OutPoint().String()] = u.Value
	}
	require.Len(t, sum.UTXOs, len(wantU), "%d utxos, want %d", len(sum.UTXOs), len(wantU))
	for _, u := range sum.UTXOs {
		v, ok := wantU[u.Outpoint]
		require.True(t, ok, "utxo %s %d not in the truth (want value %d, present %v)", u.Outpoint, u.ValueSat, v, ok)
		require.Equal(t, u.ValueSat, v, "utxo %s %d not in the truth (want value %d, present %v)", u.Outpoint, u.ValueSat, v, ok)
	}
}

// TestSyncEndToEnd syncs an xpub wallet from a real regtest btcd with the
// CLI, checks the summary against the truth to the satoshi, then syncs
// again after more blocks (restart from the persisted state).
func TestSyncEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth := syncChain(t, testnet.ChainSpec{Blocks: 120, TxsPerBlock: 6, WatchAddrs: 12, SpendFraction: 0.5, Seed: 7})
	dir := filepath.Join(t.TempDir(), "w")
	peer := h.Node().P2PAddr()
	sum := runSyncJSON(t, "--datadir", dir, "--network", "regtest", "--xpub", truth.Xpub,
		"--birthday", itoa(truth.StartHeight+1), "--connect", peer)
	checkAgainstTruth(t, sum, truth)
	require.GreaterOrEqual(t, sum.MatchedTxs, len(truth.Txs), "matched %d txs, fewer than the %d wallet txs", sum.MatchedTxs, len(truth.Txs))
	require.LessOrEqual(t, sum.FalsePositives*20, sum.MatchedTxs, "%d false positives of %d matched: above 5%%", sum.FalsePositives, sum.MatchedTxs)
	require.NotEqual(t, 0, sum.Filter.Loads, "filter %+v, bytes %d: nothing loaded or received", sum.Filter, sum.BytesReceived)
	require.NotEqual(t, 0, sum.Filter.Bytes, "filter %+v, bytes %d: nothing loaded or received", sum.Filter, sum.BytesReceived)
	require.NotEqual(t, uint64(0), sum.BytesReceived, "filter %+v, bytes %d: nothing loaded or received", sum.Filter, sum.BytesReceived)
	require.NotNil(t, sum.Privacy, "no privacy reading: %+v", sum.Privacy)
	require.NotEqual(t, 0, sum.Privacy.Filters, "no privacy reading: %+v", sum.Privacy)

	// More payments after a restart: the wallet and the header store
	// persist, and the second sync picks up only what is new.
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	addr, err := key.Address(84, 0, 12)
	require.NoError(t, err)
	tx, err := h.PayAddress(addr, 150_000)
	require.NoError(t, err)
	_, err = h.Mine(3)
	require.NoError(t, err)
	sum2 := runSyncJSON(t, "--datadir", dir, "--connect", peer)
	require.Equal(t, truth.TipHeight+3, sum2.TipHeight, "after restart tip %d, want %d", sum2.TipHeight, truth.TipHeight+3)
	require.Equal(t, truth.Balance+150_000, sum2.BalanceSat, "after restart balance %d, want %d", sum2.BalanceSat, truth.Balance+150_000)
	found := false
	for _, x := range sum2.Txs {
		found = found || x.Txid == tx.TxHash().String()
	}
	require.True(t, found, "payment %s after restart not found", tx.TxHash())

	// A corrupted header store: a one-line error naming the way out,
	// then --reset-headers rebuilds it and the wallet is unchanged.
	hdrFile := filepath.Join(session.NodePath(dir), headers.FileName)
	raw, err := os.ReadFile(hdrFile)
	require.NoError(t, err)
	for i := len(raw) / 2; i < len(raw)/2+64 && i < len(raw); i++ {
		raw[i] ^= 0xff
	}
	require.NoError(t, os.WriteFile(hdrFile, raw, 0o600))
	var out, errb bytes.Buffer
	code := run([]string{"sync", "--datadir", dir, "--connect", peer, "--until-synced", "--json", "--log-level", "error"}, &out, &errb)
	require.Equal(t, 1, code, "corrupt headers: exit %d, stderr %q: want exit 1 and one line naming --reset-headers", code, errb.String())
	require.Equal(t, 0, strings.Count(strings.TrimSpace(errb.String()), "\n"), "corrupt headers: exit %d, stderr %q: want exit 1 and one line naming --reset-headers", code, errb.String())
	require.Contains(t, errb.String(), "--reset-headers", "corrupt headers: exit %d, stderr %q: want exit 1 and one line naming --reset-headers", code, errb.String())
	sum3 := runSyncJSON(t, "--datadir", dir, "--connect", peer, "--reset-headers")
	require.Equal(t, sum2.TipHeight, sum3.TipHeight, "after --reset-headers tip %d balance %d txs %d, want %d %d %d", sum3.TipHeight, sum3.BalanceSat, len(sum3.Txs), sum2.TipHeight, sum2.BalanceSat, len(sum2.Txs))
	require.Equal(t, sum2.BalanceSat, sum3.BalanceSat, "after --reset-headers tip %d balance %d txs %d, want %d %d %d", sum3.TipHeight, sum3.BalanceSat, len(sum3.Txs), sum2.TipHeight, sum2.BalanceSat, len(sum2.Txs))
	require.Len(t, sum3.Txs, len(sum2.Txs), "after --reset-headers tip %d balance %d txs %d, want %d %d %d", sum3.TipHeight, sum3.BalanceSat, len(sum3.Txs), sum2.TipHeight, sum2.BalanceSat, len(sum2.Txs))
}

// TestSyncNoPeer checks the one-line error and exit code when no peer can
// be reached, and that a first sync that failed takes back the wallet it
// created: a new data dir is removed, an existing one keeps only what it
// held (and a --log-file the user named), and the error line says so.
// Before, the new wallet.db and spv/ stayed behind unannounced.
func TestSyncNoPeer(t *testing.T) {
	root := t.TempDir()
	existing := filepath.Join(root, "existing")
	require.NoError(t, os.MkdirAll(existing, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(existing, "notes.txt"), []byte("mine\n"), 0o600))
	logFile := filepath.Join(existing, "sync.log")
	for _, tc := range []struct {
		dir, want string
		extra     []string
		left      []string // what the directory holds afterwards; nil: it is gone
	}{
		{dir: filepath.Join(root, "new"), want: "removed and " + filepath.Join(root, "new") + " not kept"},
		{dir: existing, want: "is as it was", extra: []string{"--log-file", logFile}, left: []string{"notes.txt", "sync.log"}},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"sync", "--datadir", tc.dir, "--network", "regtest", "--address", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
			"--connect", "127.0.0.1:1", "--until-synced", "--json", "--peer-timeout", "2s", "--log-level", "error"}, tc.extra...)
		code := run(args, &out, &errb)
		require.Equal(t, 1, code, "exit %d, want 1; stderr %q", code, errb.String())
		lines := strings.Count(strings.TrimSpace(errb.String()), "\n")
		require.Equal(t, 0, lines, "stderr %q: want one line naming no reachable peer and %q", errb.String(), tc.want)
		require.Contains(t, errb.String(), "no reachable peer", "stderr %q: want one line naming no reachable peer and %q", errb.String(), tc.want)
		require.Contains(t, errb.String(), tc.want, "stderr %q: want one line naming no reachable peer and %q", errb.String(), tc.want)
		require.Equal(t, 0, out.Len(), "stdout %q, want nothing", out.String())
		entries, err := os.ReadDir(tc.dir)
		if tc.left == nil {
			require.ErrorIs(t, err, fs.ErrNotExist, "%s: %v, want it gone", tc.dir, err)
			continue
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		require.Equal(t, strings.Join(tc.left, " "), strings.Join(names, " "), "%s holds %q, want %q", tc.dir, names, tc.left)
	}
}

// TestSyncV2RefusesPlaintextPeer runs sync --transport v2 against a btcd
// without --v2transport: it never sends a filter, and ends with one line
// saying why the peer was refused.
func TestSyncV2RefusesPlaintextPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	n, err := testnet.StartNode(ctx, testnet.Config{Network: "regtest"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Stop() })
	dir := filepath.Join(t.TempDir(), "w")
	var out, errb bytes.Buffer
	code := run([]string{"sync", "--datadir", dir, "--network", "regtest", "--address", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080",
		"--connect", n.P2PAddr(), "--transport", "v2", "--until-synced", "--json", "--peer-timeout", "3s", "--log-level", "error"}, &out, &errb)
	require.Equal(t, 1, code, "exit %d, want 1; stderr %q", code, errb.String())
	line := strings.TrimSpace(errb.String())
	require.Equal(t, 0, strings.Count(line, "\n"), "stderr %q: want one line naming the refusal", errb.String())
	require.Contains(t, line, "no reachable peer", "stderr %q: want one line naming the refusal", errb.String())
	require.Contains(t, line, n.P2PAddr()+": spv: peer speaks only the plaintext v1 transport", "stderr %q: want one line naming the refusal", errb.String())
	recs, err := os.ReadFile(filepath.Join(dir, "spv", "transcript.jsonl"))
	if !errors.Is(err, os.ErrNotExist) {
		require.NoError(t, err)
	}
	require.Empty(t, recs, "a record was written under --transport v2 to a v1 peer: %s", recs)
}

// itoa formats an int32.
func itoa(v int32) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSyncBIP44ImportedAndReorg syncs a BIP44 (P2PKH) xpub wallet that
// also imports a single address far past the gap limit, checks both
// against the truth, then makes a reorg whose losing branch holds a
// payment to the wallet and whose winning branch double-spends it (paying
// the wallet less): after the next sync the payment is gone and the double
// spend counts instead.
func TestSyncBIP44ImportedAndReorg(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	for _, visible := range []bool{true, false} {
		t.Run(fmt.Sprintf("double-spend-pays-wallet=%v", visible), func(t *testing.T) { syncReorgCase(t, visible) })
	}
}

// syncReorgCase is one TestSyncBIP44ImportedAndReorg run: the double
// spend pays the wallet (visible) or only someone else, when the wallet
// learns of it through the payer's input it watches while the payment is
// pending.
func syncReorgCase(t *testing.T, visible bool) {
	h, truth := syncChain(t, testnet.ChainSpec{Blocks: 60, TxsPerBlock: 5, Purpose: 44, WatchAddrs: 6, SpendFraction: 0.5, Seed: 5})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	imported, err := key.Address(84, 0, 500)
	require.NoError(t, err)
	pay, err := h.PayAddress(imported, 77_000)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "w")
	peer := h.Node().P2PAddr()
	sum := runSyncJSON(t, "--datadir", dir, "--network", "regtest", "--xpub", truth.Xpub, "--address", imported.EncodeAddress(),
		"--birthday", itoa(truth.StartHeight+1), "--connect", peer)
	require.Equal(t, truth.Balance+77_000, sum.BalanceSat, "balance %d, want %d (truth %d + imported 77000)", sum.BalanceSat, truth.Balance+77_000, truth.Balance)
	found := false
	for _, x := range sum.Txs {
		found = found || x.Txid == pay.TxHash().String()
	}
	require.True(t, found, "payment %s to the imported address not found", pay.TxHash())
	before := sum.BalanceSat

	// A payment to the wallet in the branch that loses, double-spent in
	// the branch that wins.
	addr, err := key.Address(44, 0, 6)
	require.NoError(t, err)
	script, err := txscript.PayToAddrScript(addr)
	require.NoError(t, err)
	orphan, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(123_456, script)})
	require.NoError(t, err)
	// A second btcd shares the chain so far, then goes its own way.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n2, err := testnet.StartNode(ctx, testnet.Config{Network: "regtest"})
	require.NoError(t, err)
	defer n2.Stop()
	require.NoError(t, n2.ConnectToCtx(ctx, h.Node()))
	require.NoError(t, n2.WaitSynced(ctx, h.Node()))
	require.NoError(t, n2.DisconnectFromCtx(ctx, h.Node()))
	// The losing branch: one block with the payment, synced.
	require.NoError(t, h.Broadcast(orphan))
	_, err = h.Mine(1)
	require.NoError(t, err)
	mid := runSyncJSON(t, "--datadir", dir, "--connect", peer)
	require.Equal(t, before+123_456, mid.BalanceSat, "before the reorg balance %d, want %d", mid.BalanceSat, before+123_456)
	// The winning branch: two blocks, the first double-spending the
	// payment, handed to the first node with submitblock (over P2P btcd
	// v0.24.2 would keep the dead payment in its mempool).
	// The double spend pays the wallet less, at another address, or
	// pays someone else.
	addr2, err := key.Address(44, 0, 7)
	require.NoError(t, err)
	script2, err := txscript.PayToAddrScript(addr2)
	require.NoError(t, err)
	var gain int64 = 100_000
	if !visible {
		script2, gain = testnet.RandomScript(rand.New(rand.NewSource(1)), testnet.KindP2WPKH), 0
	}
	ds, err := h.DoubleSpend(orphan, []*wire.TxOut{wire.NewTxOut(100_000, script2)})
	require.NoError(t, err)
	_, err = n2.RPC().SendRawTransaction(ds, true)
	require.NoError(t, err)
	hashes, err := n2.Generate(2)
	require.NoError(t, err)
	for _, hash := range hashes {
		b, err := n2.RPC().GetBlock(hash)
		require.NoError(t, err)
		require.NoError(t, h.Node().RPC().SubmitBlock(btcutil.NewBlock(b), nil))
	}
	after := runSyncJSON(t, "--datadir", dir, "--connect", peer)
	require.Equal(t, before+gain, after.BalanceSat, "after the reorg balance %d (+%d unconfirmed), want %d", after.BalanceSat, after.UnconfirmedSat, before+gain)
	require.Equal(t, int64(0), after.UnconfirmedSat, "after the reorg balance %d (+%d unconfirmed), want %d", after.BalanceSat, after.UnconfirmedSat, before+gain)
	for _, x := range after.Txs {
		require.NotEqual(t, orphan.TxHash().String(), x.Txid, "orphaned payment %s still in the history at height %d", x.Txid, x.Height)
	}
}

// TestAddressAddedAfterSyncRescans adds, to a synced wallet, an address
// that other users' transactions paid in its history: until the next sync
// the wallet keeps its history confirmed (wallet txs showed it as mempool
// with 0 confirmations, and the confirmed balance as 0, before) and says a
// rescan is pending; the next sync rescans and ends equal to a wallet
// created with that address from the start.
func TestAddressAddedAfterSyncRescans(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth := syncChain(t, testnet.ChainSpec{Blocks: 40, TxsPerBlock: 4, WatchAddrs: 5, SpendFraction: 0.3, Seed: 13})
	peer, birthday := h.Node().P2PAddr(), itoa(truth.StartHeight+1)
	addr := foreignAddressOnChain(t, h, truth)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	first := runSyncJSON(t, "--datadir", a, "--network", "regtest", "--xpub", truth.Xpub, "--birthday", birthday, "--connect", peer)
	checkAgainstTruth(t, first, truth)

	code, out, errOut := runCLI(t, []string{"wallet", "add", "--datadir", a, "--address", addr})
	require.Equal(t, 0, code, "wallet add: %d %q %q", code, out, errOut)
	require.Contains(t, out, "rescans from the birthday", "wallet add: %d %q %q", code, out, errOut)
	code, out, _ = runCLI(t, []string{"wallet", "txs", "--datadir", a})
	require.Equal(t, 0, code, "wallet txs after the import: %d\n%s", code, out)
	require.NotContains(t, out, "mempool", "wallet txs after the import: %d\n%s", code, out)
	require.Equal(t, 1, strings.Count(out, "rescan pending"), "wallet txs after the import: %d\n%s", code, out)
	require.Equal(t, len(truth.Txs)+2, strings.Count(out, "\n"), "wallet txs after the import: %d\n%s", code, out)
	code, out, _ = runCLI(t, []string{"wallet", "balance", "--datadir", a, "--json"})
	require.Equal(t, 0, code, "wallet balance after the import: %d\n%s", code, out)
	require.Contains(t, out, fmt.Sprintf(`"confirmed_sat":%d`, truth.Balance), "wallet balance after the import: %d\n%s", code, out)

	again := runSyncJSON(t, "--datadir", a, "--connect", peer)
	ref := runSyncJSON(t, "--datadir", b, "--network", "regtest", "--xpub", truth.Xpub, "--address", addr, "--birthday", birthday, "--connect", peer)
	require.Greater(t, len(again.Txs), len(truth.Txs), "the rescan found %d transactions, the xpub alone has %d: none of %s's", len(again.Txs), len(truth.Txs), addr)
	require.Equal(t, ref.TipHeight, again.TipHeight, "after the rescan tip %d balance %d+%d, from the start %d %d+%d", again.TipHeight, again.BalanceSat, again.UnconfirmedSat, ref.TipHeight, ref.BalanceSat, ref.UnconfirmedSat)
	require.Equal(t, ref.BalanceSat, again.BalanceSat, "after the rescan tip %d balance %d+%d, from the start %d %d+%d", again.TipHeight, again.BalanceSat, again.UnconfirmedSat, ref.TipHeight, ref.BalanceSat, ref.UnconfirmedSat)
	require.Equal(t, ref.UnconfirmedSat, again.UnconfirmedSat, "after the rescan tip %d balance %d+%d, from the start %d %d+%d", again.TipHeight, again.BalanceSat, again.UnconfirmedSat, ref.TipHeight, ref.BalanceSat, ref.UnconfirmedSat)
	require.Equal(t, fmt.Sprint(ref.Txs), fmt.Sprint(again.Txs), "after the rescan:\n%v\n%v\nfrom the start:\n%v\n%v", again.Txs, again.UTXOs, ref.Txs, ref.UTXOs)
	require.Equal(t, fmt.Sprint(ref.UTXOs), fmt.Sprint(again.UTXOs), "after the rescan:\n%v\n%v\nfrom the start:\n%v\n%v", again.Txs, again.UTXOs, ref.Txs, ref.UTXOs)
	code, out, _ = runCLI(t, []string{"wallet", "txs", "--datadir", a})
	require.Equal(t, 0, code, "wallet txs after the rescan: %d\n%s", code, out)
	require.NotContains(t, out, "rescan pending", "wallet txs after the rescan: %d\n%s", code, out)
}

// foreignAddressOnChain returns the address of an output of a transaction
// above the wallet's birthday that is not the wallet's, and is spent later
// or not: another user's address with history.
func foreignAddressOnChain(t *testing.T, h *testnet.Harness, truth *testnet.Truth) string {
	t.Helper()
	ours := map[string]bool{}
	for _, tx := range truth.Txs {
		ours[tx.Txid.String()] = true
	}
	rpc := h.Node().RPC()
	for height := truth.StartHeight + 2; height <= truth.TipHeight; height++ {
		hash, err := rpc.GetBlockHash(int64(height))
		require.NoError(t, err)
		blk, err := rpc.GetBlock(hash)
		require.NoError(t, err)
		for _, tx := range blk.Transactions[1:] {
			if ours[tx.TxHash().String()] {
				continue
			}
			for _, out := range tx.TxOut {
				_, addrs, _, err := txscript.ExtractPkScriptAddrs(out.PkScript, h.Params())
				if err == nil && len(addrs) == 1 {
					return addrs[0].EncodeAddress()
				}
			}
		}
	}
	require.FailNow(t, "no foreign address on the chain")
	return ""
}
