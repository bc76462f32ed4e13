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
	"github.com/bloomwatch/bloomwatch/privacy/joint"
	"github.com/bloomwatch/bloomwatch/privacy/scan"
)

// The tweak-policy experiment: a wallet behind a proxy
// with a circuit per peer. One tweak persisted across all peers is sent in
// clear in every filterload, so colluding peers link the wallet's filters
// by it whatever the circuits; a tweak per peer hides that, but makes the
// filters independent, so once linked they intersect geometrically. Linking
// needs no tweak: the wallet's elements are in every filter, so two of its
// filters share at least its on-chain candidates, where two unrelated
// filters share only chance matches (about |A| f^2). Both policies are
// measured against linking (by tweak, by match-set overlap) and against
// the intersection of the peers' filters.
const (
	tweakWallets  = 10
	tweakPeers    = 6
	tweakUniverse = 300_000
	tweakStream   = 5000
)

// tweakRates and tweakKeys are the settings swept: bloomwatch's rate and
// looser ones, up to rates whose chance overlaps in this universe reach
// those of mainnet at moderate rates (the overlap test's power depends on
// the shared keys against sqrt(|A| f^2) only), small and larger wallets.
var (
	tweakRates = []float64{filterpolicy.DefaultFPRate, 1e-2, 0.1, 0.3}
	tweakKeys  = []int{10, 50}
)

// tweakCase is one (rate, keys) setting's outcome.
type tweakCase struct {
	rate                     float64
	keys                     int
	sameLinked, samePairs    int
	wrongLinked, wrongPairs  int
	wrongExpected            float64
	chance                   float64 // mean chance overlap |A| f_i f_j
	oneFP, perFP             uint64  // false positives left, summed over wallets
	oneExpected, perExpected float64
	equalTweaks, tweakPairs  int
	// sameByWallet and pairsByWallet split sameLinked and samePairs by
	// wallet (the clusters of their interval).
	sameByWallet, pairsByWallet []float64
}

// runTweakPolicy measures both policies at every setting.
func runTweakPolicy(ctx context.Context, cfg Config) (*Result, error) {
	wallets := orDefault(cfg.Wallets, tweakWallets)
	peers := orDefault(cfg.Peers, tweakPeers)
	u := orDefault(cfg.Universe, tweakUniverse)
	rates, keys := tweakRates, tweakKeys
	if cfg.FPRate != 0 {
		rates = []float64{cfg.FPRate}
	}
	if cfg.Keys != 0 {
		keys = []int{cfg.Keys}
	}
	if wallets < 2 || peers < 2 {
		return nil, fmt.Errorf("%w: the tweak policy needs 2 wallets and 2 peers", ErrBadConfig)
	}
	out := &Result{
		Name:  "tweak-policy",
		Title: "one persisted tweak vs a tweak per peer behind a proxy: linking by tweak and by overlap, and intersection",
		Params: []Param{
			param("wallets", wallets), param("peers", peers), param("universe", u), param("rates", fmt.Sprint(rates)),
			param("keys", fmt.Sprint(keys)),
		},
	}
	var cases []tweakCase
	step := 0
	for _, rate := range rates {
		for _, n := range keys {
			cfg.progress("settings", step, len(rates)*len(keys))
			step++
			tc, err := tweakSetting(ctx, cfg, rate, n, wallets, peers, u)
			if err != nil {
				return nil, err
			}
			cases = append(cases, tc)
			tweakRows(out, tc, peers, u, cfg.HashFuncs)
		}
	}
	cfg.progress("settings", step, step)
	tweakMainnet(out, peers)
	out.Charts = tweakCharts(cases, peers, u)
	return out, nil
}

// tweakFilters is one setting's filters: each wallet's one-tweak filter
// and its per-peer filters, and the wallets' keys.
type tweakFilters struct {
	filters []*bip37.Filter
	one     []int   // the one-tweak filter of each wallet
	per     [][]int // the per-peer filters of each wallet
	truth   []element.Candidate
	owner   map[string]int // wallet of each key
}

