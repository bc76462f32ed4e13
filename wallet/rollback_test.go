package wallet

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

func TestRollbackReorg(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	b100 := chain.add(fund, f.tx(nil, output{foreignScript(9), 9}))
	mustApply(t, w, b100.filtered())
	spend := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(1), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	mustApply(t, w, chain.add(spend, f.tx(nil, output{foreignScript(8), 8})).filtered())
	pay := f.tx(nil, output{keys.p2wpkh(extBranch, 1), 7_000})
	mustApply(t, w, chain.add(pay).filtered())
	require.Equal(t, Balance{Confirmed: 46_000}, mustBalance(t, w))
	requireOutpointsMatchStore(t, w)

	// Rolling back to the tip or above does nothing.
	mustRollback(t, w, 102)
	mustRollback(t, w, 500)
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, int64(3), st.BlocksApplied)

	// Fork at 100: both later transactions go back to unconfirmed.
	mustRollback(t, w, 100)
	sp, err := w.SyncedTo()
	require.NoError(t, err)
	require.Equal(t, watch.SyncPoint{Height: 100, Hash: b100.header.BlockHash()}, sp)
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, spend.TxHash(): -1, pay.TxHash(): -1}, txids(t, w))
	require.Equal(t, Balance{Confirmed: 100_000, Unconfirmed: 46_000, PendingSpent: 100_000}, mustBalance(t, w),
		"fund's spend is unconfirmed again: fund counts as confirmed, its spend as pending")
	requireOutpointsMatchStore(t, w)
	st, err = w.Stats()
	require.NoError(t, err)
	require.Equal(t, Stats{BlocksApplied: 1, Matched: 2, Relevant: 1, FalsePositives: 1,
		Elements: st.Elements, OutPoints: 3, Scripts: st.Scripts}, st)
	fps, err := w.FalsePositives(0)
	require.NoError(t, err)
	require.Len(t, fps, 1)
	require.Equal(t, int32(100), fps[0].Height)

	// The old tip no longer connects; the new branch does. It confirms
	// pay only; spend stays unconfirmed.
	stale := chain.add()
	_, err = w.ApplyBlock(stale.filtered())
	require.ErrorIs(t, err, ErrNotNext)
	fork := chain.fork(100)
	res := mustApply(t, w, fork.add(pay).filtered())
	require.Equal(t, []chainhash.Hash{pay.TxHash()}, res.Relevant)
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, spend.TxHash(): -1, pay.TxHash(): 101}, txids(t, w))
	require.Equal(t, Balance{Confirmed: 107_000, Unconfirmed: 39_000, PendingSpent: 100_000}, mustBalance(t, w))
	requireOutpointsMatchStore(t, w)

	// Below the first block: nothing applied any more.
	mustRollback(t, w, 42)
	sp, err = w.SyncedTo()
	require.NoError(t, err)
	require.Equal(t, watch.SyncPoint{Height: -1}, sp)
	st, err = w.Stats()
	require.NoError(t, err)
	require.Equal(t, int64(0), st.BlocksApplied)
	require.Equal(t, uint64(0), st.Matched)
	// Any height may start the chain again.
	mustApply(t, w, b100.filtered())
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, spend.TxHash(): -1, pay.TxHash(): -1}, txids(t, w))
}

func TestRollbackDropsRolledBackCoinbase(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 5)
	mustApply(t, w, chain.add().filtered())
	cb := f.coinbase(6)
	cb.TxOut[0].PkScript = keys.p2wpkh(extBranch, 0)
	mustApply(t, w, chain.addBlockWithCoinbase(cb).filtered(0))
	require.NotZero(t, mustBalance(t, w).Immature)
	mustRollback(t, w, 5)
	require.Equal(t, Balance{}, mustBalance(t, w))
	require.Empty(t, txids(t, w), "a coinbase of a removed block does not survive as unconfirmed")
}
