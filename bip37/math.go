package bip37

import "math"

// FalsePositiveRate returns f(m) = (1 - e^(-k m / n))^k, the probability
// that an element never inserted matches a filter of nBits bits and k hash
// functions after m insertions. A filter with no bits or no hash functions
// matches everything, so the rate is 1 for nBits == 0 or k == 0.
func FalsePositiveRate(nBits uint64, k uint32, m float64) float64 {
	if nBits == 0 || k == 0 {
		return 1
	}
	if m <= 0 {
		return 0
	}
	kf := float64(k)
	// 1 - e^(-x) computed as -expm1(-x) keeps precision for tiny fills.
	return math.Pow(-math.Expm1(-kf*m/float64(nBits)), kf)
}

// EstimateElements returns m^ = -(n/k) ln(1 - X/n), the number of distinct
// insertions that most likely produced bitsSet set bits in a filter of nBits
// bits and k hash functions (the estimate an observer of the filter makes).
// It returns +Inf when every bit is set (bitsSet >= nBits: any number of
// elements could have produced it) and NaN when nBits or k is 0 (such a
// filter's bits carry no information about its elements).
func EstimateElements(nBits uint64, k uint32, bitsSet uint64) float64 {
	if nBits == 0 || k == 0 {
		return math.NaN()
	}
	if bitsSet >= nBits {
		return math.Inf(1)
	}
	n := float64(nBits)
	return -(n / float64(k)) * math.Log1p(-float64(bitsSet)/n)
}

// ExpectedFalsePositives returns E[F] = f * (|A| - N): the expected number
// of non-members among universe candidates that match a filter with
// false-positive rate fpRate, given that members of them are the wallet's
// own. It returns 0 when members >= universe.
func ExpectedFalsePositives(fpRate float64, universe, members uint64) float64 {
	if members >= universe {
		return 0
	}
	return fpRate * float64(universe-members)
}
