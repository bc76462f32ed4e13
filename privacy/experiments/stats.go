package experiments

import "math"

// Confidence bounds for Monte Carlo measurements.

// Z95 is the two-sided 95 % normal quantile used by the intervals below.
const Z95 = 1.959963984540054

// wilsonHilfertyNinth is the 1/9 of the Wilson-Hilferty cube-root
// approximation of chi-square quantiles.
const wilsonHilfertyNinth = 1.0 / 9

// WilsonInterval returns the Wilson score interval for a proportion of
// successes out of trials at normal quantile z. It returns (0, 1) for no
// trials.
func WilsonInterval(successes, trials int, z float64) (lo, hi float64) {
	if trials <= 0 {
		return 0, 1
	}
	n := float64(trials)
	p := float64(successes) / n
	z2 := z * z
	centre := (p + z2/(2*n)) / (1 + z2/n)
	half := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return math.Max(0, centre-half), math.Min(1, centre+half)
}

// exactPoissonMax is the largest count whose interval PoissonInterval
// computes exactly; above it the Wilson-Hilferty approximation is within
// a fraction of a percent.
const exactPoissonMax = 1000

// poissonBisections is the number of bisection steps of an exact bound:
// enough to pin it to double precision.
const poissonBisections = 200

// PoissonInterval returns a two-sided interval for the mean of a Poisson
// count c at normal quantile z: Garwood's exact interval (each tail
// 1 - Phi(z)) for c up to exactPoissonMax, found by bisection on the
// Poisson distribution function, and the Wilson-Hilferty approximation of
// its chi-square quantiles above. The lower bound of c == 0 is 0.
func PoissonInterval(c uint64, z float64) (lo, hi float64) {
	if c > exactPoissonMax {
		return poissonWilsonHilferty(c, z)
	}
	tail := math.Erfc(z/math.Sqrt2) / 2
	// hi: P(X <= c; hi) = tail; lo: P(X >= c; lo) = tail.
	hi = bisect(func(l float64) bool { return poissonCDF(c, l) > tail }, 0, float64(c)+1+10*math.Sqrt(float64(c)+1)+z*z)
	if c > 0 {
		lo = bisect(func(l float64) bool { return 1-poissonCDF(c-1, l) < tail }, 0, float64(c))
	}
	return lo, hi
}

// bisect returns the boundary in [a, b] where below turns false, for a
// predicate true at a and false at b.
func bisect(below func(float64) bool, a, b float64) float64 {
	for range poissonBisections {
		m := (a + b) / 2
		if below(m) {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// poissonCDF returns P(X <= c) for X ~ Poisson(l), summed in log space.
func poissonCDF(c uint64, l float64) float64 {
	if l <= 0 {
		return 1
	}
	logTerm := -l // log P(X = 0)
	sum := math.Exp(logTerm)
	for i := uint64(1); i <= c; i++ {
		logTerm += math.Log(l) - math.Log(float64(i))
		sum += math.Exp(logTerm)
	}
	return math.Min(sum, 1)
}

// poissonWilsonHilferty is Garwood's interval with the Wilson-Hilferty
// cube-root approximation of the chi-square quantiles.
func poissonWilsonHilferty(c uint64, z float64) (lo, hi float64) {
	cf := float64(c)
	lo = cf * math.Pow(1-wilsonHilfertyNinth/cf-z/(3*math.Sqrt(cf)), 3)
	c1 := cf + 1
	hi = c1 * math.Pow(1-wilsonHilfertyNinth/c1+z/(3*math.Sqrt(c1)), 3)
	return math.Max(0, lo), hi
}

// RelDiff returns (measured - reference) / reference, the relative
// difference printed beside a published number. It returns 0 when both are
// 0 and +-Inf when only the reference is 0.
func RelDiff(measured, reference float64) float64 {
	if reference == 0 {
		switch {
		case measured == 0:
			return 0
		case measured > 0:
			return math.Inf(1)
		default:
			return math.Inf(-1)
		}
	}
	return (measured - reference) / reference
}
