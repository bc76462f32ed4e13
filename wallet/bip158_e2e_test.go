package wallet_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// syncOverBIP158 syncs w from the btcd at addr over compact block filters
// until it reaches tip, then stops the node and flushes the wallet. It
// returns the node's last status.
func syncOverBIP158(t *testing.T, w *wallet.Wallet, addr string, tip int32) spv.Status {
	t.Helper()
	net, err := netparams.Lookup(w.Network())
	require.NoError(t, err)
	node, err := spv.New(spv.Config{
		Network: net, DataDir: t.TempDir(), Connect: []string{addr}, Watcher: w,
		Protocol: spv.ProtocolBIP158,
		Tuning:   spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, StallTimeout: 10 * time.Second},
	})
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eSyncTimeout)
	defer cancel()
	var st spv.Status
	for {
		st = node.Status()
		require.NoError(t, st.Err)
		if st.WatcherHeight >= tip && st.Synced {
			break
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, fmt.Sprintf("light node did not sync to %d over BIP158: %+v", tip, st))
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.NoError(t, node.Stop())
	require.NoError(t, w.Flush())
	return st
}

// TestWalletSyncsOverBIP158 builds a regtest chain on a real btcd
// (127.0.0.1) for a BIP84 account (30 receive addresses paid twice each,
// 40 % of the coins spent with change) and for the keyring's 2-of-3
// wsh(sortedmulti(...)) descriptor, syncs a watch-only wallet made from
// the xpub or the descriptor alone over BIP157/158 (no bloom filter is
// ever sent) and checks it against the chain's truth: every transaction
// with its net amount, the unspent outputs, the balance and the used
// addresses.
func TestWalletSyncsOverBIP158(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	for _, tc := range []struct {
		name    string
		purpose uint32
		addrs   int
	}{
		{"bip84-xpub", testnet.PurposeBIP84, 30},
		{"2-of-3-descriptor", testnet.PurposeMultisig, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testnet.NewT(t, testnet.Options{})
			key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
			require.NoError(t, err)
			truth, err := h.BuildChain(context.Background(), testnet.ChainSpec{
				Blocks: 30, TxsPerBlock: 3, Keyring: key, Purpose: tc.purpose,
				WatchAddrs: tc.addrs, PaymentsPerAddr: 2, SpendFraction: 0.4, Seed: 39,
			})
			require.NoError(t, err)
			cfg := wallet.CreateConfig{Network: h.Params().Name, Birthday: truth.StartHeight + 1}
			if truth.Descriptor != "" {
				cfg.Descriptors = []string{truth.Descriptor}
			} else {
				cfg.Xpubs = []string{truth.Xpub}
			}
			w, err := wallet.Create(t.TempDir(), cfg)
			require.NoError(t, err)
			defer w.Close()
			st := syncOverBIP158(t, w, h.Node().P2PAddr(), truth.TipHeight)
			require.Equal(t, spv.ProtocolBIP158, st.Protocol)
			require.Zero(t, st.Filter.Loads, "no filterload over BIP158")

			txs, err := w.Txs()
			require.NoError(t, err)
			type entry struct {
				height int32
				delta  int64
			}
			got := map[chainhash.Hash]entry{}
			for _, s := range txs {
				got[s.Txid] = entry{s.Height, s.Delta}
			}
			want := map[chainhash.Hash]entry{}
			spends := 0
			for _, tx := range truth.Txs {
				want[tx.Txid] = entry{tx.Height, tx.Delta}
				if tx.Kind == testnet.TxSpend {
					spends++
				}
			}
			require.Equal(t, want, got)
			require.GreaterOrEqual(t, spends, 5, "the chain holds spends")

			utxos, err := w.UTXOs()
			require.NoError(t, err)
			gotUTXOs := map[wire.OutPoint]int64{}
			for _, u := range utxos {
				gotUTXOs[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = int64(u.Amount)
			}
			wantUTXOs := map[wire.OutPoint]int64{}
			for _, u := range truth.UTXOs {
				wantUTXOs[u.OutPoint()] = u.Value
			}
			require.Equal(t, wantUTXOs, gotUTXOs)
			bal, err := w.Balance()
			require.NoError(t, err)
			require.Equal(t, btcutil.Amount(truth.Balance), bal.Confirmed)

			addrs, err := w.Addresses()
			require.NoError(t, err)
			used := map[string]bool{}
			for _, a := range addrs {
				if a.Used {
					used[a.Address] = true
				}
			}
			require.Len(t, used, len(truth.Addresses))
			for _, a := range truth.Addresses {
				require.True(t, used[a.Address], "%s (branch %d index %d) used", a.Address, a.Branch, a.Index)
			}
			t.Logf("%s: %d wallet transactions (%d spends); %d filters (%d bytes), %d blocks fetched (%d bytes, %d false positives)",
				tc.name, len(txs), spends, st.CF.Filters, st.CF.FilterBytes, st.CF.Blocks, st.CF.BlockBytes, st.CF.FalsePositives)
		})
	}
}
