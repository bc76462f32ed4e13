package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// RAPPOR's aggregator on BIP37 filters: a full node
// collects one filter from each of many wallets and decodes which
// candidate scripts the population watches, as RAPPOR's aggregator works
// (docs/RESEARCH.md, Sources): reports grouped in cohorts (here: the
// filters that share a tweak, hence hash functions), each cohort's bit
// counts corrected for the noise, t = (y - b N) / (a - b) with a =
// P(S=1 | B=1) and b = P(S=1 | B=0), then a least-squares regression of
// those counts on the candidates' bits (and a background column for the
// wallets' own elements) with a significance test per candidate,
// Holm-corrected over the candidates.
const (
	aggWallets    = 300
	aggKeys       = 20
	aggWatched    = 2   // popular scripts each wallet watches
	aggPopular    = 20  // candidates some wallets watch
	aggCandidates = 200 // the candidate set: popular ones and others
	aggStream     = 7000
)

// aggPolicy is how the population's filters are made.
type aggPolicy struct {
	name       string
	shared     bool    // one tweak for every wallet (one cohort)
	f, p, q    float64 // two-sided responses (f = 0: none)
	oneSided   float64 // one-sided memoized noise f (0: none)
	setA, setB float64 // P(S=1 | B=1), P(S=1 | B=0)
}

// aggPolicies lists the populations decoded.
func aggPolicies() []aggPolicy {
	ps := []aggPolicy{
		{name: "plain filters, a tweak per wallet"},
		{name: "plain filters, one shared tweak", shared: true},
		{name: "two-sided f=0.5 p=0.5 q=0.75, a tweak per wallet", f: 0.5, p: 0.5, q: 0.75},
		{name: "one-sided memoized f=1, a tweak per wallet", oneSided: 1},
	}
	for i := range ps {
		p := &ps[i]
		switch {
		case p.f > 0:
			p.setA = (1-p.f/2)*p.q + p.f/2*p.p
			p.setB = p.f/2*p.q + (1-p.f/2)*p.p
		case p.oneSided > 0:
			p.setA, p.setB = 1, p.oneSided/2
		default:
			p.setA, p.setB = 1, 0
		}
	}
	return ps
}

// rapporAggregate decodes each policy's population.
func rapporAggregate(ctx context.Context, cfg Config) ([]Comparison, []privacy.Chart, error) {
	wallets := aggWallets
	if cfg.Wallets != 0 {
		wallets = 3 * cfg.Wallets
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, aggStream))
	cands := make([][]byte, aggCandidates)
	for i := range cands {
		cands[i] = synthKey(cfg.Seed, aggStream<<32, uint64(i)).Hash160
	}
	// Zipf weights of the popular candidates; each wallet watches
	// aggWatched distinct ones.
	weights := make([]float64, aggPopular)
	for i := range weights {
		weights[i] = 1 / float64(i+1)
	}
	watch := make([][]int, wallets)
	truth := make([]float64, aggCandidates)
	for w := range watch {
		for len(watch[w]) < aggWatched {
			c := drawWeighted(rng, weights)
			if !slices.Contains(watch[w], c) {
				watch[w] = append(watch[w], c)
				truth[c]++
			}
		}
	}
	size, k := filterpolicy.FilterSize(aggKeys+aggWatched, rapporRate)
	sharedTweak := rng.Uint32()
	var rows []Comparison
	recallChart := privacy.Chart{Title: "the aggregator's regression: scripts detected by how many wallets watch them", XLabel: "wallets watching the script",
		YLabel: "estimated watchers",
		Notes:  []string{fmt.Sprintf("%d wallets, %d candidates of which %d watched; each wallet's filter %d bytes, k = %d", wallets, aggCandidates, aggPopular, size, k)}}
	for _, pol := range aggPolicies() {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		cohorts := map[uint32][][]byte{}
		var order []uint32
		for w := range wallets {
			tweak := sharedTweak
			if !pol.shared {
				tweak = rng.Uint32()
			}
			f, err := bip37.NewFilterFromBits(make([]byte, size), k, tweak, bip37.UpdateAll)
			if err != nil {
				return nil, nil, err
			}
			for i := range aggKeys {
				f.Add(synthKey(cfg.Seed, aggStream<<32|uint64(w+1), uint64(i)).Hash160)
			}
			for _, c := range watch[w] {
				f.Add(cands[c])
			}
			bits := f.Bits()
			switch {
			case pol.f > 0:
				bits = instantaneous(rng, noisy(rng, bits, pol.f/2, pol.f/2), pol.p, pol.q)
			case pol.oneSided > 0:
				bits = noisy(rng, bits, pol.oneSided/2, 0)
			}
			if cohorts[tweak] == nil {
				order = append(order, tweak)
			}
			cohorts[tweak] = append(cohorts[tweak], append([]byte(nil), bits...))
		}
		est, se, err := aggRegress(cohorts, order, cands, size, k, pol)
		if err != nil {
			return nil, nil, err
		}
		// One-sided tests of beta > 0, Holm over the candidates.
		ps := make([]float64, len(cands))
		for i := range cands {
			ps[i] = 1
			if se[i] > 0 {
				ps[i] = 1 - normalCDF(est[i]/se[i])
			}
		}
		detected := stats.HolmReject(ps, FamilyAlpha)
		var tp, watched, fd, unwatched int
		var xs, ys, lo, hi []float64
		for i := range cands {
			if truth[i] > 0 {
				watched++
				if detected[i] {
					tp++
				}
				xs, ys = append(xs, truth[i]), append(ys, est[i])
				lo, hi = append(lo, est[i]-Z95*se[i]), append(hi, est[i]+Z95*se[i])
			} else {
				unwatched++
				if detected[i] {
					fd++
				}
			}
		}
		pre := "aggregator, " + pol.name + ": "
		top := slices.Index(truth, slices.Max(truth)) // the most watched
		rows = append(rows,
			binomialRow(pre+"watched scripts detected (recall)", tp, watched).
				withNote(fmt.Sprintf("%d cohorts; one-sided z tests of the regression's coefficients, Holm over %d candidates", len(order), len(cands))),
			binomialRow(pre+"unwatched candidates detected (false discoveries)", fd, unwatched).
				withNote("Holm keeps the chance of any at 5 %"),
			normalRow(pre+fmt.Sprintf("estimated watchers of the most watched script (%.0f watch it)", truth[top]), est[top], se[top]).
				withFormula(truth[top]).withSource("the population's truth (in the formula column)").
				testLabeled("the truth", altFactor(1.5)).withNote("a linear model of OR-ed bits undercounts where elements share bits"),
		)
		recallChart.Series = append(recallChart.Series, privacy.Series{Name: pol.name, X: xs, Y: ys, YLo: lo, YHi: hi, Points: true})
	}
	top := slices.Max(truth)
	recallChart.Series = append(recallChart.Series, privacy.Series{Name: "estimate = truth", X: []float64{0, top}, Y: []float64{0, top}})
	return rows, []privacy.Chart{recallChart}, nil
}

