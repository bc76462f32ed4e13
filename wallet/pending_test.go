package wallet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/stretchr/testify/require"
)

// testClock is a wallet clock a test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Unix(1_800_000_000, 0)} }

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// mustMempool applies an unconfirmed transaction and fails the test on
// error.
func mustMempool(t testing.TB, w *Wallet, tx *wire.MsgTx) (relevant bool, amount int64, delta []wire.OutPoint, spent []wire.OutPoint) {
	t.Helper()
	res, err := w.ApplyMempoolTx(tx)
	require.NoError(t, err)
	return res.Relevant, res.Amount, res.Delta.OutPoints, res.Delta.Spent
}

// utxoByOutpoint indexes the wallet's UTXOs.
func utxoByOutpoint(t testing.TB, w *Wallet) map[wire.OutPoint]UTXO {
	t.Helper()
	us, err := w.UTXOs()
	require.NoError(t, err)
	out := make(map[wire.OutPoint]UTXO, len(us))
	for _, u := range us {
		out[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = u
	}
	return out
}

// TestFakeSpendKeepsConfirmedBalance: a peer relays a spend of a confirmed
// wallet coin that will never confirm. The wallet cannot tell, so it keeps
// the spend pending, but the confirmed balance does not move, the coin
// stays listed (flagged) and watched, and nothing is evicted.
func TestFakeSpendKeepsConfirmedBalance(t *testing.T) {
	w, keys := newRegtestWallet(t, WithClock(newTestClock().now))
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fundA := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	fundB := f.tx(nil, output{keys.p2wpkh(extBranch, 1), 20_000})
	mustApply(t, w, chain.add(fundA, fundB).filtered())
	incoming := f.tx(nil, output{keys.p2wpkh(extBranch, 2), 5_000})
	relevant, _, _, _ := mustMempool(t, w, incoming)
	require.True(t, relevant)
	dt := newDeltaTracker(t, w)
	before := mustBalance(t, w)
	require.Equal(t, Balance{Confirmed: 120_000, Unconfirmed: 5_000}, before)

	fake := f.tx([]wire.OutPoint{op(fundA, 0)}, output{foreignScript(66), 99_000})
	res, err := w.ApplyMempoolTx(fake)
	require.NoError(t, err)
	require.True(t, res.Relevant, "a spend of a wallet coin is the wallet's, true or not")
	require.Equal(t, int64(-100_000), res.Amount)
	require.Empty(t, res.Delta.Spent, "nothing leaves the filter: the coin is unspent on chain")
	dt.apply(res.Delta)
	dt.check()

	bal := mustBalance(t, w)
	require.Equal(t, before.Confirmed, bal.Confirmed, "an unconfirmed spend never lowers the confirmed balance")
	require.Equal(t, Balance{Confirmed: 120_000, Unconfirmed: 5_000, PendingSpent: 100_000}, bal)
	require.Equal(t, btcutil.Amount(25_000), bal.Total(), "worst case: the spend confirms")
	require.Equal(t, map[chainhash.Hash]int32{
		fundA.TxHash(): 100, fundB.TxHash(): 100, incoming.TxHash(): -1, fake.TxHash(): -1,
	}, txids(t, w), "the genuine pending payment stays")

	utxos := utxoByOutpoint(t, w)
	require.Len(t, utxos, 3, "the coin the fake spends stays listed")
	a := utxos[op(fundA, 0)]
	require.True(t, a.PendingSpend)
	require.Equal(t, []chainhash.Hash{fake.TxHash()}, a.SpentBy)
	require.Equal(t, int32(100), a.Height)
	require.False(t, utxos[op(fundB, 0)].PendingSpend)
	require.False(t, utxos[op(incoming, 0)].PendingSpend)
	require.Equal(t, int32(-1), utxos[op(incoming, 0)].Height)

	raw, err := json.Marshal(a)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(raw, &fields))
	require.Equal(t, true, fields["pending_spend"])
	require.Equal(t, []any{fake.TxHash().String()}, fields["spent_by"])
	raw, err = json.Marshal(bal)
	require.NoError(t, err)
	require.JSONEq(t, `{"confirmed_sat":120000,"unconfirmed_sat":5000,"immature_sat":0,"pending_spent_sat":100000,"conflicts":0}`, string(raw))

	// A spend of a wallet coin that a block already spent can never
	// confirm: dropped, even though it pays the wallet.
	spend := f.tx([]wire.OutPoint{op(fundB, 0)}, output{foreignScript(67), 19_000})
	mustApply(t, w, chain.add(spend).filtered())
	replay := f.tx([]wire.OutPoint{op(fundB, 0)}, output{keys.p2wpkh(extBranch, 3), 19_500})
	res, err = w.ApplyMempoolTx(replay)
	require.NoError(t, err)
	require.False(t, res.Relevant)
	require.NotContains(t, txids(t, w), replay.TxHash())
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, uint64(0), st.MempoolFalsePositives, "not counted as a false positive either")
}

