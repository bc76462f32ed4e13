package behaviour

import "math"

// The behaviour attack's chance range: what a pick of as many candidates
// at random would give (what "no better than the base rate" means). The
// precision and recall measured have exact binomial intervals
// (BinomialInterval).

// behaviourTail is the probability in each tail of the chance range.
const behaviourTail = 0.025

// MethodHypergeometric names the chance range of a behaviour score: the
// central 95 % of the hypergeometric count of wallet items among as many
// candidates picked at random.
const MethodHypergeometric = "hypergeometric"

// hypergeometric is the number of wallet items among k distinct items
// drawn at random from n candidates of which w are the wallet's: the
// hits of an attack whose suspects are independent of which items are
// the wallet's (the permutation null). Its pmf is kept over its support
// [lo, hi].
type hypergeometric struct {
	lo, hi int
	pmf    []float64
}

// newHypergeometric returns the distribution for n candidates, w of them
// the wallet's, k drawn (0 <= w, k <= n).
func newHypergeometric(n, w, k int) hypergeometric {
	lo, hi := max(0, k-(n-w)), min(k, w)
	h := hypergeometric{lo: lo, hi: hi, pmf: make([]float64, hi-lo+1)}
	logC := func(a, b int) float64 {
		x, _ := math.Lgamma(float64(a + 1))
		y, _ := math.Lgamma(float64(b + 1))
		z, _ := math.Lgamma(float64(a - b + 1))
		return x - y - z
	}
	den := logC(n, k)
	var sum float64
	for x := lo; x <= hi; x++ {
		p := math.Exp(logC(w, x) + logC(n-w, k-x) - den)
		h.pmf[x-lo] = p
		sum += p
	}
	for i := range h.pmf {
		h.pmf[i] /= sum // rounding only
	}
	return h
}

// cdfBelow returns P(X < x).
func (h hypergeometric) cdfBelow(x int) float64 {
	var s float64
	for v := h.lo; v < x && v <= h.hi; v++ {
		s += h.pmf[v-h.lo]
	}
	return s
}

// cdfAbove returns P(X > x).
func (h hypergeometric) cdfAbove(x int) float64 {
	var s float64
	for v := h.hi; v > x && v >= h.lo; v-- {
		s += h.pmf[v-h.lo]
	}
	return s
}

// central returns the central range [lo, hi] holding at least 1 - 2 tail
// of the mass: P(X < lo) <= tail and P(X > hi) <= tail.
func (h hypergeometric) central(tail float64) (lo, hi int) {
	lo, hi = h.lo, h.hi
	for lo < h.hi && h.cdfBelow(lo+1) <= tail {
		lo++
	}
	for hi > h.lo && h.cdfAbove(hi-1) <= tail {
		hi--
	}
	return lo, hi
}

// pValue returns the two-sided p-value of x hits: twice the smaller tail
// (P(X <= x), P(X >= x)), at most 1.
func (h hypergeometric) pValue(x int) float64 {
	low := 1 - h.cdfAbove(x)  // P(X <= x)
	high := 1 - h.cdfBelow(x) // P(X >= x)
	return math.Min(1, 2*math.Min(low, high))
}

// pValues returns the two-sided p-value of every count of the support
// [lo, hi] (pValue, from cumulative sums: linear in the support).
func (h hypergeometric) pValues() []float64 {
	n := len(h.pmf)
	below := make([]float64, n+1) // below[i] = P(X < lo+i)
	for i, p := range h.pmf {
		below[i+1] = below[i] + p
	}
	out := make([]float64, n)
	for i := range h.pmf {
		low := below[i+1]    // P(X <= x)
		high := 1 - below[i] // P(X >= x)
		out[i] = math.Min(1, 2*math.Min(low, high))
	}
	return out
}

// powerAgainst returns the probability that the two-sided test at level
// rejects a random pick when each of the k suspects is the wallet's with
// probability p1 (a binomial count, held inside the support: no more
// hits than the wallet's items or the suspects, no fewer than the
// hypergeometric's least).
func (h hypergeometric) powerAgainst(k int, p1, level float64) float64 {
	if k <= 0 {
		return 0
	}
	pv := h.pValues()
	lp, lq := math.Log(p1), math.Log1p(-p1)
	lk, _ := math.Lgamma(float64(k) + 1)
	var power float64
	for x := 0; x <= k; x++ {
		var lpmf float64
		switch {
		case p1 <= 0:
			if x != 0 {
				continue
			}
		case p1 >= 1:
			if x != k {
				continue
			}
		default:
			a, _ := math.Lgamma(float64(x) + 1)
			b, _ := math.Lgamma(float64(k-x) + 1)
			lpmf = lk - a - b + float64(x)*lp + float64(k-x)*lq
		}
		c := min(max(x, h.lo), h.hi)
		if pv[c-h.lo] <= level {
			power += math.Exp(lpmf)
		}
	}
	return math.Min(1, power)
}

// mean returns the expected count.
func (h hypergeometric) mean() float64 {
	var m float64
	for i, p := range h.pmf {
		m += float64(h.lo+i) * p
	}
	return m
}
