package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// The rappor experiment: RAPPOR (Erlingsson, Pihur,
// Korolova, CCS 2014; its definitions in docs/RESEARCH.md, Sources),
// applied to BIP37.
//
// (a) A wallet's filter B (its elements' bits) goes out as RAPPOR's
// responses: the permanent randomized response B' sets each bit to 1 with
// probability f/2, to 0 with f/2, and keeps it otherwise, memoized per
// wallet; the instantaneous response S, drawn anew for every filterload,
// reports 1 with probability q where B' is 1 and p where it is 0. A
// cleared bit makes the peer drop the wallet's own payments: the miss
// rate is measured, with the permanent response's epsilon = 2h ln((1 -
// f/2) / (f/2)) for its h = k hash functions. Then the one-sided variant
// a wallet can use (B OR M, M's bits set with probability f/2, memoized
// per wallet like B', never drawn fresh per filter): its bandwidth and the
// precision left after the intersection of reloads, against the same
// noise drawn fresh per filterload and against persisted decoys of the
// same bandwidth.
//
// (b) The aggregator (rappor_aggregate.go): a node collecting many
// wallets' filters decodes which candidate scripts the population watches
// by RAPPOR's regression.
const (
	rapporWallets  = 100
	rapporKeys     = 20
	rapporReloads  = 4
	rapporUniverse = 200_000
	rapporStream   = 6000
	rapporRate     = 1e-4
)

// rapporSetting is one (f, p, q) of the two-sided responses.
type rapporSetting struct{ f, p, q float64 }

// rapporSettings are the two-sided settings measured: f = 0.5, p = 0.5, q
// = 0.75 (chosen here, in RAPPOR's range; not read from the paper's
// tables), and permanent responses alone (p = 0, q = 1) at smaller f.
var rapporSettings = []rapporSetting{{0.5, 0.5, 0.75}, {0.1, 0, 1}, {0.02, 0, 1}}

// rapporOneSided are the one-sided noise levels f (bits set with f/2):
// below 0.5 the noise adds almost no match to a filter of 20 keys at k =
// 13 (a fill of 0.2 grows to 0.24 at f = 0.1, and 0.24^13 is 1e-8).
var rapporOneSided = []float64{0.5, 1}

// rapporEpsilon is the permanent response's epsilon for h hash functions.
func rapporEpsilon(f float64, h uint32) float64 {
	return 2 * float64(h) * math.Log((1-f/2)/(f/2))
}

// rapporWalletEpsilon is the permanent response's epsilon for a wallet
// of keys values in one filter: the per-key epsilon times the keys
// (basic composition; each key is one value of RAPPOR's).
func rapporWalletEpsilon(f float64, h uint32, keys int) float64 {
	return float64(keys) * rapporEpsilon(f, h)
}

// rapporWallet is one wallet's elements and filter.
type rapporWallet struct {
	els   [][]byte
	tweak uint32
	base  *bip37.Filter
}

// noisy returns a copy of bits with each bit set with probability
// set, cleared with probability clear, kept otherwise.
func noisy(rng *rand.Rand, bits []byte, set, clear float64) []byte {
	out := append([]byte(nil), bits...)
	for i := range len(out) * bitsPerByte {
		u := rng.Float64()
		switch {
		case u < set:
			out[i/bitsPerByte] |= 1 << (i % bitsPerByte)
		case u < set+clear:
			out[i/bitsPerByte] &^= 1 << (i % bitsPerByte)
		}
	}
	return out
}

// instantaneous draws S from B': 1 with probability q where B' is 1, p
// where it is 0.
func instantaneous(rng *rand.Rand, bprime []byte, p, q float64) []byte {
	out := make([]byte, len(bprime))
	for i := range len(out) * bitsPerByte {
		one := bprime[i/bitsPerByte]&(1<<(i%bitsPerByte)) != 0
		prob := p
		if one {
			prob = q
		}
		if rng.Float64() < prob {
			out[i/bitsPerByte] |= 1 << (i % bitsPerByte)
		}
	}
	return out
}