// TestPendingPaymentSurvivesConflictingFake: a genuine pending
// transaction and a conflicting one from another peer both stay pending
// (the worst case counted), and the block that confirms either evicts the
// other, its outputs and guards leaving the filter.
func TestPendingPaymentSurvivesConflictingFake(t *testing.T) {
	type setup struct {
		genuine, fake *wire.MsgTx
		// want balances: while both are pending, after the genuine
		// one confirms, after the fake one confirms.
		pending, genuineWins, fakeWins Balance
	}
	for _, tc := range []struct {
		name  string
		build func(f *txFactory, keys *testKeys, fund *wire.MsgTx) setup
	}{
		{"outgoing spend", func(f *txFactory, keys *testKeys, fund *wire.MsgTx) setup {
			return setup{
				genuine:     f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(1), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000}),
				fake:        f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(66), 99_500}),
				pending:     Balance{Confirmed: 100_000, PendingSpent: 100_000, Conflicts: 2},
				genuineWins: Balance{Confirmed: 39_000},
				fakeWins:    Balance{},
			}
		}},
		{"incoming payment", func(f *txFactory, keys *testKeys, fund *wire.MsgTx) setup {
			payer := f.external()
			return setup{
				genuine: f.tx([]wire.OutPoint{payer}, output{keys.p2wpkh(extBranch, 1), 50_000}, output{foreignScript(2), 40_000}),
				// The same coin of the payer, redirected: the wallet
				// gets 1,000 instead of 50,000.
				fake:        f.tx([]wire.OutPoint{payer}, output{keys.p2wpkh(extBranch, 1), 1_000}, output{foreignScript(66), 89_000}),
				pending:     Balance{Confirmed: 100_000, Conflicts: 2},
				genuineWins: Balance{Confirmed: 150_000},
				fakeWins:    Balance{Confirmed: 101_000},
			}
		}},
	} {
		for _, genuineWins := range []bool{true, false} {
			name := tc.name + "/genuine confirms"
			if !genuineWins {
				name = tc.name + "/fake confirms"
			}
			t.Run(name, func(t *testing.T) {
				w, keys := newRegtestWallet(t, WithClock(newTestClock().now))
				f := &txFactory{}
				chain := newTestChain(f, 100)
				fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
				mustApply(t, w, chain.add(fund).filtered())
				s := tc.build(f, keys, fund)
				dt := newDeltaTracker(t, w)

				res, err := w.ApplyMempoolTx(s.genuine)
				require.NoError(t, err)
				require.True(t, res.Relevant)
				dt.apply(res.Delta)
				res, err = w.ApplyMempoolTx(s.fake)
				require.NoError(t, err)
				require.True(t, res.Relevant)
				require.Empty(t, res.Delta.Spent, "the fake evicts nothing")
				dt.apply(res.Delta)
				dt.check()
				require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, s.genuine.TxHash(): -1, s.fake.TxHash(): -1}, txids(t, w))
				require.Equal(t, s.pending, mustBalance(t, w))
				require.Equal(t, btcutil.Amount(100_000), mustBalance(t, w).Confirmed)

				winner, loser, want := s.genuine, s.fake, s.genuineWins
				if !genuineWins {
					winner, loser, want = s.fake, s.genuine, s.fakeWins
				}
				blk := mustApply(t, w, chain.add(winner).filtered())
				require.Equal(t, []chainhash.Hash{winner.TxHash()}, blk.Relevant)
				dt.apply(blk.Delta)
				dt.check()
				require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100, winner.TxHash(): 101}, txids(t, w))
				require.NotContains(t, txids(t, w), loser.TxHash())
				require.Equal(t, want, mustBalance(t, w))
				els, err := w.FilterElements()
				require.NoError(t, err)
				for i := range loser.TxOut {
					require.NotContains(t, els.OutPoints, op(loser, uint32(i)), "the evicted transaction's outputs leave the filter")
				}
				for _, in := range loser.TxIn {
					require.NotContains(t, els.OutPoints, in.PreviousOutPoint, "spent on chain: no longer watched")
				}
				require.Empty(t, w.pending, "no pending-seen record left behind")
			})
		}
	}
}

