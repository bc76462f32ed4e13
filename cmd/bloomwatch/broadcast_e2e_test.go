package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, err)
	c, err := h.StartPeer(ctx)
	require.NoError(t, err)
	a := h.Node()
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	_, start, err := a.BestBlock()
	require.NoError(t, err)
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	desc, err := key.MultisigDescriptor()
	require.NoError(t, err)
	// Two coins of each wallet, in two transactions.
	for _, purpose := range []uint32{testnet.PurposeBIP84, testnet.PurposeMultisig} {
		for i, amt := range []int64{600_000, 250_000} {
			addr, err := key.Address(purpose, testnet.BranchExternal, uint32(i))
			require.NoError(t, err)
			_, err = h.PayAddress(addr, btcutil.Amount(amt))
			require.NoError(t, err)
		}
	}
	_, err = h.Mine(1)
	require.NoError(t, err)
	waitPeers := func() {
		t.Helper()
		for _, n := range []*testnet.Node{b, c} {
			require.NoError(t, n.WaitSynced(ctx, a))
		}
	}
	waitPeers()
	birthday := strconv.Itoa(int(start + 1))
	to, err := testnet.NewKeyring([]byte("someone else's seed, 32 bytes!!"), h.Params())
	require.NoError(t, err)
	payee, err := to.Address(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	require.NoError(t, err)
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
			code, _, errOut := runCLI(t, syncArgs)
			require.Equal(t, 0, code, "sync: exit %d: %s", code, errOut)
			unsigned := filepath.Join(t.TempDir(), "tx.psbt")
			code, out, errOut := runCLI(t, []string{"wallet", "psbt", "--datadir", dir, "--to", payee.EncodeAddress() + ":0.007",
				"--feerate", "2", "--out", unsigned})
			require.Equal(t, 0, code, "wallet psbt: exit %d: %s", code, errOut)
			t.Logf("wallet psbt:\n%s", out)
			require.Contains(t, out, "received in 2 transaction(s)", "0.007 BTC needs both coins: %s", out)

			// The signer: the keyring, outside bloomwatch.
			raw, err := os.ReadFile(unsigned)
			require.NoError(t, err)
			p, err := psbt.NewFromRawBytes(bytes.NewReader(raw), false)
			require.NoError(t, err)
			require.NoError(t, key.SignPSBT(p))
			var bcArgs []string
			var txid chainhash.Hash
			if tc.asPSBT {
				b64, err := p.B64Encode()
				require.NoError(t, err)
				signed := filepath.Join(t.TempDir(), "signed.psbt")
				require.NoError(t, os.WriteFile(signed, []byte(b64+"\n"), 0o600))
				bcArgs = []string{"--psbt", signed}
				txid = p.UnsignedTx.TxHash()
			} else {
				require.NoError(t, psbt.MaybeFinalizeAll(p))
				tx, err := psbt.Extract(p)
				require.NoError(t, err)
				var buf bytes.Buffer
				require.NoError(t, tx.Serialize(&buf))
				bcArgs = []string{"--tx", hex.EncodeToString(buf.Bytes())}
				txid = tx.TxHash()
			}
			code, out, errOut = runCLI(t, append([]string{"broadcast", "--datadir", dir, "--json", "--max-peers", "2",
				"--connect", a.P2PAddr(), "--connect", b.P2PAddr(), "--connect", c.P2PAddr()}, bcArgs...))
			require.Equal(t, 0, code, "broadcast: exit %d: %s", code, errOut)
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
			require.NoError(t, json.Unmarshal([]byte(out), &res), "broadcast --json: %s", out)
			t.Logf("broadcast: %s", out)
			// Two filter peers of three addresses: the target is the
			// third (C unless a slot reconnected to it).
			require.Equal(t, txid.String(), res.Txid, "broadcast %+v: want %v sent to the node that is no filter peer, relayed back by another", res, txid)
			require.False(t, res.AlsoFilterPeer, "broadcast %+v: want %v sent to the node that is no filter peer, relayed back by another", res, txid)
			require.NotEqual(t, res.SentTo, res.ConfirmedBy, "broadcast %+v: want %v sent to the node that is no filter peer, relayed back by another", res, txid)
			require.NotEqual(t, "", res.ConfirmedBy, "broadcast %+v: want %v sent to the node that is no filter peer, relayed back by another", res, txid)
			require.NotNil(t, res.Rebroadcast, "broadcast --json: rebroadcast %v, want false: a standalone broadcast's node stops", res.Rebroadcast)
			require.False(t, *res.Rebroadcast, "broadcast --json: rebroadcast %v, want false: a standalone broadcast's node stops", res.Rebroadcast)
			require.NotNil(t, res.Wallet, "the wallet holds %+v, want it pending", res.Wallet)
			require.Equal(t, int32(-1), res.Wallet.Height, "the wallet holds %+v, want it pending", res.Wallet)
			pool, err := a.RPC().GetRawMempool()
			require.NoError(t, err)
			found := false
			for _, h := range pool {
				found = found || *h == txid
			}
			require.True(t, found, "btcd's mempool lacks %v", txid)
			code, out, errOut = runCLI(t, []string{"wallet", "txs", "--datadir", dir, "--json"})
			require.Equal(t, 0, code, "wallet txs: exit %d %s %s", code, out, errOut)
			require.Contains(t, out, txid.String(), "wallet txs: exit %d %s %s", code, out, errOut)

			// A block confirms it; the balance is the chain's.
			_, err = h.Mine(1)
			require.NoError(t, err)
			waitPeers()
			code, _, errOut = runCLI(t, syncArgs)
			require.Equal(t, 0, code, "sync after the block: exit %d: %s", code, errOut)
			truth, err := testnet.ScanTruth(ctx, a, key, tc.purpose, start+1)
			require.NoError(t, err)
			code, out, errOut = runCLI(t, []string{"wallet", "balance", "--datadir", dir, "--json"})
			require.Equal(t, 0, code, "wallet balance: %s", errOut)
			var bal struct {
				Confirmed    int64 `json:"confirmed_sat"`
				PendingSpent int64 `json:"pending_spent_sat"`
			}
			err = json.Unmarshal([]byte(out), &bal)
			require.NoError(t, err, "%v: %s", err, out)
			require.Equal(t, truth.Balance, bal.Confirmed, "balance %+v, truth %d", bal, truth.Balance)
			require.Equal(t, int64(0), bal.PendingSpent, "balance %+v, truth %d", bal, truth.Balance)
			spent := false
			for _, tx := range truth.Txs {
				spent = spent || tx.Txid == txid && tx.Kind == testnet.TxSpend
			}
			require.True(t, spent, "the chain's truth has no spend %v", txid)
		})
	}
}
