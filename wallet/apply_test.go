package wallet

import (
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

const (
	extBranch = 0
	intBranch = 1
)

// scriptAddress encodes a regtest output script as its address.
func scriptAddress(t testing.TB, script []byte) string {
	t.Helper()
	_, addrs, _, err := txscript.ExtractPkScriptAddrs(script, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	require.Len(t, addrs, 1)
	return addrs[0].EncodeAddress()
}

func op(tx *wire.MsgTx, i uint32) wire.OutPoint { return wire.OutPoint{Hash: tx.TxHash(), Index: i} }

func TestReceiveThenSpendWithChange(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 100)

	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000}, output{foreignScript(1), 5_000})
	fp := f.tx(nil, output{foreignScript(2), 7_000})
	b100 := chain.add(fund, fp)
	res := mustApply(t, w, b100.filtered())
	require.Equal(t, []chainhash.Hash{fund.TxHash()}, res.Relevant)
	require.Equal(t, []chainhash.Hash{fp.TxHash()}, res.FalsePositives)
	require.Equal(t, map[chainhash.Hash]int64{fund.TxHash(): 100_000}, res.Amounts)
	require.NotEmpty(t, res.Delta.Data, "index 0 used: the address past the gap is derived")
	require.Equal(t, []wire.OutPoint{op(fund, 0)}, res.Delta.OutPoints, "fund:0 is watched")
	require.Equal(t, Balance{Confirmed: 100_000}, mustBalance(t, w))

	spend := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(3), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	b101 := chain.add(spend)
	res = mustApply(t, w, b101.filtered())
	require.Equal(t, []chainhash.Hash{spend.TxHash()}, res.Relevant)
	require.Empty(t, res.FalsePositives)
	require.Equal(t, int64(-61_000), res.Amounts[spend.TxHash()])
	require.Equal(t, Balance{Confirmed: 39_000}, mustBalance(t, w))

	sp, err := w.SyncedTo()
	require.NoError(t, err)
	require.Equal(t, watch.SyncPoint{Height: 101, Hash: b101.header.BlockHash()}, sp)

	utxos, err := w.UTXOs()
	require.NoError(t, err)
	require.Len(t, utxos, 1)
	change := keys.p2wpkh(intBranch, 0)
	require.Equal(t, UTXO{
		Txid: spend.TxHash(), Index: 1, Amount: 39_000, Height: 101, Confirmations: 1,
		Address: scriptAddress(t, change), Script: hex.EncodeToString(change),
	}, utxos[0])

	txs, err := w.Txs()
	require.NoError(t, err)
	require.Len(t, txs, 2)
	require.Equal(t, fund.TxHash(), txs[0].Txid)
	require.Equal(t, int64(100_000), txs[0].Delta)
	require.Equal(t, int32(100), txs[0].Height)
	require.Equal(t, int32(2), txs[0].Confirmations)
	require.Equal(t, b100.header.Timestamp.Unix(), txs[0].Time.Unix())
	require.Equal(t, spend.TxHash(), txs[1].Txid)
	require.Equal(t, int64(-61_000), txs[1].Delta)
	require.Equal(t, int32(1), txs[1].Confirmations)
	require.Equal(t, int32(11), txs[1].ConfirmationsAt(111))

	addrs, err := w.Addresses()
	require.NoError(t, err)
	used := map[[2]uint32]bool{}
	counts := map[uint32]int{}
	for _, a := range addrs {
		counts[a.Branch]++
		if a.Used {
			used[[2]uint32{a.Branch, a.Index}] = true
		}
	}
	require.Equal(t, map[[2]uint32]bool{{extBranch, 0}: true, {intBranch, 0}: true}, used)
	// Using index 0 of a branch (no reserve) derives through index gap.
	require.Equal(t, map[uint32]int{extBranch: DefaultGapExternal + 1, intBranch: DefaultGapInternal + 1}, counts)

	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, int64(2), st.BlocksApplied)
	require.Equal(t, uint64(3), st.Matched)
	require.Equal(t, uint64(2), st.Relevant)
	require.Equal(t, uint64(1), st.FalsePositives)
	require.Equal(t, 1, st.OutPoints)

	fps, err := w.FalsePositives(0)
	require.NoError(t, err)
	require.Equal(t, []FalsePositive{{Txid: fp.TxHash(), Height: 100}}, fps)
	matches, err := w.BlockMatches(100)
	require.NoError(t, err)
	require.Equal(t, []Match{
		{Txid: fund.TxHash(), Position: 1},
		{Txid: fp.TxHash(), Position: 2, FalsePositive: true},
	}, matches)
}

