package privacy

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