// TestUnconfirmedExpiresDuringSync: unconfirmed wallet transactions that
// do not confirm within MempoolExpiry are removed at the next ApplyBlock
// or ApplyMempoolTx, with their descendants, and the delta takes their
// outputs and guards out of the filter.
func TestUnconfirmedExpiresDuringSync(t *testing.T) {
	clock := newTestClock()
	t0 := clock.now()
	w, keys := newRegtestWallet(t, WithClock(clock.now))
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	mustApply(t, w, chain.add(fund).filtered())
	dt := newDeltaTracker(t, w)

	payer := f.external()
	payment := f.tx([]wire.OutPoint{payer}, output{keys.p2wpkh(extBranch, 1), 50_000}, output{foreignScript(1), 40_000})
	spend := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(2), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	for _, tx := range []*wire.MsgTx{payment, spend} {
		res, err := w.ApplyMempoolTx(tx)
		require.NoError(t, err)
		dt.apply(res.Delta)
	}
	// A child of the spend, seen 200 hours later: it is not due itself
	// when its parent expires, and goes with it.
	clock.set(t0.Add(200 * time.Hour))
	child := f.tx([]wire.OutPoint{op(spend, 1)}, output{keys.p2wpkh(extBranch, 2), 38_000})
	res, err := w.ApplyMempoolTx(child)
	require.NoError(t, err)
	dt.apply(res.Delta)
	dt.check()
	require.Equal(t, Balance{Confirmed: 100_000, Unconfirmed: 88_000, PendingSpent: 100_000}, mustBalance(t, w))
	txs, err := w.Txs()
	require.NoError(t, err)
	for _, s := range txs {
		if s.Txid == child.TxHash() {
			require.Equal(t, t0.Add(200*time.Hour), s.Time)
			require.Equal(t, t0.Add(200*time.Hour+MempoolExpiry), *s.Expires)
		}
		if s.Height >= 0 {
			require.Nil(t, s.Expires)
		}
	}

	// One hour short of the limit: a block removes nothing.
	clock.set(t0.Add(MempoolExpiry - time.Hour))
	blk := mustApply(t, w, chain.add().filtered())
	require.Empty(t, blk.Delta.Spent)
	require.Len(t, txids(t, w), 4)

	// At the limit the next block removes the payment and the spend,
	// and the child with the spend.
	clock.set(t0.Add(MempoolExpiry))
	blk = mustApply(t, w, chain.add().filtered())
	require.ElementsMatch(t, []wire.OutPoint{payer, op(payment, 0), op(spend, 1), op(child, 0)}, blk.Delta.Spent,
		"the payer's guard and every pending output leave the filter; the spent wallet coin stays")
	require.Empty(t, blk.Delta.OutPoints)
	dt.apply(blk.Delta)
	dt.check()
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100}, txids(t, w))
	require.Equal(t, Balance{Confirmed: 100_000}, mustBalance(t, w))
	require.False(t, utxoByOutpoint(t, w)[op(fund, 0)].PendingSpend)
	require.Empty(t, w.pending)

	// The same through ApplyMempoolTx: a new pending transaction
	// expires when the next one (here a false positive) arrives.
	late := f.tx(nil, output{keys.p2wpkh(extBranch, 3), 7_000})
	res, err = w.ApplyMempoolTx(late)
	require.NoError(t, err)
	dt.apply(res.Delta)
	clock.set(t0.Add(2*MempoolExpiry + time.Minute))
	res, err = w.ApplyMempoolTx(f.tx(nil, output{foreignScript(9), 1}))
	require.NoError(t, err)
	require.False(t, res.Relevant)
	require.ElementsMatch(t, []wire.OutPoint{op(late, 0), late.TxIn[0].PreviousOutPoint}, res.Delta.Spent)
	dt.apply(res.Delta)
	dt.check()
	require.NotContains(t, txids(t, w), late.TxHash())

	// Expired, then relayed again: it is pending again, from now.
	res, err = w.ApplyMempoolTx(late)
	require.NoError(t, err)
	require.True(t, res.Relevant)
	require.Equal(t, clock.now(), w.pending[late.TxHash()].seen)
}

