package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
)

// The single-filter experiment (Gervais et al. 2014): how much one
// bitcoinj filter (M = 2N + 100 at p = 0.0005, 2N elements) reveals of a
// wallet of N addresses to an adversary testing every address on chain.
const (
	singleUniverse  = 30_000_000
	singleTrials    = 8
	singleMaxN      = 100
	singleKeyStream = 200
)

// singleNs are the wallet sizes measured by Monte Carlo; the formula is
// drawn for every N from 1 to singleMaxN.
var singleNs = []int{1, 2, 5, 10, 15, 20, 30, 50, 75, 100}

// Published probabilities that one filter reveals every address.
var singleLiterature = map[int]float64{
	10: 0.99, // "when N = 10, Ph = 0.99"
	15: 0.80, // "less than 15 addresses ... with almost 0.80 probability"
}

// bitcoinjFilter builds a bitcoinj-style filter for keys.
func bitcoinjFilter(keys []Key, tweak uint32) (*bip37.Filter, error) {
	f, err := bip37.NewFilter(uint32(2*len(keys))+BitcoinjHeadroom, BitcoinjFPRate, tweak, bip37.UpdateP2PubKeyOnly)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		f.Add(k.PubKey)
		f.Add(k.Hash160)
	}
	return f, nil
}

// bitcoinjRate is the formula's rate of a bitcoinj filter of n keys.
func bitcoinjRate(n int) float64 {
	size, k := bip37.Params(uint32(2*n)+BitcoinjHeadroom, BitcoinjFPRate)
	return bip37.FalsePositiveRate(uint64(size)*bitsPerByte, k, float64(2*n))
}

// runSingleFilter measures, for each N, the false positives of real
// filters against a synthetic address universe, trial by trial.
func runSingleFilter(ctx context.Context, cfg Config) (*Result, error) {
	u := orDefault(cfg.Universe, singleUniverse)
	trials := orDefault(cfg.Trials, singleTrials)
	rng := rand.New(rand.NewPCG(cfg.Seed, singleKeyStream))
	ns := singleNs
	if cfg.Keys < 0 {
		return nil, fmt.Errorf("%w: keys %d", ErrBadConfig, cfg.Keys)
	}
	if cfg.Keys > 0 {
		ns = []int{cfg.Keys}
	}
	var filters []*bip37.Filter
	for _, n := range ns {
		for t := range trials {
			keys := make([]Key, n)
			for i := range keys {
				keys[i] = synthKey(cfg.Seed, singleKeyStream+uint64(t), uint64(i))
			}
			f, err := bitcoinjFilter(keys, rng.Uint32())
			if err != nil {
				return nil, err
			}
			filters = append(filters, f)
		}
	}
	res, err := privacy.Scan(ctx, privacy.Stream(privacy.Synthetic{Seed: cfg.Seed, Count: u}), privacy.ScanConfig{Filters: filters, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	uf := float64(u)
	out := &Result{
		Name:  "single-filter",
		Title: "one bitcoinj filter: anonymity vs wallet size",
		Params: []Param{
			param("universe", u), param("trials", trials), param("fp_target", BitcoinjFPRate),
			param("capacity", "2N+100"), param("elements", "2N (pubkey and hash160)"), param("seed", cfg.Seed),
		},
	}
	var mx, mP, mE []float64
	for i, n := range ns {
		var sum uint64
		zero := 0
		for t := range trials {
			c := res.AnyCounts[i*trials+t]
			sum += c
			if c == 0 {
				zero++
			}
		}
		f := bitcoinjRate(n)
		pLo, pHi := WilsonInterval(zero, trials, Z95)
		pMeasured := float64(zero) / float64(trials)
		mean := float64(sum) / float64(trials)
		var lit *float64
		if v, ok := singleLiterature[n]; ok {
			lit = literature(v)
		}
		out.Rows = append(out.Rows,
			compare(fmt.Sprintf("N=%d: P(no false positive)", n), pMeasured, privacy.ProbNoFalsePositive(f, uf-float64(n)), lit, srcGervais).
				withInterval(pLo, pHi).withNote(fmt.Sprintf("%d of %d trials had none", zero, trials)),
			compare(fmt.Sprintf("N=%d: false positives E[F]", n), mean, f*(uf-float64(n)), nil, srcFormula).
				withNote(fmt.Sprintf("%d over %d trials", sum, trials)),
		)
		mx, mP, mE = append(mx, float64(n)), append(mP, pMeasured), append(mE, mean)
	}
	var fx, fP, fE []float64
	for n := 1; n <= max(singleMaxN, cfg.Keys); n++ {
		f := bitcoinjRate(n)
		fx = append(fx, float64(n))
		fP = append(fP, privacy.ProbNoFalsePositive(f, uf-float64(n)))
		fE = append(fE, f*(uf-float64(n)))
	}
	out.Charts = []privacy.Chart{
		{
			Title: "one bitcoinj filter: probability that it reveals the whole wallet", XLabel: "wallet addresses N",
			YLabel: "P(no false positive)",
			Series: []privacy.Series{{Name: "formula", X: fx, Y: fP}, {Name: "measured", X: mx, Y: mP, Points: true}},
		},
		{
			Title: "one bitcoinj filter: false-positive anonymity set", XLabel: "wallet addresses N",
			YLabel: "false positives", LogY: true,
			Series: []privacy.Series{{Name: "formula", X: fx, Y: fE}, {Name: "measured (mean)", X: mx, Y: mE, Points: true}},
		},
	}
	return out, nil
}
