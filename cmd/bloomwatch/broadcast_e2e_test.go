package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// TestWalletPSBTAndBroadcastEndToEnd is the flow of a watch-only wallet
// with an external signer, through the CLI, against three btcd on
// 127.0.0.1 (A mines; B and C follow it): for a single-key BIP84 wallet
// and a 2-of-3 wsh(sortedmulti) wallet, `sync` creates and syncs the
// wallet from A, `wallet psbt` builds the unsigned transaction, the test
// signs it with the keyring's private keys outside bloomwatch (as a
// hardware signer would, btcd's txscript through psbt), `broadcast`
// (given a PSBT to finalize for one, a raw transaction for the other)
// sends it over a fresh connection to the node that is no filter peer
// (two connection slots over three addresses), btcd's mempool holds it,
// `wallet txs` shows it pending, a mined block confirms it and `wallet
// balance` equals the chain's truth.
func TestWalletPSBTAndBroadcastEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	b, err := h.StartPeer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.StartPeer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := h.Node()
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	if err != nil {
		t.Fatal(err)
	}
	_, start, err := a.BestBlock()
	if err != nil {
		t.Fatal(err)
	}
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := key.MultisigDescriptor()
	if err != nil {
		t.Fatal(err)
	}
	// Two coins of each wallet, in two transactions.
	for _, purpose := range []uint32{testnet.PurposeBIP84, testnet.PurposeMultisig} {
		for i, amt := range []int64{600_000, 250_000} {
			addr, err := key.Address(purpose, testnet.BranchExternal, uint32(i))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.PayAddress(addr, btcutil.Amount(amt)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := h.Mine(1); err != nil {
		t.Fatal(err)
	}
	waitPeers := func() {
		t.Helper()
		for _, n := range []*testnet.Node{b, c} {
			if err := n.WaitSynced(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitPeers()
	birthday := strconv.Itoa(int(start + 1))
	to, err := testnet.NewKeyring([]byte("someone else's seed, 32 bytes!!"), h.Params())
	if err != nil {
		t.Fatal(err)
	}
	payee, err := to.Address(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		key     []string
		purpose uint32
		asPSBT  bool // broadcast the signed PSBT (finalized by broadcast), else the raw hex
	}{
		{"bip84", []string{"--xpub", vpub}, testnet.PurposeBIP84, true},
		{"multisig 2 of 3", []string{"--descriptor", desc}, testnet.PurposeMultisig, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			syncArgs := append([]string{"sync", "--no-tui", "--until-synced", "--datadir", dir, "--network", "regtest",
				"--birthday", birthday, "--connect", a.P2PAddr(), "--log-level", "warn"}, tc.key...)
			if code, _, errOut := runCLI(t, syncArgs); code != 0 {
				t.Fatalf("sync: exit %d: %s", code, errOut)
			}
			unsigned := filepath.Join(t.TempDir(), "tx.psbt")
			code, out, errOut := runCLI(t, []string{"wallet", "psbt", "--datadir", dir, "--to", payee.EncodeAddress() + ":0.007",
				"--feerate", "2", "--out", unsigned})
			if code != 0 {
				t.Fatalf("wallet psbt: exit %d: %s", code, errOut)
			}
			t.Logf("wallet psbt:\n%s", out)
			if !strings.Contains(out, "received in 2 transaction(s)") {
				t.Errorf("0.007 BTC needs both coins: %s", out)
			}

			// The signer: the keyring, outside bloomwatch.
			raw, err := os.ReadFile(unsigned)
			if err != nil {
				t.Fatal(err)
			}
			p, err := psbt.NewFromRawBytes(bytes.NewReader(raw), false)
			if err != nil {
				t.Fatal(err)
			}
			if err := key.SignPSBT(p); err != nil {
				t.Fatal(err)
			}
			var bcArgs []string
			var txid chainhash.Hash
			if tc.asPSBT {
				b64, err := p.B64Encode()
				if err != nil {
					t.Fatal(err)
				}
				signed := filepath.Join(t.TempDir(), "signed.psbt")
				if err := os.WriteFile(signed, []byte(b64+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				bcArgs = []string{"--psbt", signed}
				txid = p.UnsignedTx.TxHash()
			} else {
				if err := psbt.MaybeFinalizeAll(p); err != nil {
					t.Fatal(err)
				}
				tx, err := psbt.Extract(p)
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := tx.Serialize(&buf); err != nil {
					t.Fatal(err)
				}
				bcArgs = []string{"--tx", hex.EncodeToString(buf.Bytes())}
				txid = tx.TxHash()
			}
			code, out, errOut = runCLI(t, append([]string{"broadcast", "--datadir", dir, "--json", "--max-peers", "2",
				"--connect", a.P2PAddr(), "--connect", b.P2PAddr(), "--connect", c.P2PAddr()}, bcArgs...))
			if code != 0 {
				t.Fatalf("broadcast: exit %d: %s", code, errOut)
			}
			checkJSONKeys(t, "bloomwatch broadcast", []byte(out))
			var res struct {
				Txid           string `json:"txid"`
				SentTo         string `json:"sent_to"`
				AlsoFilterPeer bool   `json:"also_filter_peer"`
				ConfirmedBy    string `json:"confirmed_by"`
				Rebroadcast    *bool  `json:"rebroadcast"`
				Wallet         *struct {
					Height int32 `json:"height"`
					Delta  int64 `json:"delta_sat"`
				} `json:"wallet"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("broadcast --json: %v: %s", err, out)
			}
			t.Logf("broadcast: %s", out)
			// Two filter peers of three addresses: the target is the
			// third (C unless a slot reconnected to it).
			if res.Txid != txid.String() || res.AlsoFilterPeer || res.ConfirmedBy == res.SentTo || res.ConfirmedBy == "" {
				t.Fatalf("broadcast %+v: want %v sent to the node that is no filter peer, relayed back by another", res, txid)
			}
			if res.Rebroadcast == nil || *res.Rebroadcast {
				t.Fatalf("broadcast --json: rebroadcast %v, want false: a standalone broadcast's node stops", res.Rebroadcast)
			}
			if res.Wallet == nil || res.Wallet.Height != -1 {
				t.Fatalf("the wallet holds %+v, want it pending", res.Wallet)
			}
			pool, err := a.RPC().GetRawMempool()
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, h := range pool {
				found = found || *h == txid
			}
			if !found {
				t.Fatalf("btcd's mempool lacks %v", txid)
			}
			code, out, errOut = runCLI(t, []string{"wallet", "txs", "--datadir", dir, "--json"})
			if code != 0 || !strings.Contains(out, txid.String()) {
				t.Fatalf("wallet txs: exit %d %s %s", code, out, errOut)
			}

			// A block confirms it; the balance is the chain's.
			if _, err := h.Mine(1); err != nil {
				t.Fatal(err)
			}
			waitPeers()
			if code, _, errOut := runCLI(t, syncArgs); code != 0 {
				t.Fatalf("sync after the block: exit %d: %s", code, errOut)
			}
			truth, err := testnet.ScanTruth(ctx, a, key, tc.purpose, start+1)
			if err != nil {
				t.Fatal(err)
			}
			code, out, errOut = runCLI(t, []string{"wallet", "balance", "--datadir", dir, "--json"})
			if code != 0 {
				t.Fatalf("wallet balance: %s", errOut)
			}
			var bal struct {
				Confirmed    int64 `json:"confirmed_sat"`
				PendingSpent int64 `json:"pending_spent_sat"`
			}
			if err := json.Unmarshal([]byte(out), &bal); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if bal.Confirmed != truth.Balance || bal.PendingSpent != 0 {
				t.Fatalf("balance %+v, truth %d", bal, truth.Balance)
			}
			spent := false
			for _, tx := range truth.Txs {
				spent = spent || tx.Txid == txid && tx.Kind == testnet.TxSpend
			}
			if !spent {
				t.Fatalf("the chain's truth has no spend %v", txid)
			}
		})
	}
}