func TestGapLimitWithinOneBlock(t *testing.T) {
	const r = DefaultReserve
	tests := []struct {
		name string
		// reserve is the lookahead reserve (0: the gap rule alone)
		reserve uint32
		// indexes paid, in block order, on the receive branch
		paid []uint32
		// relevant says which of them the wallet must recognise
		relevant []bool
		// watched is the number of receive addresses afterwards
		watched int
	}{
		{"later tx pays a just-derived address", 0, []uint32{19, 39}, []bool{true, true}, 60},
		{"earlier tx pays an address a later one derives", 0, []uint32{25, 5}, []bool{true, true}, 46},
		// 15 derives through 35, 35 through 55, 55 through 75.
		{"chain of extensions", 0, []uint32{55, 35, 15}, []bool{true, true, true}, 55 + 20 + 1},
		{"beyond the gap stays foreign", 0, []uint32{20}, []bool{false}, 20},
		{"within the gap of the last use", 0, []uint32{3, 23}, []bool{true, true}, 23 + 20 + 1},
		{"beyond the gap of the last use", 0, []uint32{3, 24}, []bool{true, false}, 24},
		// With a reserve the addresses beyond the gap are watched too
		// (a payment to one is found, and the gap moves). Creation
		// derives gap + r. A payment keeps at least r derived beyond
		// its gap (more with the branch's pace: 25 addresses in a
		// block count as 25 per 100 blocks), so watched is a lower
		// bound there.
		{"reserve: beyond the gap, inside the reserve", r, []uint32{3, 24}, []bool{true, true}, -(45 + r)},
		{"reserve: beyond the gap and the reserve", r, []uint32{20 + r}, []bool{false}, 20 + r},
		{"reserve: a chain through the reserve", r, []uint32{110, 3}, []bool{true, true}, -(131 + r)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, keys := newRegtestWallet(t, WithReserve(tc.reserve))
			f := &txFactory{}
			chain := newTestChain(f, 10)
			var txs []*wire.MsgTx
			var want int64
			for i, idx := range tc.paid {
				value := int64(1000 * (idx + 1))
				txs = append(txs, f.tx(nil, output{keys.p2wpkh(extBranch, idx), value}))
				if tc.relevant[i] {
					want += value
				}
			}
			res := mustApply(t, w, chain.add(txs...).filtered())
			for i, tx := range txs {
				if tc.relevant[i] {
					require.Contains(t, res.Relevant, tx.TxHash(), "payment to index %d", tc.paid[i])
				} else {
					require.Contains(t, res.FalsePositives, tx.TxHash(), "payment to index %d", tc.paid[i])
				}
			}
			require.Equal(t, Balance{Confirmed: btcutil.Amount(want)}, mustBalance(t, w))
			addrs, err := w.Addresses()
			require.NoError(t, err)
			n := 0
			for _, a := range addrs {
				if a.Branch == extBranch {
					n++
				}
			}
			if tc.watched < 0 {
				require.GreaterOrEqual(t, n, -tc.watched)
				return
			}
			require.Equal(t, tc.watched, n)
		})
	}
}