// distinctPositions counts the distinct bits an element sets.
func distinctPositions(f *bip37.Filter, e []byte) int {
	seen := map[uint32]bool{}
	for _, p := range f.BitPositions(e) {
		seen[p] = true
	}
	return len(seen)
}

// runRappor measures both parts.
func runRappor(ctx context.Context, cfg Config) (*Result, error) {
	wallets := orDefault(cfg.Wallets, rapporWallets)
	u := orDefault(cfg.Universe, rapporUniverse)
	reloads := orDefault(cfg.Filters, rapporReloads)
	if reloads < 2 {
		return nil, fmt.Errorf("%w: rappor needs 2 reloads to intersect", ErrBadConfig)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, rapporStream))
	size, k := filterpolicy.FilterSize(rapporKeys, rapporRate)
	ws := make([]rapporWallet, wallets)
	for w := range ws {
		for i := range rapporKeys {
			ws[w].els = append(ws[w].els, synthKey(cfg.Seed, rapporStream<<32|uint64(w), uint64(i)).Hash160)
		}
		ws[w].tweak = rng.Uint32()
		f, err := bip37.NewFilterFromBits(make([]byte, size), k, ws[w].tweak, bip37.UpdateAll)
		if err != nil {
			return nil, err
		}
		for _, e := range ws[w].els {
			f.Add(e)
		}
		ws[w].base = f
	}
	out := &Result{
		Name:  "rappor",
		Title: "RAPPOR's responses on BIP37 filters: missed payments, epsilon, one-sided noise, and the aggregator's decoding",
		Params: []Param{
			param("wallets", wallets), param("keys", rapporKeys), param("filter_bytes", size), param("hash_funcs", k),
			param("target_rate", rapporRate), param("reloads", reloads), param("universe", u),
		},
	}
	base := ws[0].base
	baseRates := make([]float64, wallets)
	for w := range ws {
		baseRates[w] = ws[w].base.CurrentFPRate()
	}
	nBits := float64(base.NumBits())
	// The formulas average over the wallets' own fills: one wallet's
	// fill, raised to the k-th power, is no estimate of another's rate.
	fills := make([]float64, wallets)
	for w := range ws {
		fills[w] = float64(ws[w].base.BitsSet()) / nBits
	}
	// meanRate is the mean over wallets of E[(X/n)^k], X the bits set
	// when each of the wallet's set bits is reported 1 with probability
	// a and each clear bit with probability b: exact given the wallets'
	// filters (the rate at the mean fill misses the noise's own spread,
	// 7 % at k = 13).
	meanRate := func(a, b float64) float64 {
		var s float64
		for _, fill := range fills {
			n1 := int(math.Round(fill * nBits))
			s += expectedPowFill(n1, int(nBits)-n1, a, b, int(k))
		}
		return s / float64(len(fills))
	}
	var filters []*bip37.Filter
	add := func(bits []byte, tweak uint32) (int, error) {
		f, err := bip37.NewFilterFromBits(bits, k, tweak, bip37.UpdateAll)
		if err != nil {
			return 0, err
		}
		filters = append(filters, f)
		return len(filters) - 1, nil
	}
	// (a) two-sided: one S per reload from a memoized B'.
	type twoSided struct {
		idx        [][]int // [wallet][reload]
		miss, tot  []float64
		expectMiss float64
	}
	two := make([]twoSided, len(rapporSettings))
	for si, st := range rapporSettings {
		t := &two[si]
		qStar := (1-st.f/2)*st.q + st.f/2*st.p
		for w := range ws {
			bprime := noisy(rng, ws[w].base.Bits(), st.f/2, st.f/2)
			var row []int
			var miss, tot float64
			for range reloads {
				s := instantaneous(rng, bprime, st.p, st.q)
				i, err := add(s, ws[w].tweak)
				if err != nil {
					return nil, err
				}
				row = append(row, i)
				for _, e := range ws[w].els {
					tot++
					if !filters[i].Matches(e) {
						miss++
					}
					t.expectMiss += 1 - math.Pow(qStar, float64(distinctPositions(filters[i], e)))
				}
			}
			t.idx = append(t.idx, row)
			t.miss, t.tot = append(t.miss, miss), append(t.tot, tot)
		}
		t.expectMiss /= sumOf(t.tot)
	}
	// One-sided: memoized, fresh per reload, and persisted decoys of the
	// same bandwidth.
	type oneSided struct {
		memo, fresh, decoy [][]int
		decoys             int
	}
	one := make([]oneSided, len(rapporOneSided))
	for oi, f := range rapporOneSided {
		o := &one[oi]
		o.decoys = int(math.Round(float64(u) * (meanRate(1, f/2) - meanRate(1, 0))))
		for w := range ws {
			mask := noisy(rng, ws[w].base.Bits(), f/2, 0)
			var memo, fresh, dec []int
			dsize, dk := filterpolicy.FilterSize(rapporKeys+o.decoys, rapporRate)
			df, err := bip37.NewFilterFromBits(make([]byte, dsize), dk, ws[w].tweak, bip37.UpdateAll)
			if err != nil {
				return nil, err
			}
			for _, e := range ws[w].els {
				df.Add(e)
			}
			var c element.Candidate
			syn := scan.Synthetic{Seed: cfg.Seed, Count: u}
			for range o.decoys {
				syn.Fill(uint64(rng.IntN(int(u))), &c)
				df.Add(c.Forms[0])
			}
			for range reloads {
				i, err := add(append([]byte(nil), mask...), ws[w].tweak)
				if err != nil {
					return nil, err
				}
				memo = append(memo, i)
				if i, err = add(noisy(rng, ws[w].base.Bits(), f/2, 0), ws[w].tweak); err != nil {
					return nil, err
				}
				fresh = append(fresh, i)
				filters = append(filters, df)
				dec = append(dec, len(filters)-1)
			}
			o.memo, o.fresh, o.decoy = append(o.memo, memo), append(o.fresh, fresh), append(o.decoy, dec)
		}
	}
	hits, err := scanChunks(ctx, scan.Synthetic{Seed: cfg.Seed, Count: u}, scan.Config{Filters: filters, Workers: cfg.Workers}, "scan", cfg.progress)
	if err != nil {
		return nil, err
	}
	matchCount := make([]float64, len(filters))
	for _, h := range hits {
		for i := range filters {
			if h.Any.Has(i) {
				matchCount[i]++
			}
		}
	}
	// allOf counts the candidates matching every filter of idx.
	allOf := func(idx []int) float64 {
		var n float64
		for _, h := range hits {
			ok := true
			for _, i := range idx {
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
	uf := float64(u)
	ones := make([]float64, wallets)
	uw := make([]float64, wallets)
	for w := range ones {
		ones[w], uw[w] = 1, uf
	}
	const unit = "wallets"
	out.Rows = append(out.Rows,
		clusterPropRow("no noise: rate as loaded (X/n)^k", baseRates, ones, unit).
			withFormula(bip37.FalsePositiveRate(base.NumBits(), k, rapporKeys)))
	var chartF, chartMiss, chartMissLo, chartMissHi, chartMissF, chartEps []float64
	for si, st := range rapporSettings {
		t := two[si]
		pre := fmt.Sprintf("two-sided f=%g p=%g q=%g: ", st.f, st.p, st.q)
		var fp []float64
		for w := range ws {
			var s float64
			for _, i := range t.idx[w] {
				s += matchCount[i]
			}
			fp = append(fp, s)
		}
		fpr := meanRate((1-st.f/2)*st.q+st.f/2*st.p, st.f/2*st.q+(1-st.f/2)*st.p)
		reloadsU := make([]float64, wallets)
		for w := range reloadsU {
			reloadsU[w] = float64(reloads) * uf
		}
		miss := clusterPropRow(pre+"the wallet's own elements missed (false negatives)", t.miss, t.tot, unit).
			withFormula(t.expectMiss).withSource("1 - q*^d, q* = (1 - f/2) q + (f/2) p, d the element's distinct bits").test(altShift(0.05))
		out.Rows = append(out.Rows,
			computedRow(pre+fmt.Sprintf("epsilon of the permanent response per key, 2h ln((1 - f/2)/(f/2)), h = k = %d", k), rapporEpsilon(st.f, k)).
				withNote("RAPPOR's formula for h hash functions (docs/RESEARCH.md, Sources): one value, one key's element"),
			computedRow(pre+fmt.Sprintf("epsilon for the whole wallet of %d keys (per key x keys)", rapporKeys), rapporWalletEpsilon(st.f, k, rapporKeys)).
				withNote("basic composition over the keys: each key's element is one value in the same filter"),
			miss,
			clusterPropRow(pre+"false-positive rate of the filters sent", fp, reloadsU, unit).
				withFormula(fpr).withSource("mean over wallets of E[(X/n)^k], each bit reported as S reports it").test(altFactor(1.5)),
			computedRow(pre+"bandwidth: false-positive transactions per 1,000", 1000*stats.AnyFormRate(fpr, elementsPerTx)).
				withNote(fmt.Sprintf("%d elements tested per transaction", elementsPerTx)),
		)
		chartF = append(chartF, st.f)
		chartMiss, chartMissLo, chartMissHi = append(chartMiss, miss.Measured), append(chartMissLo, miss.Interval[0]), append(chartMissHi, miss.Interval[1])
		chartMissF, chartEps = append(chartMissF, t.expectMiss), append(chartEps, rapporEpsilon(st.f, k))
	}
	precChart := privacy.Chart{Title: fmt.Sprintf("one-sided noise: the adversary's precision after intersecting %d reloads (measured here)", reloads),
		XLabel: "noise f (each bit set with f/2)", YLabel: "precision",
		Notes: []string{fmt.Sprintf("%d wallets of %d keys, %d synthetic candidates; decoys: as many random candidates as the noise adds matches", wallets, rapporKeys, u)}}
	// Two noise levels: categories, not a continuous axis left empty
	// between them.
	for _, f := range rapporOneSided {
		precChart.XTicks = append(precChart.XTicks, privacy.Tick{Value: f, Label: fmt.Sprintf("f = %g", f)})
	}
	series := map[string]*privacy.Series{}
	for _, name := range []string{"memoized (like B')", "fresh per filterload", "persisted decoys, same bandwidth"} {
		series[name] = &privacy.Series{Name: name, Points: true, Group: name}
	}
	for oi, f := range rapporOneSided {
		o := one[oi]
		pre := fmt.Sprintf("one-sided f=%g: ", f)
		fpr := meanRate(1, f/2)
		var fp, fpMemo, fpFresh, fpDecoy, prec, precFresh, precDecoy []float64
		n := float64(rapporKeys)
		for w := range ws {
			fp = append(fp, matchCount[o.memo[w][0]])
			m, f, d := allOf(o.memo[w]), allOf(o.fresh[w]), allOf(o.decoy[w])
			fpMemo, fpFresh, fpDecoy = append(fpMemo, m), append(fpFresh, f), append(fpDecoy, d)
			prec, precFresh, precDecoy = append(prec, n/(n+m)), append(precFresh, n/(n+f)), append(precDecoy, n/(n+d))
		}
		interFresh := meanRate(1, math.Pow(f/2, float64(reloads)))
		inter := fmt.Sprintf("left after intersecting the %d reloads", reloads)
		pm := clusterPropRow(pre+"precision "+inter+", memoized noise", prec, ones, unit)
		pf := clusterPropRow(pre+"precision "+inter+", noise fresh per filterload", precFresh, ones, unit)
		pd := clusterPropRow(pre+fmt.Sprintf("precision %s, %d persisted decoys", inter, o.decoys), precDecoy, ones, unit)
		out.Rows = append(out.Rows,
			Comparison{Quantity: pre + "epsilon", Measured: math.Inf(1), Display: "unbounded: a set bit of B is never cleared", IntervalKind: KindComputed},
			binomialRow(pre+"the wallet's own elements missed", 0, wallets*reloads*rapporKeys).withNote("bits are only ever set: none can be missed"),
			clusterPropRow(pre+"false-positive rate of one filter sent", fp, uw, unit).withFormula(fpr).withSource("mean over wallets of E[(X/n)^k], X the bits of B OR M").test(altFactor(1.5)),
			computedRow(pre+"bandwidth: false-positive transactions per 1,000", 1000*stats.AnyFormRate(fpr, elementsPerTx)),
			clusterMeanRow(pre+"false positives "+inter+", memoized noise (per wallet)", fpMemo, ones, true, unit).
				withFormula(uf*fpr).withSource("|A| E[(X/n)^k], mean over wallets: the reloads repeat one filter").test(altFactor(1.5)),
			clusterMeanRow(pre+"false positives "+inter+", noise fresh per filterload (per wallet)", fpFresh, ones, true, unit).
				withFormula(uf*interFresh).withSource("|A| E[(X/n)^k], X the bits of B and of all r masks").test(altFactor(2)),
			clusterMeanRow(pre+fmt.Sprintf("false positives %s, %d persisted decoys (per wallet)", inter, o.decoys), fpDecoy, ones, true, unit).
				withFormula(float64(o.decoys)).withSource("the decoys: persisted, they survive").test(altFactor(1.5)),
			pm.withNote("N/(N+F) per wallet"), pf, pd,
		)
		for name, r := range map[string]Comparison{"memoized (like B')": pm, "fresh per filterload": pf, "persisted decoys, same bandwidth": pd} {
			s := series[name]
			s.X, s.Y = append(s.X, f), append(s.Y, r.Measured)
			s.YLo, s.YHi = append(s.YLo, r.Interval[0]), append(s.YHi, r.Interval[1])
		}
	}
	agg, aggCharts, err := rapporAggregate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	out.Rows = append(out.Rows, agg...)
	for _, name := range []string{"memoized (like B')", "fresh per filterload", "persisted decoys, same bandwidth"} {
		precChart.Series = append(precChart.Series, *series[name])
	}
	missChart := privacy.Chart{Title: "two-sided responses: the wallet's own payments missed, and epsilon", XLabel: "f", YLabel: "share of the wallet's elements missed",
		LogX: true, Notes: []string{fmt.Sprintf("k = %d hash functions; epsilon = 2k ln((1 - f/2)/(f/2)): %s", k, epsList(chartF, chartEps))},
		Series: []privacy.Series{
			{Name: "formula 1 - q*^d", X: chartF, Y: chartMissF, Group: "miss"},
			{Name: "measured (95 % cluster-binomial over wallets)", X: chartF, Y: chartMiss, YLo: chartMissLo, YHi: chartMissHi, Points: true, Group: "miss"},
		}}
	out.Charts = append([]privacy.Chart{missChart, precChart}, aggCharts...)
	return out, nil
}

// expectedPowFill returns E[(X/n)^k] for X = Bin(n1, a) + Bin(n0, b), n
// = n1 + n0: the expected rate of a filter whose n1 set bits are kept
// with probability a and n0 clear bits set with probability b.
func expectedPowFill(n1, n0 int, a, b float64, k int) float64 {
	pmf := func(n int, p float64) []float64 {
		out := make([]float64, n+1)
		for x := range out {
			lg1, _ := math.Lgamma(float64(n + 1))
			lg2, _ := math.Lgamma(float64(x + 1))
			lg3, _ := math.Lgamma(float64(n - x + 1))
			switch {
			case p <= 0:
				if x == 0 {
					out[x] = 1
				}
			case p >= 1:
				if x == n {
					out[x] = 1
				}
			default:
				out[x] = math.Exp(lg1 - lg2 - lg3 + float64(x)*math.Log(p) + float64(n-x)*math.Log1p(-p))
			}
		}
		return out
	}
	p1, p0 := pmf(n1, a), pmf(n0, b)
	n := float64(n1 + n0)
	var e float64
	for x1, q1 := range p1 {
		if q1 < 1e-300 {
			continue
		}
		for x0, q0 := range p0 {
			if q0 < 1e-300 {
				continue
			}
			e += q1 * q0 * math.Pow(float64(x1+x0)/n, float64(k))
		}
	}
	return e
}

// epsList formats f and epsilon pairs.
func epsList(fs, eps []float64) string {
	var s string
	for i := range fs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("f=%g: %.3g", fs[i], eps[i])
	}
	return s
}