// buildTweakFilters builds every wallet's filters under both policies.
func buildTweakFilters(cfg Config, rate float64, n, wallets, peers int) (tweakFilters, error) {
	rng := rand.New(rand.NewPCG(cfg.Seed, tweakStream+uint64(n)))
	tf := tweakFilters{one: make([]int, wallets), per: make([][]int, wallets), owner: map[string]int{}}
	for w := range wallets {
		var els [][]byte
		for i := range n {
			k := synthKey(cfg.Seed, tweakStream+uint64(w)*uint64(len(tweakKeys)+1)+uint64(n), uint64(i))
			els = append(els, k.Hash160)
			tf.owner[string(k.Hash160)] = w
			tf.truth = append(tf.truth, element.Candidate{Forms: [][]byte{k.Hash160}})
		}
		f, err := bloomwatchFilter(els, rate, rng.Uint32(), cfg.HashFuncs)
		if err != nil {
			return tf, err
		}
		tf.one[w] = len(tf.filters)
		tf.filters = append(tf.filters, f)
		for range peers {
			f, err := bloomwatchFilter(els, rate, rng.Uint32(), cfg.HashFuncs)
			if err != nil {
				return tf, err
			}
			tf.per[w] = append(tf.per[w], len(tf.filters))
			tf.filters = append(tf.filters, f)
		}
	}
	return tf, nil
}

// tweakUniverseOf returns a setting's candidates: the wallets' keys and u
// synthetic ones.
func tweakUniverseOf(cfg Config, n int, truth []element.Candidate, u uint64) element.IndexedUniverse {
	return element.NewConcat(element.SliceUniverse(truth), scan.Synthetic{Seed: cfg.Seed + uint64(n), Count: u})
}

// tweakSetting builds every wallet's filters under both policies, scans
// the universe (the wallets' keys and synthetic candidates) and measures.
func tweakSetting(ctx context.Context, cfg Config, rate float64, n, wallets, peers int, u uint64) (tweakCase, error) {
	tc := tweakCase{rate: rate, keys: n}
	tf, err := buildTweakFilters(cfg, rate, n, wallets, peers)
	if err != nil {
		return tc, err
	}
	filters, one, per, owner := tf.filters, tf.one, tf.per, tf.owner
	univ := tweakUniverseOf(cfg, n, tf.truth, u)
	hits, err := scanChunks(ctx, univ, scan.Config{Filters: filters, Workers: cfg.Workers}, "scan", nil)
	if err != nil {
		return tc, err
	}
	// Match sets by filter, and the pairwise overlaps of the per-peer
	// filters.
	total := float64(univ.Len())
	common := map[[2]int]int{}
	size := make([]int, len(filters))
	for _, h := range hits {
		var in []int
		for i := range filters {
			if h.Any.Has(i) {
				in = append(in, i)
				size[i]++
			}
		}
		for a := range in {
			for b := a + 1; b < len(in); b++ {
				common[[2]int{in[a], in[b]}]++
			}
		}
		w, mine := owner[string(h.Candidate.Forms[0])]
		for wi := range wallets {
			if mine && w == wi {
				continue
			}
			if h.Any.Has(one[wi]) {
				tc.oneFP++
			}
			all := true
			for _, i := range per[wi] {
				all = all && h.Any.Has(i)
			}
			if all {
				tc.perFP++
			}
		}
	}
	rateOf := func(i int) float64 { return filters[i].CurrentFPRate() }
	for wi := range wallets {
		tc.oneExpected += rateOf(one[wi]) * (total - float64(n))
		var fs []*bip37.Filter
		for _, i := range per[wi] {
			fs = append(fs, filters[i])
		}
		tc.perExpected += joint.JointRate(fs) * (total - float64(n))
	}
	// Linking the per-peer filters by a significant overlap, as a
	// crawler does (LinkSignificant): lambda from the rates and the
	// match-set sizes.
	var all []int
	for _, ps := range per {
		all = append(all, ps...)
	}
	walletOf := map[int]int{}
	for w, ps := range per {
		for _, i := range ps {
			walletOf[i] = w
		}
	}
	var chanceSum float64
	tc.sameByWallet, tc.pairsByWallet = make([]float64, wallets), make([]float64, wallets)
	for a := range all {
		for b := a + 1; b < len(all); b++ {
			i, j := all[a], all[b]
			fi, fj := rateOf(i), rateOf(j)
			lambda := total*fi*fj + walletSize(filters[i], size[i])*fj + walletSize(filters[j], size[j])*fi
			linked := poissonTail(uint64(common[[2]int{i, j}]), lambda) < LinkAlpha
			if w := walletOf[i]; w == walletOf[j] {
				tc.samePairs++
				tc.pairsByWallet[w]++
				chanceSum += total * fi * fj
				if linked {
					tc.sameLinked++
					tc.sameByWallet[w]++
				}
				continue
			}
			tc.wrongPairs++
			tc.wrongExpected += LinkAlpha
			if linked {
				tc.wrongLinked++
			}
			if filters[i].Tweak() == filters[j].Tweak() {
				tc.equalTweaks++
			}
			tc.tweakPairs++
		}
	}
	tc.chance = chanceSum / float64(max(tc.samePairs, 1))
	return tc, nil
}