func TestReapplyAddsOnlyWhatIsNew(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 200)
	a := f.tx(nil, output{keys.p2wpkh(extBranch, 10), 10_000}) // makes 11..30 watched
	fp1 := f.tx(nil, output{foreignScript(1), 1})
	x := f.tx(nil, output{keys.p2wpkh(extBranch, 25), 25_000}) // not watched before a
	fp2 := f.tx(nil, output{foreignScript(2), 2})
	b := chain.add(a, fp1, x, fp2)

	// First pass: the old filter matched a, and fp1 by chance.
	res := mustApply(t, w, b.filtered(1, 2))
	require.Equal(t, []chainhash.Hash{a.TxHash()}, res.Relevant)
	require.Equal(t, []chainhash.Hash{fp1.TxHash()}, res.FalsePositives)
	require.False(t, res.Delta.Empty())

	// Second pass with the new filter: x now, and another false positive.
	res = mustApply(t, w, b.filtered(1, 3, 4))
	require.Equal(t, []chainhash.Hash{x.TxHash()}, res.Relevant)
	require.Equal(t, []chainhash.Hash{fp2.TxHash()}, res.FalsePositives)
	require.Equal(t, map[chainhash.Hash]int64{x.TxHash(): 25_000}, res.Amounts)

	// Third pass, identical: nothing new.
	res = mustApply(t, w, b.filtered(1, 2, 3, 4))
	require.Empty(t, res.Relevant)
	require.Empty(t, res.FalsePositives)
	require.True(t, res.Delta.Empty())

	require.Equal(t, Balance{Confirmed: 35_000}, mustBalance(t, w))
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(2), st.Relevant)
	require.Equal(t, uint64(2), st.FalsePositives)
	require.Equal(t, int64(1), st.BlocksApplied)
	txs, err := w.Txs()
	require.NoError(t, err)
	require.Len(t, txs, 2)
}

func TestReapplyTurnsFalsePositiveIntoRelevant(t *testing.T) {
	// A peer that first sends only x (paying index 25, not yet watched)
	// and, after the reload, also a (paying index 10): x was a false
	// positive, and is the wallet's once a has derived index 25.
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 200)
	x := f.tx(nil, output{keys.p2wpkh(extBranch, 25), 25_000})
	a := f.tx(nil, output{keys.p2wpkh(extBranch, 10), 10_000})
	b := chain.add(x, a)

	res := mustApply(t, w, b.filtered(1))
	require.Equal(t, []chainhash.Hash{x.TxHash()}, res.FalsePositives)
	res = mustApply(t, w, b.filtered(1, 2))
	require.ElementsMatch(t, []chainhash.Hash{x.TxHash(), a.TxHash()}, res.Relevant)
	require.Empty(t, res.FalsePositives)

	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(2), st.Relevant)
	require.Equal(t, uint64(0), st.FalsePositives)
	fps, err := w.FalsePositives(0)
	require.NoError(t, err)
	require.Empty(t, fps)
	require.Equal(t, Balance{Confirmed: 35_000}, mustBalance(t, w))
}

func TestReapplyStoresSpendsAfterTheirOutputs(t *testing.T) {
	// x pays index 30 (unwatched) and y, later in the block, spends x:0
	// and pays index 15. The first filter matches y only; once y made
	// index 30 watched, x arrives: wtxmgr must see y's spend of x:0, or
	// x:0 would count as unspent.
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 300)
	x := f.tx(nil, output{keys.p2wpkh(extBranch, 30), 1_000})
	y := f.tx([]wire.OutPoint{op(x, 0)}, output{keys.p2wpkh(extBranch, 15), 400}, output{foreignScript(1), 500})
	b := chain.add(x, y)

	res := mustApply(t, w, b.filtered(2))
	require.Equal(t, []chainhash.Hash{y.TxHash()}, res.Relevant)
	require.Equal(t, Balance{Confirmed: 400}, mustBalance(t, w))

	res = mustApply(t, w, b.filtered(1, 2))
	require.Equal(t, []chainhash.Hash{x.TxHash()}, res.Relevant)
	require.Equal(t, int64(1_000), res.Amounts[x.TxHash()])
	require.Equal(t, Balance{Confirmed: 400}, mustBalance(t, w))
	utxos, err := w.UTXOs()
	require.NoError(t, err)
	require.Len(t, utxos, 1)
	require.Equal(t, y.TxHash(), utxos[0].Txid)
	txs, err := w.Txs()
	require.NoError(t, err)
	deltas := map[chainhash.Hash]int64{}
	for _, s := range txs {
		deltas[s.Txid] = s.Delta
	}
	require.Equal(t, map[chainhash.Hash]int64{x.TxHash(): 1_000, y.TxHash(): -600}, deltas)
}

