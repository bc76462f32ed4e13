package experiments

import (
	"github.com/bloomwatch/bloomwatch/internal/unionfind"
	"math"
	"math/rand/v2"
	"slices"
)

// Multi-input clustering: the common-input-ownership
// heuristic over the whole chain, evaluated as Nick 2015 did (his thesis,
// chapter 5) with the crawler's de-duplicated match sets as the wallets,
// and against the population's truth.
//
// For a reference set R of a wallet (its match set m, or its true keys)
// and each p in R, with h(p) the multi-input cluster of p:
//
//	precision pi(p) = |h(p) ∩ R| / |h(p)|
//	recall    rho(p) = |(h(p) ∪ {p}) ∩ R| / |R|
//
// averaged over p, then over wallets. A match set holds false positives
// phi, so Nick corrected the recall measured on it:
//
//	rho_w = |m|^2 / (|m| - |phi|)^2 * (rho_m - |phi| / |m|^2),
//
// with |phi| drawn as Binomial(|P|, phi_i) truncated at |m|, averaged over
// Monte Carlo draws (ClusterCorrection).

// Clusters is the multi-input heuristic's partition of the population's
// keys.
type Clusters struct {
	sets *unionfind.Sets
}

// MultiInputClusters merges the keys every co-spend spends from.
func MultiInputClusters(p *Population) *Clusters {
	c := &Clusters{sets: unionfind.New(len(p.Keys))}
	for _, ks := range p.CoSpends {
		for _, k := range ks[1:] {
			c.sets.Union(int(ks[0]), int(k))
		}
	}
	return c
}

// find returns the root of key k's cluster.
func (c *Clusters) find(k int32) int32 { return int32(c.sets.Find(int(k))) }

// Size returns the size of key k's cluster.
func (c *Clusters) Size(k int32) int { return c.sets.Size(int(k)) }

// Same reports whether keys a and b are in one cluster.
func (c *Clusters) Same(a, b int32) bool { return c.sets.Same(int(a), int(b)) }

// ClusterScore is the heuristic's mean precision and recall over one
// wallet's reference set.
type ClusterScore struct {
	Precision, Recall float64
	// Baseline is 1/|R|: the recall of clusters of one key.
	Baseline float64
	// Size is |R|.
	Size int
}

// OwnerCounts returns, per cluster root and wallet, the number of the
// wallet's keys in the cluster.
func (c *Clusters) OwnerCounts(p *Population) map[[2]int32]int {
	out := map[[2]int32]int{}
	for k, info := range p.Keys {
		if info.Owner >= 0 {
			out[[2]int32{c.find(int32(k)), info.Owner}]++
		}
	}
	return out
}

// Score evaluates the clusters over ref, a wallet's reference set of
// candidate ids (v.KeyID maps them to keys; synthetic candidates are
// clusters of their own). When owners is set, precision counts the keys
// of a cluster that belong to wallet (owners from OwnerCounts) instead of
// those in ref: the truth's precision, over every key of the wallet, not
// only those its filters revealed.
func (c *Clusters) Score(v *CrawlerView, ref []int32, owners map[[2]int32]int, wallet int32) ClusterScore {
	if len(ref) == 0 {
		return ClusterScore{}
	}
	byRoot := map[int32]int{}
	for _, id := range ref {
		if k := v.KeyID[id]; k >= 0 {
			byRoot[c.find(k)]++
		}
	}
	n := float64(len(ref))
	s := ClusterScore{Size: len(ref), Baseline: 1 / n}
	for _, id := range ref {
		k := v.KeyID[id]
		if k < 0 {
			s.Precision++
			s.Recall += 1 / n
			continue
		}
		root := c.find(k)
		inRef := byRoot[root]
		hits := inRef
		if owners != nil {
			hits = owners[[2]int32{root, wallet}]
		}
		s.Precision += float64(hits) / float64(c.sets.Size(int(root)))
		s.Recall += float64(inRef) / n
	}
	s.Precision /= n
	s.Recall /= n
	return s
}

// CorrectedRecall is Nick's correction of the recall measured on a match
// set of size m holding fp false positives.
func CorrectedRecall(rhoM float64, m, fp int) float64 {
	w := m - fp
	if w <= 0 {
		return math.NaN()
	}
	mf := float64(m)
	return mf * mf / float64(w*w) * (rhoM - float64(fp)/(mf*mf))
}

// correctionDraws is the number of Monte Carlo draws of the false
// positives (Nick: 1,000).
const correctionDraws = 1000

// ClusterCorrection is Nick's Monte Carlo estimate of the mean corrected
// recall over wallets: each draw takes, for each wallet, a false-positive
// count from a Poisson of its expected false positives (the Binomial
// limit for a large universe) truncated at its match-set size minus one,
// corrects its recall, and averages over wallets. It returns the mean
// over draws and the central 99 % range of the draws.
func ClusterCorrection(seed uint64, rhoM []float64, sizes []int, expectedFP []float64) (mean, lo, hi float64) {
	if len(rhoM) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(rhoM))))
	draws := make([]float64, correctionDraws)
	for d := range draws {
		var sum float64
		for i, r := range rhoM {
			fp := min(poissonDraw(rng, expectedFP[i]), sizes[i]-1)
			sum += CorrectedRecall(r, sizes[i], fp)
		}
		draws[d] = sum / float64(len(rhoM))
	}
	slices.Sort(draws)
	for _, d := range draws {
		mean += d
	}
	mean /= float64(len(draws))
	const tail = 0.005
	return mean, draws[int(tail*float64(len(draws)))], draws[int((1-tail)*float64(len(draws)-1))]
}

// poissonDraw draws a Poisson count of mean l (Knuth's method for small
// means, a rounded normal above poissonNormalMin).
func poissonDraw(rng *rand.Rand, l float64) int {
	const poissonNormalMin = 50
	if l <= 0 {
		return 0
	}
	if l > poissonNormalMin {
		return max(0, int(math.Round(l+math.Sqrt(l)*rng.NormFloat64())))
	}
	limit, k, p := math.Exp(-l), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= limit {
			return k
		}
		k++
	}
}
