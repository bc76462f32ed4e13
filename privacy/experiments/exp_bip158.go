package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// The bip158 experiment: BIP37 beside BIP157/158 on
// the same chain and wallets. A BIP158 client downloads every block's
// basic filter (Golomb-coded, P = 19, M = 784,931: btcutil/gcs/builder
// builds them), tests its scripts against each, and fetches the blocks
// that match: its own and false-positive ones, at about 1/M per script
// per block. The server that serves the blocks learns which blocks were
// fetched; in the analyzer's units, its candidate scripts are those whose
// every appearance since the wallet's birthday lies in fetched blocks (a
// wallet's own scripts always do). A BIP37 peer learns the filter: its
// candidates are the scripts it matches. Both are measured per wallet,
// with their bandwidth (BIP158: every filter and the fetched blocks;
// BIP37: a merkleblock per block and the matched transactions), and BIP37
// at looser rates until its bandwidth reaches BIP158's: the precision at
// equal bandwidth is interpolated per wallet (linearly in log bytes)
// between the two rates that bracket it. The candidates are counted before
// any graph analysis, the same stage for both.
const (
	bip158Wallets = 60
	bip158Blocks  = 360
	bip158Stream  = 9000
)

// bip37Rates are the BIP37 rates swept toward BIP158's bandwidth.
var bip37Rates = []float64{1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.3}

// bip158Wallet is one wallet's outcome.
type bip158Wallet struct {
	fetched, own, fpBlocks, expectFP float64
	gcsBytes, gcsPrec, gcsFP         float64
	bip37Bytes, bip37Prec, bip37FP   []float64
	truth                            float64
}