// TestUnconfirmedExpiresAtRestart: a wallet reopened after MempoolExpiry
// no longer holds, shows or watches the transactions that expired while
// it was closed; one reopened before keeps them.
func TestUnconfirmedExpiresAtRestart(t *testing.T) {
	clock := newTestClock()
	t0 := clock.now()
	w, keys := newRegtestWallet(t, WithClock(clock.now))
	dir := w.Dir()
	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	mustApply(t, w, chain.add(fund).filtered())
	payer := f.external()
	payment := f.tx([]wire.OutPoint{payer}, output{keys.p2wpkh(extBranch, 1), 50_000})
	fake := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(66), 99_000})
	for _, tx := range []*wire.MsgTx{payment, fake} {
		_, err := w.ApplyMempoolTx(tx)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())

	reopen := func(at time.Time) *Wallet {
		t.Helper()
		clock.set(at)
		w, err := Open(dir, WithClock(clock.now))
		require.NoError(t, err)
		t.Cleanup(func() { _ = w.Close() })
		return w
	}
	w = reopen(t0.Add(335 * time.Hour))
	require.Len(t, txids(t, w), 3, "not expired yet")
	require.Equal(t, Balance{Confirmed: 100_000, Unconfirmed: 50_000, PendingSpent: 100_000}, mustBalance(t, w))
	require.NoError(t, w.Close())

	w = reopen(t0.Add(337 * time.Hour))
	require.Equal(t, map[chainhash.Hash]int32{fund.TxHash(): 100}, txids(t, w))
	require.Equal(t, Balance{Confirmed: 100_000}, mustBalance(t, w))
	els, err := w.FilterElements()
	require.NoError(t, err)
	require.ElementsMatch(t, []wire.OutPoint{op(fund, 0)}, els.OutPoints, "the guard and the payment's output are no longer watched")
	u := utxoByOutpoint(t, w)
	require.Len(t, u, 1)
	require.False(t, u[op(fund, 0)].PendingSpend)
	require.Empty(t, w.pending)
	require.NoError(t, w.Close())

	// The records were written: nothing left to do at the next open.
	w = reopen(t0.Add(400 * time.Hour))
	require.False(t, w.pendingDirty)
	err = walletdb.View(w.db, func(tx walletdb.ReadTx) error {
		n := 0
		err := tx.ReadBucket(ownNS).NestedReadBucket(bktPendingSeen).ForEach(func(_, _ []byte) error { n++; return nil })
		require.Zero(t, n)
		return err
	})
	require.NoError(t, err)
}

