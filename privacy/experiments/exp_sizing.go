package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
)

// The bitcoinj sizing check (Nick 2015, blog and thesis): a fresh
// bitcoinj wallet of 271 keys, each inserted as public key and hash160,
// in a filter sized for M = 642 elements at p = 0.0005. Nick published
// the effective rate f = 0.000146, f^2 = 0.0000000213 for the both-forms
// test, 1.19 expected false positives over 56 M pubkeys (blog) and 1.27
// over 60.88 M (thesis). The filter's 1,269 bytes and k = 10 are computed
// from BIP37's formulas, not published.
const (
	sizingKeys     = 271
	sizingCapacity = 642
	sizingElements = 2 * sizingKeys
	sizingFPRate   = BitcoinjFPRate
	// sizingUniverse is the default number of synthetic pubkeys: the
	// thesis's 60.88 M pubkeys revealed on chain.
	sizingUniverse = 60_880_000
	// sizingBlogUniverse is the blog's 56 M pubkeys.
	sizingBlogUniverse = 56_000_000
	// sizingChartStep is the fill step of the f(m) chart.
	sizingChartStep = 6
	// key streams of the experiments, so their wallets never collide.
	sizingKeyStream = 101
)

// Published figures of the sizing check (Nick 2015).
const (
	litSizingF  = 1.46e-4 // blog: fp = 0.000146
	litSizingF2 = 2.13e-8 // blog: fp' = 0.0000000213
	// litSizingExpectedThesis is the thesis's 1.27 expected both-forms
	// false positives over 60.88 M pubkeys; litSizingExpectedBlog the
	// blog's 1.19 over 56 M.
	litSizingExpectedThesis = 1.27
	litSizingExpectedBlog   = 1.19
)

// runSizing builds the bitcoinj filter and measures its false-positive
// rates by streaming synthetic candidates through it.
func runSizing(ctx context.Context, cfg Config) (*Result, error) {
	u := orDefault(cfg.Universe, sizingUniverse)
	rng := rand.New(rand.NewPCG(cfg.Seed, sizingKeyStream))
	size, k := bip37.Params(sizingCapacity, sizingFPRate)
	nBits := uint64(size) * bitsPerByte
	f, err := bip37.NewFilter(sizingCapacity, sizingFPRate, rng.Uint32(), bip37.UpdateNone)
	if err != nil {
		return nil, err
	}
	// The chart follows the filter's exact rate as it fills.
	var fillX, exactY, formulaY []float64
	for i := range sizingKeys {
		key := synthKey(cfg.Seed, sizingKeyStream, uint64(i))
		f.Add(key.PubKey)
		f.Add(key.Hash160)
		if m := 2 * (i + 1); m%sizingChartStep == 0 || i == sizingKeys-1 {
			fillX = append(fillX, float64(m))
			exactY = append(exactY, f.CurrentFPRate())
			formulaY = append(formulaY, bip37.FalsePositiveRate(nBits, k, float64(m)))
		}
	}
	fFormula := bip37.FalsePositiveRate(nBits, k, sizingElements)

	single, err := privacy.Scan(ctx, privacy.Stream(privacy.Synthetic{Seed: cfg.Seed, Count: u}), privacy.ScanConfig{Filters: []*bip37.Filter{f}, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	both, err := privacy.Scan(ctx, privacy.Stream(privacy.Synthetic{Seed: cfg.Seed + 1, Count: u, PubKeys: true}), privacy.ScanConfig{Filters: []*bip37.Filter{f}, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	uf := float64(u)
	c1, c2 := single.AnyCounts[0], both.AllCounts[0]
	lo1, hi1 := PoissonInterval(c1, Z95)
	lo2, hi2 := PoissonInterval(c2, Z95)
	res := &Result{
		Name:  "bitcoinj-sizing",
		Title: "bitcoinj filter sizing and the both-forms test",
		Params: []Param{
			param("keys", sizingKeys), param("elements", sizingElements), param("capacity", sizingCapacity),
			param("fp_target", sizingFPRate), param("universe", u), param("seed", cfg.Seed),
		},
		Rows: []Comparison{
			compare("filter bytes", float64(f.Size()), float64(size), nil, srcBIP37),
			compare("hash functions k", float64(f.HashFuncs()), float64(k), nil, srcBIP37),
			compare("estimated elements m^ (from bits set)", f.EstimatedElements(), sizingElements, nil, srcFormula).
				withNote("what an observer infers from the filter alone"),
			compare("exact rate (X/n)^k of this filter", f.CurrentFPRate(), fFormula, literature(litSizingF), srcNickBlog),
			compare("f(542) measured over synthetic candidates", float64(c1)/uf, fFormula, literature(litSizingF), srcNickBlog).
				withInterval(lo1/uf, hi1/uf).withNote(fmt.Sprintf("%d of %d candidates matched", c1, u)),
			compare("f^2 measured (pubkey AND hash160 match)", float64(c2)/uf, fFormula*fFormula, literature(litSizingF2), srcNickBlog).
				withInterval(lo2/uf, hi2/uf).withNote(fmt.Sprintf("the formula's f^2 is %.3g", fFormula*fFormula)),
			bothFormsRow(c2, u, fFormula, lo2, hi2),
			compare("both-forms false positives over 56 M pubkeys (measured f^2 x 56 M)", float64(c2)/uf*sizingBlogUniverse,
				fFormula*fFormula*sizingBlogUniverse, literature(litSizingExpectedBlog), srcNickBlog).
				withNote("the measured rate scaled to the blog's universe"),
		},
		Charts: []privacy.Chart{{
			Title: "bitcoinj filter (1,269 bytes, k=10): false-positive rate as it fills", XLabel: "elements inserted m",
			YLabel: "false-positive rate", LogY: true,
			Series: []privacy.Series{
				{Name: "formula f(m)", X: fillX, Y: formulaY},
				{Name: "measured (X/n)^k", X: fillX, Y: exactY, Points: true},
			},
		}},
	}
	return res, nil
}

// bothFormsRow compares the both-forms false positives among u synthetic
// pubkeys with the formula, and with Nick's thesis figure when u is the
// thesis's 60.88 M.
func bothFormsRow(c2, u uint64, f, lo, hi float64) Comparison {
	var lit *float64
	source := srcFormula
	if u == sizingUniverse {
		lit, source = literature(litSizingExpectedThesis), srcNick+" (1.27 over 60.88 M pubkeys)"
	}
	return compare(fmt.Sprintf("both-forms false positives among %d pubkeys", u), float64(c2), f*f*float64(u), lit, source).
		withInterval(lo, hi).withNote("a Poisson count")
}
