package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// The saturation experiment (formula 6): a BLOOM_UPDATE_ALL filter on a
// synthetic chain where the wallet is paid every block, sized tight (for
// the wallet's addresses only) and with headroom for the outpoints the
// server will add. The server's filter is replayed exactly with
// bip37.FilterBlock for saturationTrials tweaks; the formula side is a
// mean-field model of the same replay. The bytes are compared like with
// like: the model predicts the matched transactions' bytes, and the
// merkleblocks are measured apart.
const (
	saturationBlocks       = 2120
	saturationTxsPerBlock  = 10
	saturationUsers        = 500
	saturationWalletKeys   = 20
	saturationReceiveEvery = 10
	saturationSpendEvery   = 100
	saturationStream       = 400
	saturationTrials       = 10
	// saturationChartEvery thins the per-block charts.
	saturationChartEvery = 10
	// merkleBlockFixed is a merkleblock's size before its hashes and
	// flags: header, transaction count and the two length prefixes.
	merkleBlockFixed = wire.MaxBlockHeaderPayload + 4 + 1 + 1
	bytesPerMB       = 1e6
)

// satRun is the measured replay of one filter.
type satRun struct {
	fpTxs, walletTxs uint64
	txBytes, mbBytes uint64
	fpRate, fpCum    []float64
}

// satModel is the mean-field model of the server's filter: every output
// is inserted with the probability that its push matches, and a
// transaction matches unless none of its tested items does.
type satModel struct {
	nBits     uint64
	k         uint32
	m         float64
	walletTxs *element.WalletTxs // only for PaysWallet, which keeps no state
	inserted  map[wire.OutPoint]float64
	fpTxs     float64
	txBytes   float64
	fpRate    []float64
	fpCum     []float64
}

// satOutcome collects one capacity's trials.
type satOutcome struct {
	fp, txMB, mbMB, totalMB, rate, mhat, ones []float64
	saturated                                 int
	first                                     *satRun
}

// runSaturation replays a tight and a roomy UPDATE_ALL filter.
func runSaturation(ctx context.Context, cfg Config) (*Result, error) {
	blocks := orDefault(cfg.Blocks, saturationBlocks)
	trials := orDefault(cfg.Trials, saturationTrials)
	sc, err := NewSynthChain(ChainConfig{
		Seed: cfg.Seed, Blocks: blocks, TxsPerBlock: saturationTxsPerBlock, Users: saturationUsers,
		WalletKeys: saturationWalletKeys, WalletReceiveEvery: saturationReceiveEvery,
		WalletSpendEvery: saturationSpendEvery, CoinbaseToWallet: true,
	})
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, saturationStream))
	capacities := []uint32{saturationWalletKeys, saturationWalletKeys + 2*uint32(blocks)}
	names := []string{"tight", "headroom"}
	truth := element.NewSetFromCandidates(sc.WalletCandidates(len(sc.Wallet)))
	out := &Result{
		Name:  "saturation",
		Title: "BLOOM_UPDATE_ALL saturation: tight vs headroom",
		Params: []Param{
			param("blocks", blocks), param("txs_per_block", saturationTxsPerBlock),
			param("wallet_addresses", saturationWalletKeys), param("fp_target", BitcoinjFPRate),
			param("capacity_tight", capacities[0]), param("capacity_headroom", capacities[1]), param("trials", trials),
		},
	}
	rateChart := privacy.Chart{Title: "server-side filter false-positive rate, block by block", XLabel: "block height",
		YLabel: "false-positive rate", LogY: true, Notes: []string{fmt.Sprintf("measured: the first of %d tweaks, a marker every %d blocks", trials, 10*saturationChartEvery)}}
	cumChart := privacy.Chart{Title: "false-positive transactions sent, cumulative", XLabel: "block height",
		YLabel: "false-positive transactions", Notes: []string{fmt.Sprintf("measured: the first of %d tweaks, a marker every %d blocks", trials, 10*saturationChartEvery)}}
	const unit = "trials (a tweak each, one chain)"
	for i, capacity := range capacities {
		var o satOutcome
		var model *satModel
		for t := range trials {
			f, err := bip37.NewFilter(capacity, BitcoinjFPRate, rng.Uint32(), bip37.UpdateAll)
			if err != nil {
				return nil, err
			}
			for _, k := range sc.Wallet {
				f.Add(k.Hash160)
			}
			// The model does not depend on the tweak: it runs beside the
			// first trial only.
			var m *satModel
			if t == 0 {
				m = &satModel{
					nBits: f.NumBits(), k: f.HashFuncs(), m: saturationWalletKeys,
					walletTxs: element.NewWalletTxs(truth), inserted: map[wire.OutPoint]float64{},
				}
				model = m
			}
			run, err := replaySaturation(ctx, sc.Chain, f, truth, m)
			if err != nil {
				return nil, err
			}
			if t == 0 {
				o.first = run
			}
			o.fp = append(o.fp, float64(run.fpTxs))
			o.txMB = append(o.txMB, float64(run.txBytes)/bytesPerMB)
			o.mbMB = append(o.mbMB, float64(run.mbBytes)/bytesPerMB)
			o.totalMB = append(o.totalMB, float64(run.txBytes+run.mbBytes)/bytesPerMB)
			o.rate = append(o.rate, f.CurrentFPRate())
			o.ones = append(o.ones, 1)
			if m := f.EstimatedElements(); math.IsInf(m, 0) || math.IsNaN(m) {
				o.saturated++
			} else {
				o.mhat = append(o.mhat, m)
			}
		}
		n := names[i]
		mRow := clusterMeanRow(n+": final elements m^ (unsaturated trials)", o.mhat, o.ones[:len(o.mhat)], false, unit).withFormula(model.m)
		if len(o.mhat) == 0 {
			mRow = Comparison{Quantity: n + ": final elements m^", Measured: math.Inf(1), IntervalKind: KindDeterministic,
				Display: "saturated: every bit set, m^ infinite"}.withFormula(model.m).
				withNote(fmt.Sprintf("in all %d trials; the model's m counts the outpoints inserted", trials))
		} else {
			mRow = mRow.test(altFactor(1.5))
		}
		out.Rows = append(out.Rows,
			clusterMeanRow(n+": false-positive transactions", o.fp, o.ones, true, unit).withFormula(model.fpTxs).
				withSource("mean-field model").test(altFactor(2)),
			clusterMeanRow(n+": MB of matched transactions (wallet's and false positives)", o.txMB, o.ones, false, unit).
				withFormula(model.txBytes/bytesPerMB).withSource("mean-field model: the same transactions' bytes").test(altFactor(1.5)),
			clusterMeanRow(n+": MB of merkleblocks", o.mbMB, o.ones, false, unit).withNote("no model: measured only"),
			clusterMeanRow(n+": MB sent in all (transactions and merkleblocks)", o.totalMB, o.ones, false, unit).withNote("no model: measured only"),
			binomialRow(n+": final filter saturated (every bit set)", o.saturated, trials),
			clusterPropRow(n+": final false-positive rate (X/n)^k", o.rate, o.ones, unit).
				withFormula(bip37.FalsePositiveRate(model.nBits, model.k, model.m)).withSource("mean-field model").test(altShift(0.1)),
			mRow,
		)
		run := o.first
		x := make([]float64, len(run.fpRate))
		for j := range x {
			x[j] = float64(j * saturationChartEvery)
		}
		thin := func(v []float64) ([]float64, []float64) {
			var tx, ty []float64
			for j := 0; j < len(v); j += 10 {
				tx, ty = append(tx, x[j]), append(ty, v[j])
			}
			return tx, ty
		}
		rx, ry := thin(run.fpRate)
		cx, cy := thin(run.fpCum)
		rateChart.Series = append(rateChart.Series,
			privacy.Series{Name: n + " model", X: x, Y: model.fpRate, Group: n},
			privacy.Series{Name: n + " measured", X: rx, Y: ry, Points: true, Group: n})
		cumChart.Series = append(cumChart.Series,
			privacy.Series{Name: n + " model", X: x, Y: model.fpCum, Group: n},
			privacy.Series{Name: n + " measured", X: cx, Y: cy, Points: true, Group: n})
	}
	out.Charts = []privacy.Chart{rateChart, cumChart}
	return out, nil
}