// runBIP158 measures both protocols for every wallet.
func runBIP158(ctx context.Context, cfg Config) (*Result, error) {
	pc := populationConfig(cfg)
	pc.WalletsPerKind = orDefault(cfg.Wallets, bip158Wallets)
	pc.Blocks = orDefault(cfg.Blocks, bip158Blocks)
	pc.Kinds = []WalletKind{KindBloomwatch}
	pop, err := NewPopulation(pc)
	if err != nil {
		return nil, err
	}
	ix := pop.indexChain()
	// Every block's basic filter, and where each script appears.
	type gcsBlock struct {
		match func([][]byte) (bool, error)
		bytes int
	}
	blocks := make([]gcsBlock, len(pop.Chain))
	prevOut := map[wire.OutPoint][]byte{}
	appears := map[string][]int32{}
	blockBytes := make([]int, len(pop.Chain))
	for h, b := range pop.Chain {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var prev [][]byte
		seen := map[string]bool{}
		note := func(s []byte) {
			if !seen[string(s)] {
				seen[string(s)] = true
				appears[string(s)] = append(appears[string(s)], int32(h))
			}
		}
		for _, tx := range b.Transactions {
			for _, in := range tx.TxIn {
				if s, ok := prevOut[in.PreviousOutPoint]; ok {
					prev = append(prev, s)
					note(s)
					delete(prevOut, in.PreviousOutPoint)
				}
			}
			txid := tx.TxHash()
			for i, o := range tx.TxOut {
				prevOut[wire.OutPoint{Hash: txid, Index: uint32(i)}] = o.PkScript
				note(o.PkScript)
			}
		}
		f, err := builder.BuildBasicFilter(b, prev)
		if err != nil {
			return nil, err
		}
		nb, err := f.NBytes()
		if err != nil {
			return nil, err
		}
		hash := b.BlockHash()
		key := builder.DeriveKey(&hash)
		blocks[h] = gcsBlock{bytes: len(nb) + chainhash.HashSize, match: func(q [][]byte) (bool, error) { return f.MatchAny(key, q) }}
		blockBytes[h] = b.SerializeSize()
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, bip158Stream))
	var outs []bip158Wallet
	for _, w := range pop.Wallets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		watched := w.Used + KindLookahead(w.Kind)
		var scripts, hashes [][]byte
		own := map[string]bool{}
		for i := range watched {
			k := pop.walletKey(w, i)
			s := synth.P2PKH(k.Hash160)
			scripts, hashes = append(scripts, s), append(hashes, k.Hash160)
			own[string(s)] = true
		}
		var o bip158Wallet
		fetched := map[int32]bool{}
		for h := w.Birthday; int(h) < len(pop.Chain); h++ {
			o.gcsBytes += float64(blocks[h].bytes)
			mine := false
			for i := range pop.Chain[h].Transactions {
				if containsKey(ix.txOwners[h][i], int32(w.ID)) {
					mine = true
				}
			}
			ok, err := blocks[h].match(scripts)
			if err != nil {
				return nil, err
			}
			if !mine {
				o.expectFP += -math.Expm1(float64(len(scripts)) * math.Log1p(-1/float64(builder.DefaultM)))
			}
			if ok {
				fetched[h] = true
				o.fetched++
				o.gcsBytes += float64(blockBytes[h])
				if mine {
					o.own++
				} else {
					o.fpBlocks++
				}
			}
		}
		// The BIP158 server's candidates: scripts seen since the birthday
		// only in fetched blocks.
		var cands, mineC float64
		for s, hs := range appears {
			in, any := true, false
			for _, h := range hs {
				if h < w.Birthday {
					continue
				}
				any = true
				if !fetched[h] {
					in = false
					break
				}
			}
			if !any || !in {
				continue
			}
			cands++
			if own[s] {
				mineC++
			}
		}
		o.truth = mineC
		o.gcsFP = cands - mineC
		o.gcsPrec = mineC / math.Max(1, cands)
		// BIP37 at each rate: the filter's candidates among the same
		// scripts, and its bandwidth replayed block by block.
		tweak := rng.Uint32()
		for _, rate := range bip37Rates {
			size, k := filterpolicy.FilterSize(len(hashes), rate)
			f, err := bip37.NewFilterFromBits(make([]byte, size), k, tweak, bip37.UpdateAll)
			if err != nil {
				return nil, err
			}
			for _, hsh := range hashes {
				f.Add(hsh)
			}
			var c37, m37 float64
			for s, hs := range appears {
				if hs[len(hs)-1] < w.Birthday {
					continue
				}
				push := p2pkhHash([]byte(s))
				if push == nil || !f.Matches(push) {
					continue
				}
				c37++
				if own[s] {
					m37++
				}
			}
			srv := f.Clone()
			var bytes float64
			for h := w.Birthday; int(h) < len(pop.Chain); h++ {
				mb, idx := bip37.FilterBlock(srv, pop.Chain[h])
				bytes += float64(merkleBlockFixed + len(mb.Hashes)*chainhash.HashSize + len(mb.Flags))
				for _, i := range idx {
					bytes += float64(pop.Chain[h].Transactions[i].SerializeSize())
				}
			}
			o.bip37Bytes = append(o.bip37Bytes, bytes)
			o.bip37Prec = append(o.bip37Prec, m37/math.Max(1, c37))
			o.bip37FP = append(o.bip37FP, c37-m37)
		}
		outs = append(outs, o)
	}
	return bip158Result(pop, outs), nil
}

