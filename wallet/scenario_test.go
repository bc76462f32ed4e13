package wallet

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// scenario is a deterministic random chain of payments to, spends from and
// false positives around the BIP84 regtest test account, with a model of
// the wallet it must produce.
type scenario struct {
	blocks []*fullBlock
	// utxos is the model's unspent wallet outputs after the last block.
	utxos map[wire.OutPoint]int64
	// mine holds the model's wallet transactions.
	mine map[chainhash.Hash]bool
}

// Scenario shape: per block, up to maxPays payments to the wallet, a spend
// with probability 1/spendOdds, up to maxFPs foreign transactions.
const (
	scenarioMaxPays   = 3
	scenarioSpendOdds = 2
	scenarioMaxFPs    = 3
	scenarioEdgeOdds  = 4
)

// buildScenario generates n blocks starting at height start. Payments go
// to receive indexes within the gap of the last used one, often right at
// its edge, so the wallet must derive as it goes; spends send change to
// the next change index.
func buildScenario(t testing.TB, seed uint64, start int32, n int) *scenario {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	keys := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)
	f := &txFactory{n: uint32(seed) << 16}
	chain := newTestChain(f, start)
	s := &scenario{utxos: make(map[wire.OutPoint]int64), mine: make(map[chainhash.Hash]bool)}
	lastExt := -1
	nextInt := uint32(0)
	for range n {
		var txs []*wire.MsgTx
		for range r.IntN(scenarioMaxPays + 1) {
			limit := lastExt + DefaultGapExternal // highest watched index
			idx := limit
			if r.IntN(scenarioEdgeOdds) != 0 {
				idx = r.IntN(limit + 1)
			}
			value := int64(1_000 + r.IntN(100_000))
			tx := f.tx(nil, output{keys.p2wpkh(extBranch, uint32(idx)), value}, output{foreignScript(uint32(r.IntN(50))), 777})
			txs = append(txs, tx)
			s.mine[tx.TxHash()] = true
			s.utxos[op(tx, 0)] = value
			lastExt = max(lastExt, idx)
		}
		if len(s.utxos) > 0 && r.IntN(scenarioSpendOdds) == 0 {
			ops := make([]wire.OutPoint, 0, len(s.utxos))
			for o := range s.utxos {
				ops = append(ops, o)
			}
			// Map order is random; pick deterministically.
			sortOutpoints(ops)
			spent := ops[r.IntN(len(ops))]
			value := s.utxos[spent]
			change := value * 3 / 10
			tx := f.tx([]wire.OutPoint{spent}, output{foreignScript(99), value / 2}, output{keys.p2wpkh(intBranch, nextInt), change})
			nextInt++
			delete(s.utxos, spent)
			s.utxos[op(tx, 1)] = change
			s.mine[tx.TxHash()] = true
			txs = append(txs, tx)
		}
		for range r.IntN(scenarioMaxFPs + 1) {
			fp := f.tx(nil, output{foreignScript(uint32(r.IntN(50))), int64(r.IntN(9_999) + 1)})
			at := r.IntN(len(txs) + 1)
			txs = append(txs[:at], append([]*wire.MsgTx{fp}, txs[at:]...)...)
		}
		s.blocks = append(s.blocks, chain.add(txs...))
	}
	return s
}

// sortOutpoints orders outpoints by txid bytes, then index.
func sortOutpoints(ops []wire.OutPoint) {
	slices.SortFunc(ops, func(a, b wire.OutPoint) int {
		if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
}

// applyLikeNode applies a block as the node does: a block whose result
// reports a delta is applied again (here with the same
// transactions, so nothing may be new).
func applyLikeNode(t testing.TB, w *Wallet, b *fullBlock) {
	t.Helper()
	if res := mustApply(t, w, b.filtered()); !res.Delta.Empty() {
		again := mustApply(t, w, b.filtered())
		require.Empty(t, again.Relevant)
		require.Empty(t, again.FalsePositives)
	}
}

// syncScenario applies every block like the node.
func syncScenario(t testing.TB, w *Wallet, s *scenario) {
	t.Helper()
	for _, b := range s.blocks {
		applyLikeNode(t, w, b)
	}
}

func TestRandomChainsMatchModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		t.Run("", func(t *testing.T) {
			s := buildScenario(t, seed, 10, 60)
			w, _ := newRegtestWallet(t, WithBatch(9, 0))
			syncScenario(t, w, s)
			var want int64
			for _, v := range s.utxos {
				want += v
			}
			require.Equal(t, Balance{Confirmed: btcutil.Amount(want)}, mustBalance(t, w))
			utxos, err := w.UTXOs()
			require.NoError(t, err)
			got := make(map[wire.OutPoint]int64, len(utxos))
			for _, u := range utxos {
				got[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = int64(u.Amount)
			}
			require.Equal(t, s.utxos, got)
			el, err := w.FilterElements()
			require.NoError(t, err)
			watched := make(map[wire.OutPoint]int64, len(el.OutPoints))
			for _, o := range el.OutPoints {
				watched[o] = s.utxos[o]
			}
			require.Equal(t, s.utxos, watched, "the filter watches exactly the unspent outputs")
			history := txids(t, w)
			require.Len(t, history, len(s.mine))
			for txid := range s.mine {
				require.Contains(t, history, txid)
			}
			var fps, relevant uint64
			for _, b := range s.blocks {
				for _, tx := range b.txs[1:] {
					if s.mine[tx.TxHash()] {
						relevant++
					} else {
						fps++
					}
				}
			}
			st, err := w.Stats()
			require.NoError(t, err)
			require.Equal(t, relevant, st.Relevant)
			require.Equal(t, fps, st.FalsePositives)
		})
	}
}
