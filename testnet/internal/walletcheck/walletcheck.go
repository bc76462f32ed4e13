// Package walletcheck holds a watch-only wallet to the truth of a chain
// testnet built, for the harness tests of btcd and bcoin alike. Only
// tests import it.
package walletcheck

import (
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// Require checks that w holds exactly truth, all of it confirmed:
// balance, transactions (height, block, delta), unspent outputs, and
// every truth address marked used.
func Require(t testing.TB, w *wallet.Wallet, truth *testnet.Truth) {
	t.Helper()
	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, btcutil.Amount(truth.Balance), bal.Confirmed)
	require.Equal(t, btcutil.Amount(truth.Balance), bal.Total())

	txs, err := w.Txs()
	require.NoError(t, err)
	got := make([]testnet.TruthTx, 0, len(txs))
	for _, s := range txs {
		got = append(got, testnet.TruthTx{Txid: s.Txid, Height: s.Height, BlockHash: s.BlockHash, Delta: s.Delta})
	}
	want := make([]testnet.TruthTx, 0, len(truth.Txs))
	for _, tx := range truth.Txs {
		tx.Kind = ""
		want = append(want, tx)
	}
	testnet.SortTruthTxs(got)
	testnet.SortTruthTxs(want)
	require.Equal(t, want, got)

	utxos, err := w.UTXOs()
	require.NoError(t, err)
	gotOps := make(map[wire.OutPoint]int64, len(utxos))
	for _, u := range utxos {
		gotOps[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = int64(u.Amount)
	}
	wantOps := make(map[wire.OutPoint]int64, len(truth.UTXOs))
	for _, u := range truth.UTXOs {
		wantOps[u.OutPoint()] = u.Value
	}
	require.Equal(t, wantOps, gotOps)

	infos, err := w.Addresses()
	require.NoError(t, err)
	used := map[string]bool{}
	for _, a := range infos {
		if a.Used {
			used[a.Address] = true
		}
	}
	var missing []string
	for _, a := range truth.Addresses {
		if !used[a.Address] {
			missing = append(missing, a.Address)
		}
	}
	require.Empty(t, missing)
}