// walletSize is a linker's estimate of the candidates a filter's wallet
// holds: the elements its bits imply, at most its match set's size.
func walletSize(f *bip37.Filter, matched int) float64 {
	est := f.EstimatedElements()
	if math.IsNaN(est) || math.IsInf(est, 0) {
		return float64(matched)
	}
	return math.Min(est, float64(matched))
}

// tweakRows writes one setting's figures.
func tweakRows(out *Result, tc tweakCase, peers int, u uint64, k int) {
	pre := fmt.Sprintf("rate %g, %d keys: ", tc.rate, tc.keys)
	wallets := float64(tc.samePairs) / float64(peers*(peers-1)/2)
	out.Rows = append(out.Rows,
		deterministicRow(pre+"one tweak: a wallet's filters linked by their tweak", 1).
			withNote(fmt.Sprintf("the tweak is in clear in every filterload; %d of %d pairs of different wallets' filters share a tweak (2^-32 each)", tc.equalTweaks, tc.tweakPairs)),
		clusterPropRow(pre+"tweak per peer: a wallet's filter pairs linked by significant overlap", tc.sameByWallet, tc.pairsByWallet, "wallets").
			withNote(fmt.Sprintf("chance overlap |A| f^2 = %.3g vs the %d shared keys", tc.chance, tc.keys)),
		poissonRow(pre+"tweak per peer: different wallets' filter pairs linked by overlap", uint64(tc.wrongLinked), 1).
			withFormula(tc.wrongExpected).withSource("at most the test's level 1e-6 per pair").
			withNote(fmt.Sprintf("%d pairs", tc.wrongPairs)),
		poissonRow(pre+fmt.Sprintf("one tweak: false positives left to %d colluding peers (per wallet)", peers), tc.oneFP, wallets).
			withFormula(tc.oneExpected/wallets).withSource(srcFormula).test(altFactor(2)).
			withNote("identical filters: the intersection is one filter's match set"),
		poissonRow(pre+fmt.Sprintf("tweak per peer: false positives left to %d colluding peers that linked them (per wallet)", peers), tc.perFP, wallets).
			withFormula(tc.perExpected/wallets).withSource("joint model").test(altFactor(2)).
			withNote(fmt.Sprintf("universe %d synthetic candidates", u)),
		computedRow(pre+"mainnet: chance overlap per shared key, sqrt(|A| f^2) / keys", mainnetLinkX(tc.rate, tc.keys, k)).
			withNote("below about 0.2 an overlap of the shared keys stands out at P < 1e-6 (measured above at the same x)"),
	)
}

// mainnetUniverse is element.MainnetChainTxData's candidate count.
var mainnetUniverse = float64(element.MainnetChainTxData.Candidates())

// tweakMainnet adds the formula's figures at mainnet scale for
// bloomwatch's filter of a 20-key wallet at its default rate, as loaded
// (its capacity is at least twice the elements).
func tweakMainnet(out *Result, peers int) {
	const n = 20
	size, k := filterpolicy.FilterSize(n, filterpolicy.DefaultFPRate)
	f := bip37.FalsePositiveRate(uint64(size)*bitsPerByte, k, n)
	chance := mainnetUniverse * f * f
	out.Rows = append(out.Rows,
		computedRow("mainnet: bloomwatch's 20-key filter at 1e-4, its rate as loaded", f).withNote(fmt.Sprintf("%d bytes, k = %d", size, k)),
		computedRow("mainnet: chance overlap of two such filters, |A| f^2", chance).
			withNote(fmt.Sprintf("|A| = %.4g (%s); the wallet's filters share its 20 keys: overlap links them", mainnetUniverse, element.MainnetChainTxData.Source)),
		computedRow("mainnet: one tweak, false positives left to every peer (|A| f)", mainnetUniverse*f),
		computedRow(fmt.Sprintf("mainnet: tweak per peer, false positives left to %d peers that link them (|A| f^%d)", peers, peers), mainnetUniverse*math.Pow(f, float64(peers))),
	)
}

