package stats

import "math"

// The spread of a measured count around the formula's expectation.

// BinomialSigma returns sqrt(n p (1-p)), the standard deviation of a
// Binomial(n, p) count.
func BinomialSigma(n, p float64) float64 {
	if n <= 0 || p <= 0 || p >= 1 {
		return 0
	}
	return math.Sqrt(n * p * (1 - p))
}