func TestApplyBlockRejectsBadBlocks(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 50)
	good := chain.add(f.tx(nil, output{keys.p2wpkh(extBranch, 0), 1_000}))
	mustApply(t, w, good.filtered())
	next := chain.add(f.tx(nil, output{keys.p2wpkh(extBranch, 1), 2_000}), f.tx(nil, output{foreignScript(1), 1}))

	mutate := func(m func(fb *watch.FilteredBlock)) *watch.FilteredBlock {
		fb := next.filtered()
		m(fb)
		return fb
	}
	other := newTestChain(&txFactory{n: 999}, 51).add()
	tests := []struct {
		name    string
		block   *watch.FilteredBlock
		wantErr error
	}{
		{"nil", nil, ErrBadBlock},
		{"negative height", mutate(func(fb *watch.FilteredBlock) { fb.Height = -5 }), ErrBadBlock},
		{"hash not of header", mutate(func(fb *watch.FilteredBlock) { fb.Hash[0] ^= 1 }), ErrBadBlock},
		{"indexes missing", mutate(func(fb *watch.FilteredBlock) { fb.TxIndexes = fb.TxIndexes[:1] }), ErrBadBlock},
		{"index out of range", mutate(func(fb *watch.FilteredBlock) { fb.TxIndexes[1] = fb.TotalTxs }), ErrBadBlock},
		{"indexes not increasing", mutate(func(fb *watch.FilteredBlock) { fb.TxIndexes[0], fb.TxIndexes[1] = 2, 1 }), ErrBadBlock},
		{"nil transaction", mutate(func(fb *watch.FilteredBlock) { fb.Txs[0] = nil }), ErrBadBlock},
		{"skips a height", mutate(func(fb *watch.FilteredBlock) {
			fb.Height = 53
		}), ErrNotNext},
		{"other parent", other.filtered(), ErrNotNext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.ApplyBlock(tc.block)
			require.ErrorIs(t, err, tc.wantErr)
			sp, err := w.SyncedTo()
			require.NoError(t, err)
			require.Equal(t, int32(50), sp.Height)
			require.Equal(t, Balance{Confirmed: 1_000}, mustBalance(t, w))
		})
	}
	mustApply(t, w, next.filtered())
	require.Equal(t, Balance{Confirmed: 3_000}, mustBalance(t, w))
}

func TestCoinbaseMaturity(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 1)
	cb := f.coinbase(1)
	cb.TxOut[0].PkScript = keys.p2wpkh(extBranch, 0) // mined to the wallet
	mustApply(t, w, chain.addBlockWithCoinbase(cb).filtered(0))
	const subsidy = 50 * btcutil.SatoshiPerBitcoin
	require.Equal(t, Balance{Immature: subsidy}, mustBalance(t, w))
	maturity := int32(w.net.params.CoinbaseMaturity)
	for h := int32(2); h < maturity; h++ {
		mustApply(t, w, chain.add().filtered())
	}
	require.Equal(t, Balance{Immature: subsidy}, mustBalance(t, w), "99 confirmations")
	mustApply(t, w, chain.add().filtered())
	require.Equal(t, Balance{Confirmed: subsidy}, mustBalance(t, w), "100 confirmations")
}