// tweakCharts draws the share of linked pairs against the chance overlap
// per shared key, and the false positives left under both policies.
func tweakCharts(cases []tweakCase, peers int, u uint64) []privacy.Chart {
	link := privacy.Chart{
		Title:  "tweak per peer: a wallet's filters linked by match-set overlap alone (measured here)",
		XLabel: "chance overlap per shared key, sqrt(|A| f^2) / keys", YLabel: "share of a wallet's filter pairs linked", LogX: true,
		Notes: []string{fmt.Sprintf("significant overlap at P < 1e-6; %d synthetic candidates; on mainnet bloomwatch's 20-key filter at 1e-4 sits at x = %.2g",
			u, mainnetLinkX(filterpolicy.DefaultFPRate, 20, 0))},
	}
	fp := privacy.Chart{
		Title:  fmt.Sprintf("false positives left when %d colluding peers link and intersect the filters (measured here)", peers),
		XLabel: "setting (rate, keys)", YLabel: "false positives per wallet", LogY: true,
	}
	byKeys := map[int]*privacy.Series{}
	var order []int
	oneS := privacy.Series{Name: "one tweak (95 % Poisson interval)", Points: true}
	perS := privacy.Series{Name: "tweak per peer (95 % Poisson interval)", Points: true}
	for i, tc := range cases {
		s := byKeys[tc.keys]
		if s == nil {
			s = &privacy.Series{Name: fmt.Sprintf("%d keys", tc.keys), Points: true}
			byKeys[tc.keys] = s
			order = append(order, tc.keys)
		}
		r := clusterPropRow("linked", tc.sameByWallet, tc.pairsByWallet, "wallets")
		s.X = append(s.X, math.Max(math.Sqrt(tc.chance)/float64(tc.keys), 1e-12))
		s.Y, s.YLo, s.YHi = append(s.Y, r.Measured), append(s.YLo, r.Interval[0]), append(s.YHi, r.Interval[1])
		wallets := float64(tc.samePairs) / float64(peers*(peers-1)/2)
		ol, oh := PoissonInterval(tc.oneFP, Z95)
		pl, ph := PoissonInterval(tc.perFP, Z95)
		oneS.X, oneS.Y = append(oneS.X, float64(i)-0.1), append(oneS.Y, float64(tc.oneFP)/wallets)
		oneS.YLo, oneS.YHi = append(oneS.YLo, ol/wallets), append(oneS.YHi, oh/wallets)
		perS.X, perS.Y = append(perS.X, float64(i)+0.1), append(perS.Y, float64(tc.perFP)/wallets)
		perS.YLo, perS.YHi = append(perS.YLo, pl/wallets), append(perS.YHi, ph/wallets)
		fp.XTicks = append(fp.XTicks, privacy.Tick{Value: float64(i), Label: fmt.Sprintf("%g, %d", tc.rate, tc.keys)})
	}
	for _, k := range order {
		link.Series = append(link.Series, *byKeys[k])
	}
	fp.Series = []privacy.Series{oneS, perS}
	return []privacy.Chart{link, fp}
}

// mainnetLinkX is the chance overlap per shared key, sqrt(|A| f^2) / n,
// of bloomwatch's filter of n keys at rate (k hash functions when k > 0)
// over the mainnet universe, with the rate the formula gives as loaded.
func mainnetLinkX(rate float64, n, k int) float64 {
	size, hk := filterpolicy.FilterSize(n, rate)
	if k > 0 {
		hk = uint32(k)
	}
	f := bip37.FalsePositiveRate(uint64(size)*bitsPerByte, hk, float64(n))
	return math.Sqrt(mainnetUniverse*f*f) / float64(n)
}
