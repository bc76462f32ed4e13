package experiments

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
)

// The bitcoinj sizing check (Nick 2015, blog and thesis): a fresh
// bitcoinj wallet of 271 keys, each inserted as public key and hash160,
// in a filter sized for M = 642 elements at p = 0.0005. Nick published
// the effective rate f = 0.000146 and f^2 = 0.0000000213 for the
// both-forms test with 1.19 expected false positives over 56 M pubkeys
// (blog), and 0.0146 % and 1.27 over |P| = 60e6 (thesis, pp. 10-11). The
// filter's 1,269 bytes and k = 10 are computed from BIP37's formulas, not
// published.
//
// Measured: the rate of sizingTrials filters (one per tweak and key set)
// as built, (X/n)^k, against the formula f(542); the first filter's rate
// over synthetic candidates against its own (X/n)^k (the hashes behave as
// the model assumes), and its both-forms rate against (X/n)^2k.
const (
	sizingKeys     = 271
	sizingCapacity = 642
	sizingElements = 2 * sizingKeys
	sizingFPRate   = BitcoinjFPRate
	// sizingUniverse is the default number of synthetic hash160s the
	// first filter's single-form rate is measured over.
	sizingUniverse = 60_000_000
	// sizingBothUniverse is the default number of synthetic pubkeys
	// (two forms each) the both-forms rate is measured over: the test
	// tells f^2 (about 1.3 expected matches) from f (the two forms
	// matching together: about 9,000).
	sizingBothUniverse = 60_000_000
	// sizingTrials is the filters whose rates as built are averaged.
	sizingTrials = 200
	// nickThesisUniverse is the |P| = 60e6 Nick computed 8,760 and 1.27
	// with (thesis p. 11); his data set held 60.88 M pubkeys (p. 13).
	nickThesisUniverse = 60e6
	// sizingBlogUniverse is the blog's 56 M pubkeys.
	sizingBlogUniverse = 56e6
	// sizingChartStep is the fill step of the f(m) chart.
	sizingChartStep = 6
	// key streams of the experiments, so their wallets never collide.
	sizingKeyStream = 101
)

// Published figures of the sizing check (Nick 2015).
const (
	litSizingF      = 1.46e-4 // blog: fp = 0.000146; thesis p. 10: 0.0146 %
	litSizingF2     = 2.13e-8 // blog: fp' = 0.0000000213
	litSizingFP8760 = 8760    // thesis p. 11: 0.0146 % x 60e6
	// litSizingExpectedThesis is the thesis's 1.27 both-forms false
	// positives over |P| = 60e6 (p. 11); litSizingExpectedBlog the
	// blog's 1.19 over 56 M.
	litSizingExpectedThesis = 1.27
	litSizingExpectedBlog   = 1.19
)

// sizingFilter builds trial t's bitcoinj filter of 271 keys.
func sizingFilter(seed uint64, t int, tweak uint32) (*bip37.Filter, error) {
	f, err := bip37.NewFilter(sizingCapacity, sizingFPRate, tweak, bip37.UpdateNone)
	if err != nil {
		return nil, err
	}
	for i := range sizingKeys {
		key := sizingKey(seed, t, i)
		f.Add(key.PubKey)
		f.Add(key.Hash160)
	}
	return f, nil
}

// sizingKey is key i of trial t's wallet.
func sizingKey(seed uint64, t, i int) Key {
	return synthKey(seed, sizingKeyStream<<32|uint64(t), uint64(i))
}