// replaySaturation runs f over the chain as a serving node would, and the
// model beside it when model is not nil.
func replaySaturation(ctx context.Context, ch element.MemChain, f *bip37.Filter, truth *element.Set, model *satModel) (*satRun, error) {
	run := &satRun{}
	walletTxs := element.NewWalletTxs(truth)
	for i, b := range ch {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		h := int32(i)
		wallet := walletTxs.Block(b)
		if model != nil {
			model.block(b, wallet)
		}
		mb, idx := bip37.FilterBlock(f, b)
		run.mbBytes += uint64(merkleBlockFixed + len(mb.Hashes)*chainhash.HashSize + len(mb.Flags))
		for _, i := range idx {
			run.txBytes += uint64(b.Transactions[i].SerializeSize())
			if wallet[i] {
				run.walletTxs++
			} else {
				run.fpTxs++
			}
		}
		if h%saturationChartEvery == 0 {
			run.fpRate = append(run.fpRate, f.CurrentFPRate())
			run.fpCum = append(run.fpCum, float64(run.fpTxs))
			if model == nil {
				continue
			}
			model.fpRate = append(model.fpRate, bip37.FalsePositiveRate(model.nBits, model.k, model.m))
			model.fpCum = append(model.fpCum, model.fpTxs)
		}
	}
	return run, nil
}

// block advances the model over one block. wallet marks the wallet's
// transactions, which match for certain and insert their wallet outputs.
func (m *satModel) block(b *wire.MsgBlock, wallet []bool) {
	f := bip37.FalsePositiveRate(m.nBits, m.k, m.m)
	for i, tx := range b.Transactions {
		txid := tx.TxHash()
		noMatch := 1 - f // the txid
		for vout, o := range tx.TxOut {
			pushes := nonEmptyPushes(o.PkScript)
			pMatch := 1 - math.Pow(1-f, float64(pushes))
			if wallet[i] && m.walletTxs.PaysWallet(o.PkScript) {
				pMatch = 1
			}
			noMatch *= 1 - pMatch
			if pMatch > 0 {
				m.inserted[wire.OutPoint{Hash: txid, Index: uint32(vout)}] = pMatch
				m.m += pMatch
			}
		}
		for _, in := range tx.TxIn {
			pIns := m.inserted[in.PreviousOutPoint]
			delete(m.inserted, in.PreviousOutPoint)
			noMatch *= (1 - pIns) * (1 - f) * math.Pow(1-f, float64(nonEmptyPushes(in.SignatureScript)))
		}
		if !wallet[i] {
			m.fpTxs += 1 - noMatch
			m.txBytes += (1 - noMatch) * float64(tx.SerializeSize())
		} else {
			m.txBytes += float64(tx.SerializeSize())
		}
	}
}

// nonEmptyPushes counts the data pushes a relevance test examines.
func nonEmptyPushes(script []byte) int {
	pushes, err := txscript.PushedData(script)
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range pushes {
		if len(p) > 0 {
			n++
		}
	}
	return n
}
