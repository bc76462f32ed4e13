package wallet

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

// fixedClock is a test clock.
func fixedClock() func() time.Time {
	t0 := time.Unix(1_800_000_000, 0)
	return func() time.Time { return t0 }
}

func txids(t testing.TB, w *Wallet) map[chainhash.Hash]int32 {
	t.Helper()
	txs, err := w.Txs()
	require.NoError(t, err)
	out := make(map[chainhash.Hash]int32, len(txs))
	for _, s := range txs {
		out[s.Txid] = s.Height
	}
	return out
}

func TestMempoolTxThenConfirmation(t *testing.T) {
	w, keys := newRegtestWallet(t, WithClock(fixedClock()))
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	mustApply(t, w, chain.add(fund).filtered())

	spend := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(1), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	res, err := w.ApplyMempoolTx(spend)
	require.NoError(t, err)
	require.True(t, res.Relevant)
	require.Equal(t, int64(-61_000), res.Amount)
	require.Equal(t, []wire.OutPoint{op(spend, 1)}, res.Delta.OutPoints, "the change output is watched")
	require.NotEmpty(t, res.Delta.Data, "the change branch grows past the gap")
	bal := mustBalance(t, w)
	require.Equal(t, Balance{Confirmed: 100_000, Unconfirmed: 39_000, PendingSpent: 100_000}, bal,
		"the pending spend shows beside the confirmed balance, never in it")
	require.Equal(t, btcutil.Amount(39_000), bal.Total())
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, spend.TxHash(): -1}, txids(t, w))
	el, err := w.FilterElements()
	require.NoError(t, err)
	require.ElementsMatch(t, []wire.OutPoint{op(fund, 0), op(spend, 1)}, el.OutPoints,
		"an output spent by an unconfirmed tx stays watched until the spend confirms")

	// Offered again: reported, not stored or counted twice.
	res, err = w.ApplyMempoolTx(spend)
	require.NoError(t, err)
	require.Equal(t, watch.MempoolResult{Relevant: true, Amount: -61_000}, res)

	fp := f.tx(nil, output{foreignScript(2), 5})
	for range 2 {
		res, err = w.ApplyMempoolTx(fp)
		require.NoError(t, err)
		require.Equal(t, watch.MempoolResult{}, res)
	}
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(1), st.MempoolRelevant)
	require.Equal(t, uint64(1), st.MempoolFalsePositives)
	require.Equal(t, uint64(2), st.MempoolMatched)
	fps, err := w.FalsePositives(0)
	require.NoError(t, err)
	require.Equal(t, []FalsePositive{{Txid: fp.TxHash(), Height: -1}}, fps)

	b := chain.add(spend)
	blk := mustApply(t, w, b.filtered())
	require.Equal(t, []chainhash.Hash{spend.TxHash()}, blk.Relevant)
	require.Equal(t, Balance{Confirmed: 39_000}, mustBalance(t, w))
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, spend.TxHash(): 101}, txids(t, w))
	el, err = w.FilterElements()
	require.NoError(t, err)
	require.Equal(t, []wire.OutPoint{op(spend, 1)}, el.OutPoints)
}

func TestConfirmedConflictEvictsUnconfirmed(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	mustApply(t, w, chain.add(fund).filtered())

	pending := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(1), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	_, err := w.ApplyMempoolTx(pending)
	require.NoError(t, err)
	child := f.tx([]wire.OutPoint{op(pending, 1)}, output{keys.p2wpkh(extBranch, 1), 38_000})
	_, err = w.ApplyMempoolTx(child)
	require.NoError(t, err)
	require.Equal(t, Balance{Confirmed: 100_000, Unconfirmed: 38_000, PendingSpent: 100_000}, mustBalance(t, w))

	// Another spend of fund:0 confirms: it pays nothing to the wallet's
	// scripts, so only the watched outpoint makes it the wallet's.
	conflict := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(2), 99_000})
	res := mustApply(t, w, chain.add(conflict).filtered())
	require.Equal(t, []chainhash.Hash{conflict.TxHash()}, res.Relevant)
	require.Equal(t, int64(-100_000), res.Amounts[conflict.TxHash()])
	require.Equal(t, Balance{}, mustBalance(t, w))
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, conflict.TxHash(): 101}, txids(t, w),
		"the unconfirmed spend and its child are evicted")
	utxos, err := w.UTXOs()
	require.NoError(t, err)
	require.Empty(t, utxos)
	el, err := w.FilterElements()
	require.NoError(t, err)
	require.Empty(t, el.OutPoints)
}