// runSizing builds the bitcoinj filters and measures their rates.
func runSizing(ctx context.Context, cfg Config) (*Result, error) {
	u := orDefault(cfg.Universe, sizingUniverse)
	u2 := uint64(sizingBothUniverse)
	if cfg.Universe != 0 {
		u2 = cfg.Universe
	}
	trials := orDefault(cfg.Trials, sizingTrials)
	rng := rand.New(rand.NewPCG(cfg.Seed, sizingKeyStream))
	size, k := bip37.Params(sizingCapacity, sizingFPRate)
	nBits := uint64(size) * bitsPerByte
	fFormula := bip37.FalsePositiveRate(nBits, k, sizingElements)
	var filters []*bip37.Filter
	rates, mhat, ones := make([]float64, trials), make([]float64, trials), make([]float64, trials)
	for t := range trials {
		f, err := sizingFilter(cfg.Seed, t, rng.Uint32())
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
		rates[t], mhat[t], ones[t] = f.CurrentFPRate(), f.EstimatedElements(), 1
	}
	first := filters[0]
	// The chart follows the first filter's exact rate as it fills.
	chartFilter, err := bip37.NewFilter(sizingCapacity, sizingFPRate, first.Tweak(), bip37.UpdateNone)
	if err != nil {
		return nil, err
	}
	var fillX, exactY, formulaY []float64
	for i := range sizingKeys {
		key := sizingKey(cfg.Seed, 0, i)
		chartFilter.Add(key.PubKey)
		chartFilter.Add(key.Hash160)
		if m := 2 * (i + 1); m%sizingChartStep == 0 || i == sizingKeys-1 {
			fillX = append(fillX, float64(m))
			exactY = append(exactY, chartFilter.CurrentFPRate())
			formulaY = append(formulaY, bip37.FalsePositiveRate(nBits, k, float64(m)))
		}
	}
	single, err := scan.Run(ctx, element.Stream(scan.Synthetic{Seed: cfg.Seed, Count: u}), scan.Config{Filters: []*bip37.Filter{first}, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	both, err := scan.Run(ctx, element.Stream(scan.Synthetic{Seed: cfg.Seed + 1, Count: u2, PubKeys: true}), scan.Config{Filters: []*bip37.Filter{first}, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	c1, c2 := single.AnyCounts[0], both.AllCounts[0]
	f0 := first.CurrentFPRate()
	res := &Result{
		Name:  "bitcoinj-sizing",
		Title: "bitcoinj filter sizing and the both-forms test",
		Params: []Param{
			param("keys", sizingKeys), param("elements", sizingElements), param("capacity", sizingCapacity),
			param("fp_target", sizingFPRate), param("filters", trials), param("universe_hash160", u), param("universe_pubkeys", u2),
		},
		Rows: []Comparison{
			deterministicRow("filter bytes", float64(first.Size())).withFormula(float64(size)).withSource(srcBIP37),
			deterministicRow("hash functions k", float64(first.HashFuncs())).withFormula(float64(k)).withSource(srcBIP37),
			clusterMeanRow(fmt.Sprintf("rate as built (X/n)^k, mean over %d filters", trials), rates, ones, false, "filters (a tweak and key set each)").
				withFormula(fFormula).withPublished(litSizingF, srcNickBlog+"; 0.0146 % in "+srcNickPage("p. 10")).
				test(altFactor(1.1)),
			clusterMeanRow(fmt.Sprintf("elements m^ estimated from the bits, mean over %d filters", trials), mhat, ones, false, "filters").
				withFormula(sizingElements).withNote("what an observer infers from the filter alone").test(altFactor(1.1)),
			binomialRow("first filter: single-form rate over synthetic hash160s", int(c1), int(u)).withFormula(f0).
				withNote(fmt.Sprintf("%d of %d matched; formula: this filter's own (X/n)^k", c1, u)).test(altFactor(1.1)),
			binomialRow("first filter: both-forms rate (pubkey AND hash160) over synthetic pubkeys", int(c2), int(u2)).withFormula(f0 * f0).
				withNote(fmt.Sprintf("%d of %d matched; formula: this filter's (X/n)^2k", c2, u2)).
				test(altValue(f0, "the two forms matching together (rate f, not f^2)")),
			computedRow("formula f(542)", fFormula).withPublished(litSizingF, srcNickBlog),
			computedRow("formula f(542)^2", fFormula*fFormula).withPublished(litSizingF2, srcNickBlog).
				withNote("Nick squared the rounded 0.000146"),
			computedRow("formula f(542) x 60e6 single-form false positives", fFormula*nickThesisUniverse).
				withPublished(litSizingFP8760, srcNickPage("p. 11")+" (0.0146 % x 60e6)"),
			computedRow("formula f(542)^2 x 60e6 both-forms false positives", fFormula*fFormula*nickThesisUniverse).
				withPublished(litSizingExpectedThesis, srcNickPage("p. 11")+" (|P| = 60e6; his data set held 60.88 M pubkeys, p. 13)"),
			computedRow("formula f(542)^2 x 56e6 both-forms false positives", fFormula*fFormula*sizingBlogUniverse).
				withPublished(litSizingExpectedBlog, srcNickBlog+" (56 M pubkeys)"),
		},
		Charts: []privacy.Chart{{
			Title: "bitcoinj filter (1,269 bytes, k=10): false-positive rate as it fills", XLabel: "elements inserted m",
			YLabel: "false-positive rate", LogY: true,
			Series: []privacy.Series{
				{Name: "formula f(m)", X: fillX, Y: formulaY, Group: "f"},
				{Name: "one filter as built, (X/n)^k", X: fillX, Y: exactY, Points: true, Group: "f"},
				{Name: "f(542) = 0.000146", X: []float64{sizingElements}, Y: []float64{litSizingF}, Reference: true, Source: "Nick 2015, blog"},
			},
		}},
	}
	return res, nil
}
