package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/joint"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
)

// The restart-intersection experiment (formula 5): a client that draws a
// fresh tweak at every restart hands the adversary independent filters of
// the same wallet; a non-member survives r of them with probability
// prod f_i, so the anonymity set collapses geometrically with r. The
// formula column is the joint model (joint.JointRate, the one the
// analyzer and the meter use), which for fresh tweaks is that product
// unless two tweaks happen to share a hash seed.
//
// Config.Keys, KeyStep and Filters set the wallet: filter i (from 0) holds
// Keys + i*KeyStep keys, each as public key and hash160, in a bitcoinj
// filter (M = 2N + 100). Gervais et al.'s Table 6.1 setting is Keys 3070,
// KeyStep 50, Filters 5 (N = 3070, 3120, 3170, 3220, 3270) at bitcoinj's
// rate (FPRate 0.0005), with their universe of about 33 M (Universe
// 33000000); the table's values were not
// read (docs/RESEARCH.md, "Sources"), so no published figure is
// compared.
//
// Each (rate, r) point pools restartTrials wallets; given the filters,
// the candidates' matches are independent, so the pooled count is
// Poisson with the joint model's mean: the test can tell a count off by a
// factor 2 wherever the model expects a few matches or more.
const (
	restartUniverse  = 4_000_000
	restartTrials    = 10
	restartKeys      = 50
	restartMaxR      = 5
	restartKeyStream = 300
)

// restartFPRates are the target rates compared: bitcoinj's default and two
// rates a privacy-minded client might choose.
var restartFPRates = []float64{BitcoinjFPRate, 0.01, 0.05}

// runRestartIntersection measures, for each target rate and r, the
// candidates matching all of r independent filters of one wallet.
func runRestartIntersection(ctx context.Context, cfg Config) (*Result, error) {
	u := orDefault(cfg.Universe, restartUniverse)
	trials := orDefault(cfg.Trials, restartTrials)
	nKeys := orDefault(cfg.Keys, restartKeys)
	maxR := orDefault(cfg.Filters, restartMaxR)
	step := cfg.KeyStep
	if nKeys < 0 || maxR < 0 || step < 0 {
		return nil, fmt.Errorf("%w: keys %d, filters %d, key step %d", ErrBadConfig, nKeys, maxR, step)
	}
	rates := restartFPRates
	if cfg.FPRate != 0 {
		if !(cfg.FPRate > 0 && cfg.FPRate < 1) {
			return nil, fmt.Errorf("%w: false-positive rate %v", ErrBadConfig, cfg.FPRate)
		}
		rates = []float64{cfg.FPRate}
	}
	keysOf := func(i int) int { return nKeys + i*step }
	rng := rand.New(rand.NewPCG(cfg.Seed, restartKeyStream))
	// filters[(p*trials+t)*maxR+i] is restart i of trial t at rate p.
	var filters []*bip37.Filter
	for _, p := range rates {
		for t := range trials {
			keys := make([]Key, keysOf(maxR-1))
			for i := range keys {
				keys[i] = synthKey(cfg.Seed, restartKeyStream+uint64(t), uint64(i))
			}
			for i := range maxR {
				n := keysOf(i)
				f, err := bip37.NewFilter(uint32(2*n+BitcoinjHeadroom), p, rng.Uint32(), bip37.UpdateP2PubKeyOnly)
				if err != nil {
					return nil, err
				}
				for _, k := range keys[:n] {
					f.Add(k.PubKey)
					f.Add(k.Hash160)
				}
				filters = append(filters, f)
			}
		}
	}
	res, err := scan.Run(ctx, element.Stream(scan.Synthetic{Seed: cfg.Seed, Count: u}), scan.Config{Filters: filters, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	uf := float64(u)
	out := &Result{
		Name:  "restart-intersection",
		Title: "restarts with fresh tweaks: intersection of r filters",
		Params: []Param{
			param("universe", u), param("trials", trials), param("keys", nKeys), param("key_step", step),
			param("filters", maxR), param("capacity", "2N+100"), param("tweaks", "fresh per filter"),
		},
	}
	chart := privacy.Chart{Title: "anonymity set after r restarts (fresh tweak each)", XLabel: "filters observed r",
		YLabel: "false positives per wallet", LogY: true,
		Notes: []string{fmt.Sprintf("%d wallets per point, |A| = %d synthetic candidates; joint model given the filters", trials, u)}}
	for pi, p := range rates {
		var rx, measured, lo, hi, formula []float64
		for r := 1; r <= maxR; r++ {
			var count uint64
			var expect, independent float64
			for t := range trials {
				base := (pi*trials + t) * maxR
				count += countAllOf(res.Hits, base, r)
				expect += joint.JointRate(filters[base:base+r]) * uf
				independent += joint.IndependentRate(filters[base:base+r]) * uf
			}
			tf := float64(trials)
			row := poissonRow(fmt.Sprintf("p=%g r=%d (N=%d): false positives per wallet", p, r, keysOf(r-1)), count, tf).
				withFormula(expect / tf).withSource("joint model (joint.JointRate) of the wallets' filters").test(altFactor(2)).
				withNote(fmt.Sprintf("%d over %d wallets; independent product %.4g", count, trials, independent/tf))
			out.Rows = append(out.Rows, row)
			rx, measured, formula = append(rx, float64(r)), append(measured, row.Measured), append(formula, expect/tf)
			lo, hi = append(lo, row.Interval[0]), append(hi, row.Interval[1])
		}
		name := "p=" + strconv.FormatFloat(p, 'g', -1, floatBits)
		chart.Series = append(chart.Series,
			privacy.Series{Name: name + " joint model", X: rx, Y: formula, Group: name},
			privacy.Series{Name: name + " measured (95 % Poisson)", X: rx, Y: measured, YLo: lo, YHi: hi, Points: true, Group: name})
	}
	out.Charts = []privacy.Chart{chart}
	return out, nil
}

// countAllOf counts the hits matching every filter base..base+r-1.
func countAllOf(hits []scan.Hit, base, r int) uint64 {
	var n uint64
	for _, h := range hits {
		ok := true
		for i := base; i < base+r; i++ {
			if !h.Any.Has(i) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}