// TestMempoolConflictKeepsBoth checks that a relayed transaction spending
// the coin a pending wallet transaction spends (a fee bump, or a peer's
// fabrication: the wallet cannot tell) evicts nothing: both stay pending,
// flagged as conflicting, counted in the worst case, until a block
// confirms one.
func TestMempoolConflictKeepsBoth(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	mustApply(t, w, chain.add(fund).filtered())

	original := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(1), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	_, err := w.ApplyMempoolTx(original)
	require.NoError(t, err)
	bumped := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(1), 60_000}, output{keys.p2wpkh(intBranch, 0), 38_000})
	res, err := w.ApplyMempoolTx(bumped)
	require.NoError(t, err)
	require.Equal(t, int64(-62_000), res.Amount)
	require.Equal(t, []wire.OutPoint{op(bumped, 1)}, res.Delta.OutPoints)
	require.Empty(t, res.Delta.Spent, "nothing was evicted")
	bal := mustBalance(t, w)
	require.Equal(t, Balance{Confirmed: 100_000, PendingSpent: 100_000, Conflicts: 2}, bal,
		"worst case: the conflicting change outputs are not counted as incoming")
	require.Equal(t, btcutil.Amount(0), bal.Total())
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, original.TxHash(): -1, bumped.TxHash(): -1}, txids(t, w))
	txs, err := w.Txs()
	require.NoError(t, err)
	for _, s := range txs {
		switch s.Txid {
		case original.TxHash():
			require.Equal(t, []chainhash.Hash{bumped.TxHash()}, s.Conflicts)
			require.True(t, s.Conflicted)
		case bumped.TxHash():
			require.Equal(t, []chainhash.Hash{original.TxHash()}, s.Conflicts)
			require.True(t, s.Conflicted)
		default:
			require.Empty(t, s.Conflicts)
			require.False(t, s.Conflicted)
		}
	}

	// The block confirming the bump evicts the original.
	res2 := mustApply(t, w, chain.add(bumped).filtered())
	require.Equal(t, []chainhash.Hash{bumped.TxHash()}, res2.Relevant)
	require.ElementsMatch(t, []wire.OutPoint{op(fund, 0), op(original, 1)}, res2.Delta.Spent)
	require.Equal(t, Balance{Confirmed: 38_000}, mustBalance(t, w))
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, bumped.TxHash(): 101}, txids(t, w))
}

func TestMempoolFalsePositiveBecomesRelevant(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	late := f.tx(nil, output{keys.p2wpkh(extBranch, 30), 3_000})
	res, err := w.ApplyMempoolTx(late)
	require.NoError(t, err)
	require.False(t, res.Relevant)

	mustApply(t, w, chain.add(f.tx(nil, output{keys.p2wpkh(extBranch, 12), 1_000})).filtered())
	res, err = w.ApplyMempoolTx(late)
	require.NoError(t, err)
	require.True(t, res.Relevant)
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(0), st.MempoolFalsePositives)
	require.Equal(t, uint64(1), st.MempoolRelevant)
	require.Equal(t, Balance{Confirmed: 1_000, Unconfirmed: 3_000}, mustBalance(t, w))
}

func TestApplyMempoolTxRejectsEmpty(t *testing.T) {
	w, _ := newRegtestWallet(t)
	_, err := w.ApplyMempoolTx(nil)
	require.ErrorIs(t, err, ErrBadTx)
	_, err = w.ApplyMempoolTx(wire.NewMsgTx(wire.TxVersion))
	require.ErrorIs(t, err, ErrBadTx)
}

// TestInvisibleDoubleSpendEvictsPendingPayment checks that an incoming
// payment still unconfirmed (the payer's inputs are not the wallet's)
// puts those inputs into the filter as guards, and that a confirmed
// transaction spending one of them, paying nothing to the wallet, evicts
// the payment without becoming the wallet's.
func TestInvisibleDoubleSpendEvictsPendingPayment(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	mustApply(t, w, chain.add().filtered())

	payerCoin := f.external()
	payment := f.tx([]wire.OutPoint{payerCoin}, output{keys.p2wpkh(extBranch, 0), 50_000}, output{foreignScript(1), 40_000})
	_, err := w.ApplyMempoolTx(payment)
	require.NoError(t, err)
	require.Equal(t, Balance{Unconfirmed: 50_000}, mustBalance(t, w))
	el, err := w.FilterElements()
	require.NoError(t, err)
	require.Contains(t, el.OutPoints, payerCoin, "the payer's input guards the pending payment")

	doubleSpend := f.tx([]wire.OutPoint{payerCoin}, output{foreignScript(2), 89_000})
	res := mustApply(t, w, chain.add(doubleSpend).filtered())
	require.Empty(t, res.Relevant, "the double spend is not the wallet's")
	require.ElementsMatch(t, []wire.OutPoint{payerCoin, op(payment, 0)}, res.Delta.Spent, "the guard and the payment's outpoint leave the filter")
	require.Equal(t, Balance{}, mustBalance(t, w))
	require.NotContains(t, txids(t, w), payment.TxHash())
	el, err = w.FilterElements()
	require.NoError(t, err)
	require.Empty(t, el.OutPoints)
}
