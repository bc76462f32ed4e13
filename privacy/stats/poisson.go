package stats

import "math"

// poissonTailSigmas is how many standard deviations below the mean
// PoissonRange starts summing: the mass below is under 1e-30.
const poissonTailSigmas = 12

// PoissonRange returns the central range [lo, hi] that a Poisson count of
// the given mean falls in with probability at least level: lo is the
// largest count with P(X < lo) <= (1-level)/2 and hi the smallest with
// P(X > hi) <= (1-level)/2. A measured count outside it contradicts the
// expectation at that level; a false-positive count over many candidates
// (a binomial with a small rate) is Poisson to within the rate.
// (experiments.PoissonInterval is the converse: a range for the mean
// given a count.) It returns (0, 0) for a mean that is not positive and
// finite, or a level outside (0, 1).
func PoissonRange(mean, level float64) (lo, hi uint64) {
	if !(mean > 0) || math.IsInf(mean, 0) || !(level > 0 && level < 1) {
		return 0, 0
	}
	tail := (1 - level) / 2
	logMean := math.Log(mean)
	start := uint64(math.Max(0, math.Floor(mean-poissonTailSigmas*math.Sqrt(mean)-poissonTailSigmas)))
	cdf := 0.0
	lo = start
	foundLo := false
	// Past the mean plus 4*poissonTailSigmas deviations the remaining mass
	// is below any level a float64 sum can resolve.
	end := uint64(math.Ceil(mean + 4*poissonTailSigmas*(math.Sqrt(mean)+1)))
	x := start
	for ; x < end; x++ {
		lg, _ := math.Lgamma(float64(x) + 1)
		cdf += math.Exp(float64(x)*logMean - mean - lg)
		if !foundLo && cdf > tail {
			lo, foundLo = x, true
		}
		if cdf >= 1-tail {
			break
		}
	}
	return lo, x
}