// TestRollbackRestartsExpiry: a transaction a reorg returns to the
// unconfirmed set counts its expiry from the reorg, not from its old
// block's time (which would expire it at once).
func TestRollbackRestartsExpiry(t *testing.T) {
	clock := newTestClock()
	w, keys := newRegtestWallet(t, WithClock(clock.now))
	f := &txFactory{}
	chain := newTestChain(f, 100)
	mustApply(t, w, chain.add().filtered())
	pay := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 7_000})
	mustApply(t, w, chain.add(pay).filtered())

	reorgAt := clock.now().Add(1000 * time.Hour)
	clock.set(reorgAt)
	mustRollback(t, w, 100)
	require.Equal(t, reorgAt, w.pending[pay.TxHash()].seen)
	require.Equal(t, Balance{Unconfirmed: 7_000}, mustBalance(t, w))

	clock.set(reorgAt.Add(MempoolExpiry - time.Minute))
	mustApply(t, w, chain.fork(100).add().filtered())
	require.Contains(t, txids(t, w), pay.TxHash())
	clock.set(reorgAt.Add(MempoolExpiry))
	_, err := w.ApplyMempoolTx(f.tx(nil, output{foreignScript(3), 1}))
	require.NoError(t, err)
	require.NotContains(t, txids(t, w), pay.TxHash())
}

// TestPendingRecordsOfOldWallet: a wallet written before the pending-seen
// records existed counts its unconfirmed transactions from the first open
// that writes them (never from an old receive time), and writes them.
func TestPendingRecordsOfOldWallet(t *testing.T) {
	clock := newTestClock()
	t0 := clock.now()
	w, keys := newRegtestWallet(t, WithClock(clock.now))
	dir := w.Dir()
	f := &txFactory{}
	pay := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 7_000})
	_, err := w.ApplyMempoolTx(pay)
	require.NoError(t, err)
	require.NoError(t, walletdb.Update(w.db, func(tx walletdb.ReadWriteTx) error {
		return tx.ReadWriteBucket(ownNS).DeleteNestedBucket(bktPendingSeen)
	}))
	require.NoError(t, w.Close())

	clock.set(t0.Add(1000 * time.Hour))
	w, err = Open(dir, WithClock(clock.now))
	require.NoError(t, err)
	require.Contains(t, txids(t, w), pay.TxHash(), "wtxmgr's receive time (1000 h ago) is not used")
	require.Equal(t, t0.Add(1000*time.Hour), w.pending[pay.TxHash()].seen)
	require.False(t, w.pendingDirty, "written at open")
	require.NoError(t, w.Close())

	clock.set(t0.Add(1000*time.Hour + MempoolExpiry))
	w, err = Open(dir, WithClock(clock.now))
	require.NoError(t, err)
	defer w.Close()
	require.NotContains(t, txids(t, w), pay.TxHash())
}

