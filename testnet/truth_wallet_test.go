package testnet_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/internal/walletcheck"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/bloomwatch/bloomwatch/watch"
)

// TestTruthMatchesWallet feeds every block of a built chain, with all its
// transactions, to the real watch-only wallet and checks that the wallet
// ends exactly at the truth: what BuildChain promises is in the wallet's
// own terms (deltas, heights, UTXOs, balance).
func TestTruthMatchesWallet(t *testing.T) {
	h := testnet.NewT(t, testnet.Options{})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(t.Context(), testnet.ChainSpec{
		Blocks: 80, TxsPerBlock: 2, Keyring: key, Purpose: testnet.PurposeBIP84,
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

	walletcheck.Require(t, w, truth)
}
