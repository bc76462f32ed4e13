package wallet

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestBlockAmountsEqualDetails checks the net amounts ApplyBlock reports
// without reading a transaction back from wtxmgr (a new transaction that
// spends no wallet output) against the history wtxmgr keeps, beside the
// cases that still read it back: a spend of a confirmed output, a spend
// of an output of the same block, a pending transaction confirming, and
// a transaction paying two watched outputs. Holdings returns what
// Balance, Txs and UTXOs return.
func TestBlockAmountsEqualDetails(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 100)
	amounts := make(map[chainhash.Hash]int64)
	apply := func(fb *fullBlock) {
		t.Helper()
		res := mustApply(t, w, fb.filtered())
		for h, n := range res.Amounts {
			amounts[h] = n
		}
	}

	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000}, output{foreignScript(1), 5_000})
	two := f.tx(nil, output{keys.p2wpkh(extBranch, 1), 20_000}, output{keys.p2wpkh(extBranch, 2), 30_000})
	apply(chain.add(fund, two))

	// A spend of a confirmed output, and in the same block a payment
	// and a spend of that payment's output.
	spend := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(3), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	pay := f.tx(nil, output{keys.p2wpkh(extBranch, 3), 7_000})
	payOn := f.tx([]wire.OutPoint{op(pay, 0)}, output{foreignScript(4), 6_500})
	apply(chain.add(spend, pay, payOn))

	// A pending payment that confirms.
	pending := f.tx(nil, output{keys.p2wpkh(extBranch, 4), 11_000})
	mres, err := w.ApplyMempoolTx(pending)
	require.NoError(t, err)
	require.True(t, mres.Relevant)
	apply(chain.add(pending))

	require.Equal(t, map[chainhash.Hash]int64{
		fund.TxHash():    100_000,
		two.TxHash():     50_000,
		spend.TxHash():   -61_000,
		pay.TxHash():     7_000,
		payOn.TxHash():   -7_000,
		pending.TxHash(): 11_000,
	}, amounts)
	txs, err := w.Txs()
	require.NoError(t, err)
	require.Len(t, txs, len(amounts))
	for _, tx := range txs {
		require.Equal(t, amounts[tx.Txid], tx.Delta, "tx %v", tx.Txid)
	}

	h, err := w.Holdings()
	require.NoError(t, err)
	require.Equal(t, txs, h.Txs)
	require.Equal(t, mustBalance(t, w), h.Balance)
	utxos, err := w.UTXOs()
	require.NoError(t, err)
	require.Equal(t, utxos, h.UTXOs)
	require.Len(t, utxos, 4)
}

// TestHoldingsEmpty checks that an empty wallet's Holdings has the nil
// slices Txs and UTXOs return.
func TestHoldingsEmpty(t *testing.T) {
	w, _ := newRegtestWallet(t)
	h, err := w.Holdings()
	require.NoError(t, err)
	require.Nil(t, h.Txs)
	require.Nil(t, h.UTXOs)
	require.Equal(t, Balance{}, h.Balance)
}

// BenchmarkSummaryReads reads what the sync summary shows of a synced
// bench-like wallet (3,000 transactions, see firstSyncChain): Holdings in
// one read, and Balance, Txs and UTXOs in three as the summary did.
func BenchmarkSummaryReads(b *testing.B) {
	addresses, fbs := firstSyncChain(b)
	w, err := Create(b.TempDir(), CreateConfig{Network: "regtest", Addresses: addresses}, WithBatch(500, 0))
	require.NoError(b, err)
	b.Cleanup(func() { _ = w.Close() })
	for _, fb := range fbs {
		if _, err := w.ApplyBlock(fb); err != nil {
			require.NoError(b, err)
		}
	}
	require.NoError(b, w.Flush())
	b.Run("holdings", func(b *testing.B) {
		for range b.N {
			if _, err := w.Holdings(); err != nil {
				require.NoError(b, err)
			}
		}
	})
	b.Run("three", func(b *testing.B) {
		for range b.N {
			if _, err := w.Balance(); err != nil {
				require.NoError(b, err)
			}
			if _, err := w.Txs(); err != nil {
				require.NoError(b, err)
			}
			if _, err := w.UTXOs(); err != nil {
				require.NoError(b, err)
			}
		}
	})
}
