package testnet

import (
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestReorgOverP2P delivers the winning branch over the P2P link. The
// reorg itself must happen; whether btcd v0.24.2 keeps the orphaned
// double-spent transaction in its mempool (see ReorgOptions.P2P) is
// logged, not asserted, because it depends on the sync manager's timing.
func TestReorgOverP2P(t *testing.T) {
	h := NewT(t, Options{})
	rpc := h.Node().RPC()
	pay, err := h.NewTx([]*wire.TxOut{wire.NewTxOut(100_000, RandomScript(h.rng, KindP2WPKH))})
	require.NoError(t, err)
	ds, err := h.DoubleSpend(pay, []*wire.TxOut{wire.NewTxOut(40_000, RandomScript(h.rng, KindP2PKH))})
	require.NoError(t, err)
	res, err := h.Reorg(t.Context(), 2, ReorgOptions{OrphanTxs: []*wire.MsgTx{pay}, WinnerTxs: []*wire.MsgTx{ds}, P2P: true})
	require.NoError(t, err)
	best, _, err := h.Node().BestBlock()
	require.NoError(t, err)
	require.Equal(t, *res.New[len(res.New)-1], *best)
	out, err := rpc.GetTxOut(ptr(ds.TxHash()), 0, false)
	require.NoError(t, err)
	require.NotNil(t, out, "double spend confirmed")
	pool, err := rpc.GetRawMempool()
	require.NoError(t, err)
	t.Logf("mempool after a P2P reorg: %d txs (orphaned payment lingering: %v)", len(pool), len(pool) == 1 && *pool[0] == pay.TxHash())
	// The funder's coins survive the quirk: it can still pay and mine.
	_, err = h.Noise(2)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
}
