package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// The saturation experiment (formula 6): a BLOOM_UPDATE_ALL filter on a
// synthetic chain where the wallet is paid every block (as the simnet
// harness funds watched addresses), sized tight (for the wallet's
// addresses only) and with headroom for the outpoints the server will add.
// The server's filter is replayed exactly with bip37.FilterBlock; the
// formula side is a mean-field model of the same replay.
const (
	saturationBlocks       = 2120
	saturationTxsPerBlock  = 10
	saturationUsers        = 500
	saturationWalletKeys   = 20
	saturationReceiveEvery = 10
	saturationSpendEvery   = 100
	saturationStream       = 400
	// saturationChartEvery thins the per-block charts.
	saturationChartEvery = 10
	// merkleBlockFixed is a merkleblock's size before its hashes and
	// flags: header, transaction count and the two length prefixes.
	merkleBlockFixed = wire.MaxBlockHeaderPayload + 4 + 1 + 1
	bytesPerMB       = 1e6
)

// Figures measured here earlier (bloomwatch on a 2,120-block simnet
// chain, GUIDE section 4), not published: they go in the notes, never in
// the published column.
const (
	hereSaturationTightFP    = 20441
	hereSaturationHeadroomFP = 0
	hereSaturationTightMB    = 6.0
	hereSaturationHeadroomMB = 0.56
)

// satRun is the measured replay of one filter.
type satRun struct {
	fpTxs, walletTxs uint64
	bytes            uint64
	fpRate, fpCum    []float64
}

// satModel is the mean-field model of the server's filter: every output
// is inserted with the probability that its push matches, and a
// transaction matches unless none of its tested items does.
type satModel struct {
	nBits     uint64
	k         uint32
	m         float64
	walletTxs *privacy.WalletTxs // only for PaysWallet, which keeps no state
	inserted  map[wire.OutPoint]float64
	fpTxs     float64
	txBytes   float64
	fpRate    []float64
	fpCum     []float64
}

// runSaturation replays a tight and a roomy UPDATE_ALL filter.
func runSaturation(ctx context.Context, cfg Config) (*Result, error) {
	blocks := orDefault(cfg.Blocks, saturationBlocks)
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
	here := [][2]float64{{hereSaturationTightFP, hereSaturationTightMB}, {hereSaturationHeadroomFP, hereSaturationHeadroomMB}}
	truth := privacy.NewElementSetFromCandidates(sc.WalletCandidates(len(sc.Wallet)))
	out := &Result{
		Name:  "saturation",
		Title: "BLOOM_UPDATE_ALL saturation: tight vs headroom",
		Params: []Param{
			param("blocks", blocks), param("txs_per_block", saturationTxsPerBlock),
			param("wallet_addresses", saturationWalletKeys), param("fp_target", BitcoinjFPRate),
			param("capacity_tight", capacities[0]), param("capacity_headroom", capacities[1]), param("seed", cfg.Seed),
		},
	}
	rateChart := privacy.Chart{Title: "server-side filter false-positive rate, block by block", XLabel: "block height",
		YLabel: "false-positive rate", LogY: true}
	cumChart := privacy.Chart{Title: "false-positive transactions sent, cumulative", XLabel: "block height",
		YLabel: "false-positive transactions"}
	for i, capacity := range capacities {
		f, err := bip37.NewFilter(capacity, BitcoinjFPRate, rng.Uint32(), bip37.UpdateAll)
		if err != nil {
			return nil, err
		}
		for _, k := range sc.Wallet {
			f.Add(k.Hash160)
		}
		model := &satModel{
			nBits: f.NumBits(), k: f.HashFuncs(), m: saturationWalletKeys,
			walletTxs: privacy.NewWalletTxs(truth), inserted: map[wire.OutPoint]float64{},
		}
		run, err := replaySaturation(ctx, sc.Chain, f, truth, model)
		if err != nil {
			return nil, err
		}
		n := names[i]
		out.Rows = append(out.Rows,
			compare(n+": false-positive transactions", float64(run.fpTxs), model.fpTxs, nil, srcFormula).
				withInterval(PoissonInterval(run.fpTxs, Z95)).
				withNote(fmt.Sprintf("%s: %g on a chain of another shape; compare the orders of magnitude", srcHereSimnet, here[i][0])),
			compare(n+": MB of matched transactions and merkleblocks", float64(run.bytes)/bytesPerMB,
				model.txBytes/bytesPerMB, nil, srcFormula).
				withNote(fmt.Sprintf("formula: expected bytes of matched transactions only; %s: %g MB", srcHereSimnet, here[i][1])),
			compare(n+": final false-positive rate", f.CurrentFPRate(), bip37.FalsePositiveRate(model.nBits, model.k, model.m), nil, srcFormula),
			compare(n+": final elements m^", finiteOr(f.EstimatedElements(), float64(f.NumBits())), model.m, nil, srcFormula).
				withNote(fmt.Sprintf("%d wallet transactions matched", run.walletTxs)),
		)
		x := make([]float64, len(run.fpRate))
		for j := range x {
			x[j] = float64(j * saturationChartEvery)
		}
		rateChart.Series = append(rateChart.Series,
			privacy.Series{Name: n + " model", X: x, Y: model.fpRate},
			privacy.Series{Name: n + " measured", X: x, Y: run.fpRate, Points: true})
		cumChart.Series = append(cumChart.Series,
			privacy.Series{Name: n + " model", X: x, Y: model.fpCum},
			privacy.Series{Name: n + " measured", X: x, Y: run.fpCum, Points: true})
	}
	out.Charts = []privacy.Chart{rateChart, cumChart}
	return out, nil
}

// replaySaturation runs f over the chain as a serving node would, and the
// model beside it.
func replaySaturation(ctx context.Context, ch privacy.MemChain, f *bip37.Filter, truth *privacy.ElementSet, model *satModel) (*satRun, error) {
	run := &satRun{}
	walletTxs := privacy.NewWalletTxs(truth)
	for i, b := range ch {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		h := int32(i)
		wallet := walletTxs.Block(b)
		model.block(b, wallet)
		mb, idx := bip37.FilterBlock(f, b)
		run.bytes += uint64(merkleBlockFixed + len(mb.Hashes)*chainhash.HashSize + len(mb.Flags))
		for _, i := range idx {
			run.bytes += uint64(b.Transactions[i].SerializeSize())
			if wallet[i] {
				run.walletTxs++
			} else {
				run.fpTxs++
			}
		}
		if h%saturationChartEvery == 0 {
			run.fpRate = append(run.fpRate, f.CurrentFPRate())
			run.fpCum = append(run.fpCum, float64(run.fpTxs))
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
