package testnet

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/stretchr/testify/require"
)

func TestBuildChainTruth(t *testing.T) {
	h := NewT(t, Options{})
	key, err := NewKeyring(DemoSeed, h.Params())
	require.NoError(t, err)
	spec := ChainSpec{
		Blocks: 60, TxsPerBlock: 3, Keyring: key, Purpose: PurposeBIP49,
		WatchAddrs: 12, PaymentsPerAddr: 2, SpendFraction: 0.5, Seed: 7,
	}
	truth, err := h.BuildChain(t.Context(), spec)
	require.NoError(t, err)
	require.Equal(t, truth.StartHeight+60, truth.TipHeight)
	require.Equal(t, 60*3, truth.NoiseTxs)

	// Shape: 24 payments, 12 spends, 12 addresses used in index order,
	// 12 change addresses.
	kinds := map[string]int{}
	for _, tx := range truth.Txs {
		kinds[tx.Kind]++
		require.Greater(t, tx.Height, truth.StartHeight)
	}
	require.Equal(t, map[string]int{TxPayment: 24, TxSpend: 12}, kinds)
	var ext, chg int
	firstByIndex := map[uint32]int32{}
	for _, a := range truth.Addresses {
		if a.Branch == BranchExternal {
			ext++
			firstByIndex[a.Index] = a.FirstHeight
		} else {
			chg++
		}
		require.Equal(t, a.Received-a.Spent, a.Net)
	}
	require.Equal(t, 12, ext)
	require.Equal(t, 12, chg)
	for i := uint32(1); i < 12; i++ {
		require.LessOrEqual(t, firstByIndex[i-1], firstByIndex[i], "first payments in index order")
	}

	// Totals agree: balance = sum of UTXOs = sum of deltas = sum of nets.
	var sumDelta, sumNet, sumUTXO int64
	for _, tx := range truth.Txs {
		sumDelta += tx.Delta
	}
	for _, a := range truth.Addresses {
		sumNet += a.Net
	}
	for _, u := range truth.UTXOs {
		sumUTXO += u.Value
	}
	require.Equal(t, truth.Balance, sumDelta)
	require.Equal(t, truth.Balance, sumNet)
	require.Equal(t, truth.Balance, sumUTXO)
	require.Positive(t, truth.Balance)

	// The node agrees: every truth UTXO is unspent with its value, and a
	// chain scan independent of BuildChain's bookkeeping finds the same.
	for _, u := range truth.UTXOs {
		res, err := h.Node().RPC().GetTxOut(&u.Txid, u.Vout, false)
		require.NoError(t, err)
		require.NotNil(t, res, "utxo %v unspent", u.OutPoint())
		amt, err := btcutil.NewAmount(res.Value)
		require.NoError(t, err)
		require.Equal(t, u.Value, int64(amt))
		require.Equal(t, u.Address, res.ScriptPubKey.Address)
	}
	scanned, err := ScanTruth(t.Context(), h.Node(), key, PurposeBIP49, truth.StartHeight+1)
	require.NoError(t, err)
	require.Equal(t, truth.UTXOs, scanned.UTXOs)
	require.Equal(t, truth.Addresses, scanned.Addresses)
	require.Equal(t, truth.Balance, scanned.Balance)
	want := append([]TruthTx(nil), truth.Txs...)
	SortTruthTxs(want)
	SortTruthTxs(scanned.Txs)
	require.Equal(t, want, scanned.Txs)

	// Some spends take two wallet inputs (a payment and older change).
	multi := 0
	for _, tx := range truth.Txs {
		if tx.Kind != TxSpend {
			continue
		}
		raw, err := h.Node().RPC().GetRawTransaction(&tx.Txid)
		require.NoError(t, err)
		if len(raw.MsgTx().TxIn) > 1 {
			multi++
		}
	}
	require.Positive(t, multi, "multi-input spends")
	t.Logf("%d of %d spends have two wallet inputs", multi, kinds[TxSpend])

	// JSON round trip.
	path := filepath.Join(t.TempDir(), "truth.json")
	require.NoError(t, truth.WriteFile(path))
	back, err := ReadTruth(path)
	require.NoError(t, err)
	require.Equal(t, truth, back)

	// Same seed on a fresh harness: same structure.
	h2 := NewT(t, Options{})
	truth2, err := h2.BuildChain(t.Context(), spec)
	require.NoError(t, err)
	require.Equal(t, truth.Balance, truth2.Balance)
	require.Equal(t, len(truth.Txs), len(truth2.Txs))
	for i := range truth.Txs {
		require.Equal(t, truth.Txs[i].Height, truth2.Txs[i].Height)
		require.Equal(t, truth.Txs[i].Delta, truth2.Txs[i].Delta)
	}
}

func TestBuildChainBadSpec(t *testing.T) {
	h := NewT(t, Options{Bare: true})
	_, err := h.BuildChain(t.Context(), ChainSpec{Blocks: 0})
	require.ErrorIs(t, err, ErrBadSpec)
	_, err = h.BuildChain(t.Context(), ChainSpec{Blocks: 5, WatchAddrs: 2})
	require.ErrorIs(t, err, ErrBadSpec)
	_, err = h.BuildChain(t.Context(), ChainSpec{Blocks: 5, SpendFraction: 1.5})
	require.ErrorIs(t, err, ErrBadSpec)
	// Empty blocks only: mined in one batch.
	truth, err := h.BuildChain(t.Context(), ChainSpec{Blocks: 25})
	require.NoError(t, err)
	require.Equal(t, int32(25), truth.TipHeight)
	require.Empty(t, truth.Txs)
}

// TestBuildChainCancel cancels a build from its progress callback: the
// build stops with the context's error and the harness stays usable.
func TestBuildChainCancel(t *testing.T) {
	h := NewT(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	_, err := h.BuildChain(ctx, ChainSpec{Blocks: 50, TxsPerBlock: 1, Progress: func(done, total int) {
		calls++
		if done == 5 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 5, calls)
	_, err = h.Noise(1)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
}
