package testnet

import (
	"sort"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/bloomwatch/bloomwatch/watch"
)

// TestTruthMatchesWallet feeds every block of a built chain, with all its
// transactions, to the real watch-only wallet and checks that the wallet
// ends exactly at the truth: what BuildChain promises is in the wallet's
// own terms (deltas, heights, UTXOs, balance).
func TestTruthMatchesWallet(t *testing.T) {
	h := NewT(t, Options{})
	key, err := NewKeyring(DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(t.Context(), ChainSpec{
		Blocks: 80, TxsPerBlock: 2, Keyring: key, Purpose: PurposeBIP84,
		WatchAddrs: 30, PaymentsPerAddr: 2, SpendFraction: 0.5, Seed: 11,
	})
	require.NoError(t, err)

	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{
		Network: truth.Network, Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
	})
	require.NoError(t, err)
	defer w.Close()
	rpc := h.Node().RPC()
	for height := truth.StartHeight + 1; height <= truth.TipHeight; height++ {
		hash, err := rpc.GetBlockHash(int64(height))
		require.NoError(t, err)
		blk, err := rpc.GetBlock(hash)
		require.NoError(t, err)
		fb := &watch.FilteredBlock{Height: height, Hash: *hash, Header: blk.Header, Txs: blk.Transactions,
			TotalTxs: uint32(len(blk.Transactions))}
		for i := range blk.Transactions {
			fb.TxIndexes = append(fb.TxIndexes, uint32(i))
		}
		_, err = w.ApplyBlock(fb)
		require.NoError(t, err, "height %d", height)
	}
	require.NoError(t, w.Flush())

	bal, err := w.Balance()
	require.NoError(t, err)
	require.Equal(t, btcutil.Amount(truth.Balance), bal.Total())
	require.Equal(t, btcutil.Amount(truth.Balance), bal.Confirmed)

	txs, err := w.Txs()
	require.NoError(t, err)
	got := make([]TruthTx, 0, len(txs))
	for _, s := range txs {
		got = append(got, TruthTx{Txid: s.Txid, Height: s.Height, BlockHash: s.BlockHash, Delta: s.Delta})
	}
	want := make([]TruthTx, 0, len(truth.Txs))
	for _, tx := range truth.Txs {
		tx.Kind = ""
		want = append(want, tx)
	}
	sortTxs(got)
	sortTxs(want)
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

	// Every truth address is one the wallet marks used.
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
	sort.Strings(missing)
	require.Empty(t, missing)
}