// bip158Result writes the rows and charts.
func bip158Result(pop *Population, outs []bip158Wallet) *Result {
	out := &Result{
		Name:  "bip158",
		Title: "BIP37 beside BIP157/158 on the same chain and wallets: what the serving peer learns, per byte",
		Params: []Param{
			param("wallets", len(outs)), param("blocks", len(pop.Chain)), param("txs_per_block", pop.Config.TxsPerBlock),
			param("bip158_P", builder.DefaultP), param("bip158_M", builder.DefaultM), param("bip37_rates", fmt.Sprint(bip37Rates)),
		},
	}
	const unit = "wallets"
	col := func(get func(bip158Wallet) float64) []float64 {
		var v []float64
		for _, o := range outs {
			v = append(v, get(o))
		}
		return v
	}
	ones := col(func(bip158Wallet) float64 { return 1 })
	kb := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = x / 1000
		}
		return out
	}
	gcsKB := clusterMeanRow("BIP158: kB downloaded per wallet (every filter and the fetched blocks)", kb(col(func(o bip158Wallet) float64 { return o.gcsBytes })), ones, false, unit)
	gcsPrec := clusterPropRow("BIP158: the block server's precision (wallet scripts among its candidates)", col(func(o bip158Wallet) float64 { return o.gcsPrec }), ones, unit)
	out.Rows = append(out.Rows,
		clusterMeanRow("BIP158: blocks fetched per wallet", col(func(o bip158Wallet) float64 { return o.fetched }), ones, true, unit),
		clusterMeanRow("BIP158: false-positive blocks fetched per wallet", col(func(o bip158Wallet) float64 { return o.fpBlocks }), ones, true, unit).
			withFormula(sumOf(col(func(o bip158Wallet) float64 { return o.expectFP }))/float64(len(outs))).
			withSource("1 - (1 - 1/M)^scripts per block without a wallet transaction").test(altFactor(2)),
		gcsKB,
		clusterMeanRow("BIP158: the block server's candidate scripts not the wallet's (per wallet)", col(func(o bip158Wallet) float64 { return o.gcsFP }), ones, true, unit).
			withNote("scripts seen since the birthday only in fetched blocks"),
		gcsPrec,
	)
	var bx, by, blo, bhi []float64
	for ri, rate := range bip37Rates {
		pre := fmt.Sprintf("BIP37 at %g: ", rate)
		b := clusterMeanRow(pre+"kB downloaded per wallet (merkleblocks and matched transactions)", kb(col(func(o bip158Wallet) float64 { return o.bip37Bytes[ri] })), ones, false, unit)
		p := clusterPropRow(pre+"the peer's precision (wallet scripts among the filter's matches)", col(func(o bip158Wallet) float64 { return o.bip37Prec[ri] }), ones, unit)
		out.Rows = append(out.Rows, b,
			clusterMeanRow(pre+"the peer's candidate scripts not the wallet's (per wallet)", col(func(o bip158Wallet) float64 { return o.bip37FP[ri] }), ones, true, unit),
			p)
		bx, by = append(bx, b.Measured), append(by, p.Measured)
		blo, bhi = append(blo, p.Interval[0]), append(bhi, p.Interval[1])
	}
	// Equal bandwidth, wallet by wallet.
	var gcsP, eqPrec []float64
	for _, o := range outs {
		logs := make([]float64, len(o.bip37Bytes))
		for i, v := range o.bip37Bytes {
			logs[i] = math.Log(v)
		}
		a, b, t, ok := bracket(logs, math.Log(o.gcsBytes))
		if !ok {
			continue
		}
		p := (1-t)*o.bip37Prec[a] + t*o.bip37Prec[b]
		eqPrec = append(eqPrec, p)
		gcsP = append(gcsP, o.gcsPrec)
	}
	eqOnes := make([]float64, len(eqPrec))
	for i := range eqOnes {
		eqOnes[i] = 1
	}
	out.Rows = append(out.Rows,
		clusterPropRow("BIP37 at BIP158's bandwidth (interpolated per wallet): the peer's precision", eqPrec, eqOnes, unit).
			withNote(fmt.Sprintf("%d of %d wallets within the rates swept; linear in log bytes between the two rates around BIP158's bytes", len(eqPrec), len(outs))),
		diffRow("BIP158 minus BIP37 at equal bandwidth: precision (paired by wallet)", gcsP, eqPrec, unit).withFormula(0).
			testLabeled("no difference", altDiff(0.1)).withNote("negative: the BIP158 server learns less per byte"),
	)
	out.Charts = []privacy.Chart{{
		Title: "what the serving peer learns per byte downloaded (measured here)", XLabel: "kB downloaded per wallet", YLabel: "peer's precision",
		LogX: true,
		Notes: []string{fmt.Sprintf("%d bloomwatch wallets on a %d-block chain of %d background txs per block; BIP37 at rates %v",
			len(outs), len(pop.Chain), pop.Config.TxsPerBlock, bip37Rates)},
		Series: []privacy.Series{
			{Name: "BIP37, rates 1e-4 (left) to 0.3 (right)", X: bx, Y: by, Group: "37"},
			{Name: "BIP37, one filter per wallet (95 % over wallets)", X: bx, Y: by, YLo: blo, YHi: bhi, Points: true, Group: "37"},
			{Name: "BIP158 (blocks fetched)", X: []float64{gcsKB.Measured}, Y: []float64{gcsPrec.Measured},
				YLo: []float64{gcsPrec.Interval[0]}, YHi: []float64{gcsPrec.Interval[1]}, Points: true, Group: "158"},
		},
	}}
	return out
}
