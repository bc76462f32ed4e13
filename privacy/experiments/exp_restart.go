package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
)

// The restart-intersection experiment (formula 5): a client that draws a
// fresh tweak at every restart hands the adversary independent filters of
// the same wallet; a non-member survives r of them with probability
// prod f_i, so the anonymity set collapses geometrically with r.
const (
	restartUniverse  = 20_000_000
	restartTrials    = 2
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
	rng := rand.New(rand.NewPCG(cfg.Seed, restartKeyStream))
	// filters[(p*trials+t)*restartMaxR+i] is restart i of trial t at rate p.
	var filters []*bip37.Filter
	for _, p := range restartFPRates {
		for t := range trials {
			keys := make([]Key, restartKeys)
			for i := range keys {
				keys[i] = synthKey(cfg.Seed, restartKeyStream+uint64(t), uint64(i))
			}
			for range restartMaxR {
				f, err := bip37.NewFilter(2*restartKeys+BitcoinjHeadroom, p, rng.Uint32(), bip37.UpdateP2PubKeyOnly)
				if err != nil {
					return nil, err
				}
				for _, k := range keys {
					f.Add(k.PubKey)
					f.Add(k.Hash160)
				}
				filters = append(filters, f)
			}
		}
	}
	res, err := privacy.Scan(ctx, privacy.Stream(privacy.Synthetic{Seed: cfg.Seed, Count: u}), privacy.ScanConfig{Filters: filters, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	uf := float64(u)
	out := &Result{
		Name:  "restart-intersection",
		Title: "restarts with fresh tweaks: intersection of r filters",
		Params: []Param{
			param("universe", u), param("trials", trials), param("keys", restartKeys),
			param("capacity", 2*restartKeys+BitcoinjHeadroom), param("seed", cfg.Seed),
		},
	}
	chart := privacy.Chart{Title: "anonymity set after r restarts (fresh tweak each)", XLabel: "filters observed r",
		YLabel: "false positives", LogY: true}
	for pi, p := range restartFPRates {
		var rx, measured, formula []float64
		for r := 1; r <= restartMaxR; r++ {
			var count uint64
			var expect float64
			for t := range trials {
				base := (pi*trials + t) * restartMaxR
				count += countAllOf(res.Hits, base, r)
				rates := make([]float64, r)
				for i := range rates {
					rates[i] = filters[base+i].CurrentFPRate()
				}
				expect += privacy.IntersectionRate(rates) * uf
			}
			mean, expect := float64(count)/float64(trials), expect/float64(trials)
			lo, hi := PoissonInterval(count, Z95)
			out.Rows = append(out.Rows, compare(fmt.Sprintf("p=%g r=%d: false positives", p, r), mean, expect, nil, srcFormula).
				withInterval(lo/float64(trials), hi/float64(trials)))
			rx, measured, formula = append(rx, float64(r)), append(measured, mean), append(formula, expect)
		}
		name := "p=" + strconv.FormatFloat(p, 'g', -1, floatBits)
		chart.Series = append(chart.Series,
			privacy.Series{Name: name + " formula", X: rx, Y: formula},
			privacy.Series{Name: name + " measured", X: rx, Y: measured, Points: true})
	}
	out.Charts = []privacy.Chart{chart}
	return out, nil
}

// countAllOf counts the hits matching every filter base..base+r-1.
func countAllOf(hits []privacy.Hit, base, r int) uint64 {
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