// TestPendingOutpointsRandomly drives a wallet through random mempool
// payments and spends (conflicting ones included), blocks confirming
// consistent subsets of them (and foreign double spends of their payers'
// coins), rollbacks and clock jumps past MempoolExpiry, and checks after
// every step that the outpoint set maintained incrementally equals a full
// read of wtxmgr and that the deltas rebuild the filter elements.
func TestPendingOutpointsRandomly(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x9e4d))
			clock := newTestClock()
			w, keys := newRegtestWallet(t, WithClock(clock.now), WithBatch(3, 0))
			f := &txFactory{n: uint32(seed) << 20}
			chain := newTestChain(f, 100)
			fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 500_000}, output{keys.p2wpkh(extBranch, 1), 300_000})
			mustApply(t, w, chain.add(fund).filtered())
			dt := newDeltaTracker(t, w)
			all := map[chainhash.Hash]*wire.MsgTx{fund.TxHash(): fund}
			spentOnChain := map[wire.OutPoint]bool{}
			confirmed := map[chainhash.Hash]bool{fund.TxHash(): true}
			nextInt := uint32(0)

			pendingTxs := func() []*wire.MsgTx {
				var out []*wire.MsgTx
				for h, height := range txids(t, w) {
					if height < 0 {
						out = append(out, all[h])
					}
				}
				slices.SortFunc(out, func(a, b *wire.MsgTx) int {
					ha, hb := a.TxHash(), b.TxHash()
					return bytes.Compare(ha[:], hb[:])
				})
				return out
			}
			for step := range 120 {
				switch k := r.IntN(10); {
				case k < 3: // an incoming payment
					tx := f.tx(nil, output{keys.p2wpkh(extBranch, uint32(r.IntN(25))), int64(10_000 + r.IntN(50_000))})
					all[tx.TxHash()] = tx
					res, err := w.ApplyMempoolTx(tx)
					require.NoError(t, err)
					dt.apply(res.Delta)
				case k < 6: // a spend of a coin, maybe one already spent pending
					us, err := w.UTXOs()
					require.NoError(t, err)
					if len(us) == 0 {
						continue
					}
					u := us[r.IntN(len(us))]
					nextInt++
					tx := f.tx([]wire.OutPoint{{Hash: u.Txid, Index: u.Index}},
						output{foreignScript(uint32(step)), int64(u.Amount) / 2},
						output{keys.p2wpkh(intBranch, nextInt), int64(u.Amount) / 3})
					all[tx.TxHash()] = tx
					res, err := w.ApplyMempoolTx(tx)
					require.NoError(t, err)
					dt.apply(res.Delta)
				case k < 9: // a block confirming what it consistently can
					var txs []*wire.MsgTx
					inBlock := map[wire.OutPoint]bool{}
					for added := true; added; {
						added = false
						for _, tx := range pendingTxs() {
							h := tx.TxHash()
							if confirmed[h] || r.IntN(3) == 0 {
								continue
							}
							ok := true
							for _, in := range tx.TxIn {
								p := in.PreviousOutPoint
								if spentOnChain[p] || inBlock[p] {
									ok = false
								}
								if _, ours := all[p.Hash]; ours && !confirmed[p.Hash] {
									ok = false
								}
							}
							if !ok {
								continue
							}
							for _, in := range tx.TxIn {
								inBlock[in.PreviousOutPoint] = true
							}
							confirmed[h], added = true, true
							txs = append(txs, tx)
						}
					}
					// Sometimes a payer double-spends a pending payment.
					for _, tx := range pendingTxs() {
						p := tx.TxIn[0].PreviousOutPoint
						if _, ours := all[p.Hash]; ours || confirmed[tx.TxHash()] || inBlock[p] || r.IntN(4) != 0 {
							continue
						}
						inBlock[p] = true
						txs = append(txs, f.tx([]wire.OutPoint{p}, output{foreignScript(99), 1_000}))
					}
					for p := range inBlock {
						spentOnChain[p] = true
					}
					res := mustApply(t, w, chain.add(txs...).filtered())
					dt.apply(res.Delta)
				default: // time passes, sometimes past the expiry
					clock.set(clock.now().Add(time.Duration(r.IntN(200)) * time.Hour))
					res, err := w.ApplyMempoolTx(f.tx(nil, output{foreignScript(5), 1}))
					require.NoError(t, err)
					dt.apply(res.Delta)
				}
				dt.check()
				bal := mustBalance(t, w)
				require.GreaterOrEqual(t, bal.Confirmed, bal.PendingSpent-bal.Immature, "step %d", step)
			}
			require.NoError(t, w.Flush())
			st, err := w.Stats()
			require.NoError(t, err)
			t.Logf("seed %d: %d relevant, %d mempool relevant, %d outpoints", seed, st.Relevant, st.MempoolRelevant, st.OutPoints)
		})
	}
}