// drawWeighted draws an index with probability proportional to its weight.
func drawWeighted(rng *rand.Rand, w []float64) int {
	u := rng.Float64() * sumOf(w)
	for i, x := range w {
		if u < x {
			return i
		}
		u -= x
	}
	return len(w) - 1
}

// aggRegress corrects each cohort's bit counts for the noise and fits
// them by least squares on the candidates' bits and a background column
// (the count of reports in the cohort: the wallets' own elements). It
// returns each candidate's estimated count of reports holding it (the
// coefficient, a count per cohort, times the cohorts: they are of equal
// size, as RAPPOR's) and its standard error.
func aggRegress(cohorts map[uint32][][]byte, order []uint32, cands [][]byte, size int, k uint32, pol aggPolicy) (est, se []float64, err error) {
	nc := len(cands) + 1 // the background column last
	xtx := make([][]float64, nc)
	for i := range xtx {
		xtx[i] = make([]float64, nc)
	}
	xty := make([]float64, nc)
	var yy float64
	rows := 0
	nBits := size * bitsPerByte
	for _, tweak := range order {
		reports := cohorts[tweak]
		n := float64(len(reports))
		f, err := bip37.NewFilterFromBits(make([]byte, size), k, tweak, bip37.UpdateAll)
		if err != nil {
			return nil, nil, err
		}
		at := make([][]int, nBits) // candidates setting each bit
		for c, e := range cands {
			seen := map[uint32]bool{}
			for _, b := range f.BitPositions(e) {
				if !seen[b] {
					seen[b] = true
					at[b] = append(at[b], c)
				}
			}
		}
		for b := range nBits {
			var y float64
			for _, r := range reports {
				if r[b/bitsPerByte]&(1<<(b%bitsPerByte)) != 0 {
					y++
				}
			}
			t := (y - pol.setB*n) / (pol.setA - pol.setB)
			rows++
			yy += t * t
			for _, c := range at[b] {
				xty[c] += t
				xtx[c][nc-1] += n
				xtx[nc-1][c] += n
				for _, d := range at[b] {
					xtx[c][d]++
				}
			}
			xty[nc-1] += n * t
			xtx[nc-1][nc-1] += n * n
		}
	}
	inv, err := invert(xtx)
	if err != nil {
		return nil, nil, err
	}
	beta := make([]float64, nc)
	for i := range beta {
		for j := range beta {
			beta[i] += inv[i][j] * xty[j]
		}
	}
	rss := yy
	for i := range beta {
		rss -= beta[i] * xty[i]
	}
	sigma2 := math.Max(rss, 0) / float64(max(1, rows-nc))
	est, se = make([]float64, len(cands)), make([]float64, len(cands))
	m := float64(len(order))
	for i := range cands {
		est[i] = m * beta[i]
		se[i] = m * math.Sqrt(math.Max(0, sigma2*inv[i][i]))
	}
	return est, se, nil
}

// errSingular is returned for a regression whose design has no inverse.
var errSingular = fmt.Errorf("%w: singular regression design", ErrBadConfig)

// invert returns the inverse of the symmetric matrix a (Gauss-Jordan with
// partial pivoting).
func invert(a [][]float64) ([][]float64, error) {
	n := len(a)
	m := make([][]float64, n)
	inv := make([][]float64, n)
	for i := range m {
		m[i] = append([]float64(nil), a[i]...)
		inv[i] = make([]float64, n)
		inv[i][i] = 1
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if math.Abs(m[p][c]) < 1e-12 {
			return nil, errSingular
		}
		m[c], m[p] = m[p], m[c]
		inv[c], inv[p] = inv[p], inv[c]
		d := m[c][c]
		for j := range n {
			m[c][j] /= d
			inv[c][j] /= d
		}
		for r := range n {
			if r == c || m[r][c] == 0 {
				continue
			}
			x := m[r][c]
			for j := range n {
				m[r][j] -= x * m[c][j]
				inv[r][j] -= x * inv[c][j]
			}
		}
	}
	return inv, nil
}
