package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// Intervals and expectations for the figures the analyzer and the meter
// print: every measured figure carries a 95 % interval of the
// kind its randomness calls for, and a figure that is a function of the
// false-positive count F is given as its expectation over F's
// distribution, not at F's mean.

// ConfidenceLevel is the level of every interval bloomwatch reports.
const ConfidenceLevel = 0.95

// The methods an Interval names.
const (
	// MethodPoisson is Garwood's exact interval for the mean of a Poisson
	// count: a count of independent rare events (false positives among
	// many candidates, each matching or not on its own hashes).
	MethodPoisson = "poisson-garwood"
	// MethodBinomial is the Clopper-Pearson exact interval for a
	// proportion k/n (precision, recall, an observed rate).
	MethodBinomial = "binomial-clopper-pearson"
	// MethodNormal is an estimate plus or minus 1.96 standard errors
	// (the element estimate m^ and the reload estimates), clipped at 0
	// for a count.
	MethodNormal = "normal"
	// MethodPoissonMapped is a monotone function of a Poisson count F
	// with N fixed (the precision N/(N+F), the entropy log2 C(N+F, N))
	// evaluated at the ends of F's Garwood interval: N comes from the
	// truth, only F is random.
	MethodPoissonMapped = "poisson-garwood-mapped"
)

// z95 is the two-sided 95 % normal quantile.
const z95 = 1.959963984540054

// Interval is a two-sided interval at ConfidenceLevel around a measured
// figure, with the method that produced it.
type Interval struct {
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Method string  `json:"method"`
}

// Contains reports whether v lies in [Lo, Hi].
func (iv Interval) Contains(v float64) bool { return v >= iv.Lo && v <= iv.Hi }

// tail returns the probability of each tail of a two-sided interval at
// level.
func tail(level float64) float64 { return (1 - level) / 2 }

// PoissonInterval returns Garwood's exact two-sided interval for the mean
// of a Poisson count c at level: lo solves P(X >= c; lo) = (1-level)/2
// (0 for c = 0), hi solves P(X <= c; hi) = (1-level)/2, through the
// inverse regularized incomplete gamma function. A count summed over
// independent candidates that each match with a small probability (a
// false-positive count) is Poisson to within that probability.
func PoissonInterval(c uint64, level float64) Interval {
	a := tail(level)
	iv := Interval{Method: MethodPoisson}
	if c > 0 {
		iv.Lo = mathext.GammaIncRegInv(float64(c), a)
	}
	iv.Hi = mathext.GammaIncRegInv(float64(c)+1, 1-a)
	return iv
}

// BinomialInterval returns the Clopper-Pearson exact two-sided interval
// for a proportion of k successes in n trials at level, through the
// inverse regularized incomplete beta function: never outside [0, 1],
// exact at k = 0 and k = n. It returns [0, 1] for no trials.
func BinomialInterval(k, n uint64, level float64) Interval {
	iv := Interval{Lo: 0, Hi: 1, Method: MethodBinomial}
	if n == 0 || k > n {
		return iv
	}
	a := tail(level)
	kf, nf := float64(k), float64(n)
	if k > 0 {
		iv.Lo = mathext.InvRegIncBeta(kf, nf-kf+1, a)
	}
	if k < n {
		iv.Hi = mathext.InvRegIncBeta(kf+1, nf-kf, 1-a)
	}
	return iv
}

// NormalInterval returns est plus or minus 1.96 standard errors, with the
// lower end clipped at floor (0 for a count that cannot be negative,
// -Inf for none). It returns nil when est or se is not finite or se is
// negative (an estimate that could not be made).
func NormalInterval(est, se, floor float64) *Interval {
	if math.IsNaN(est) || math.IsInf(est, 0) || math.IsNaN(se) || math.IsInf(se, 0) || se < 0 {
		return nil
	}
	return &Interval{Lo: math.Max(est-z95*se, floor), Hi: est + z95*se, Method: MethodNormal}
}

// poissonCDF returns P(X <= x) for X ~ Poisson(mean) (the regularized
// upper incomplete gamma function Q(x+1, mean)); 0 for x < 0.
func poissonCDF(x, mean float64) float64 {
	if x < 0 {
		return 0
	}
	if mean <= 0 {
		return 1
	}
	return mathext.GammaIncRegComp(math.Floor(x)+1, mean)
}

// acceptance returns the counts [lo, hi] whose Garwood interval at level
// contains mean: lo is the least count with P(X <= lo) >= (1-level)/2, hi
// the greatest with P(X >= hi) >= (1-level)/2, for X ~ Poisson(mean). A
// count outside it puts the mean outside the count's interval.
func acceptance(mean, level float64) (lo, hi float64) {
	a := tail(level)
	// The least x with CDF(x) >= a, and the least x with CDF(x) > 1-a,
	// found by bisection over the integers.
	quantile := func(p float64, strict bool) float64 {
		l, h := 0.0, math.Ceil(mean+20*math.Sqrt(mean)+20)
		for poissonCDF(h, mean) < p {
			h *= 2
		}
		ok := func(x float64) bool {
			c := poissonCDF(x, mean)
			if strict {
				return c > p
			}
			return c >= p
		}
		if ok(l) {
			return l
		}
		for h-l > 1 {
			m := math.Floor((l + h) / 2)
			if ok(m) {
				h = m
			} else {
				l = m
			}
		}
		return h
	}
	// P(X >= x) >= a  <=>  CDF(x-1) <= 1-a: hi is the least x with
	// CDF(x) > 1-a.
	return quantile(a, false), quantile(1-a, true)
}

// Comparison outcomes of a measured count against an expectation.
const (
	// ComparisonInside: the expectation lies inside the measured
	// count's 95 % interval.
	ComparisonInside = "inside"
	// ComparisonOutside: it lies outside; the model and the measurement
	// disagree at the 5 % level (at the run's family-wise 5 % level in
	// a privacy.Report: Holm-corrected).
	ComparisonOutside = "outside"
	// ComparisonNoVerdict: the comparison has too little power to fail
	// and no outcome is printed.
	ComparisonNoVerdict = "no verdict"
)

// MinComparisonPower is the power the comparison of a measured count with
// its expectation must have before its outcome is reported: the
// probability that the expectation falls outside the measured count's
// interval when the true mean is twice, or half, the expectation (the
// larger of the two). Below it the comparison could hardly fail whatever
// the model's error (0 measured against 1e-10 expected is "inside" under
// any model that predicts less than about one), and it is not reported.
const MinComparisonPower = 0.5

// comparisonFactor is the model error the power is computed against.
const comparisonFactor = 2

// ComparisonPower returns the probability that a Poisson count's Garwood
// interval at level excludes expected when the count's true mean is
// comparisonFactor times expected, or 1/comparisonFactor times it,
// whichever is larger: the power of the comparison against a model wrong
// by a factor of two.
func ComparisonPower(expected, level float64) float64 {
	if !(expected > 0) || math.IsInf(expected, 0) {
		return 0
	}
	lo, hi := acceptance(expected, level)
	power := func(mean float64) float64 {
		inside := poissonCDF(hi, mean) - poissonCDF(lo-1, mean)
		return math.Max(0, 1-inside)
	}
	return math.Max(power(expected*comparisonFactor), power(expected/comparisonFactor))
}

// CompareCount compares a measured count with the model's expectation
// (a range [lower, upper] when the model only bounds it): it returns
// ComparisonInside or ComparisonOutside, and the comparison's power
// (ComparisonPower at upper); the outcome is "" when the power is below
// MinComparisonPower, since such a comparison can hardly fail.
func CompareCount(measured uint64, lower, upper float64) (string, float64) {
	power := ComparisonPower(upper, ConfidenceLevel)
	if power < MinComparisonPower {
		return "", power
	}
	iv := PoissonInterval(measured, ConfidenceLevel)
	if iv.Hi < lower || iv.Lo > upper {
		return ComparisonOutside, power
	}
	return ComparisonInside, power
}

// CountPValue returns the exact two-sided p-value of a measured Poisson
// count against an expectation (a range [lower, upper] when the model
// only bounds it): twice the smaller of P(X <= measured) at the mean
// lower and P(X >= measured) at the mean upper, at most 1. It is the test
// the Garwood interval inverts: the p-value is at most 1-level exactly
// when the range lies outside the count's interval at level. An
// expectation that is not positive gives 1 for a count of 0, and 0
// otherwise.
func CountPValue(measured uint64, lower, upper float64) float64 {
	if !(upper > 0) {
		if measured == 0 {
			return 1
		}
		return 0
	}
	x := float64(measured)
	below := poissonCDF(x, math.Max(lower, 0))
	above := 1.0
	if measured > 0 {
		above = mathext.GammaIncReg(x, upper) // P(X >= x) at mean upper
	}
	return math.Min(1, 2*math.Min(below, above))
}

// Limits of ExpectOverPoisson's sum.
const (
	// expectTailSigmas bounds the summed range: mean plus or minus this
	// many standard deviations (and as many counts), outside which the
	// Poisson mass is below 1e-30.
	expectTailSigmas = 12
	// expectMaxTerms is the most counts summed one by one; a wider range
	// is sampled at expectMaxTerms evenly spaced counts, each weighted by
	// the mass of its step (the function is smooth on that scale).
	expectMaxTerms = 1000
	// lgammaEntropyMin is the smaller of N and F above which
	// entropyBits uses lgamma instead of summing min(N, F) terms: the
	// lgamma difference loses about 1e-16 of (N+F) ln(N+F) to rounding,
	// under 1e-4 bits for any F a chain holds.
	lgammaEntropyMin = 64
)

// ExpectOverPoisson returns E[g(F)] for F ~ Poisson(mean): the sum of
// g(x) P(F = x) over the counts within expectTailSigmas standard
// deviations of the mean, one by one, or at expectMaxTerms evenly spaced
// counts for a wide range. A mean of 0 returns g(0).
func ExpectOverPoisson(mean float64, g func(x float64) float64) float64 {
	if !(mean > 0) {
		return g(0)
	}
	sd := math.Sqrt(mean)
	lo := math.Max(0, math.Floor(mean-expectTailSigmas*(sd+1)))
	hi := math.Ceil(mean + expectTailSigmas*(sd+1))
	step := math.Max(1, math.Ceil((hi-lo+1)/expectMaxTerms))
	logMean := math.Log(mean)
	var sum, mass float64
	for x := lo; x <= hi; x += step {
		lg, _ := math.Lgamma(x + 1)
		p := math.Exp(x*logMean-mean-lg) * step
		sum += p * g(x)
		mass += p
	}
	if mass <= 0 {
		return g(mean)
	}
	// Renormalized: the mass left outside the range (under 1e-30) and a
	// sampled sum's rounding both cancel.
	return sum / mass
}

// ExpectedEntropy returns E[log2 C(N+F, N)] for F ~ decoys +
// Poisson(mean): the entropy of an adversary who knows the wallet holds
// members of the members+F candidates it suspects, averaged over the
// false-positive count F, whose mean is decoys + mean (decoys: candidates
// known to match, not by chance). Entropy is concave in F, so this is at
// most the plug-in Entropy(N, decoys+mean).
func ExpectedEntropy(members, decoys, mean float64) float64 {
	if members <= 0 {
		return 0
	}
	return ExpectOverPoisson(mean, func(x float64) float64 { return entropyBits(members, decoys+x) })
}

// entropyBits is Entropy(n, f) for integer counts, through lgamma when
// both are large (Log2Binomial sums min(n, f) terms, a thousand for a
// large wallet, which ExpectedEntropy would repeat at every count it
// sums).
func entropyBits(n, f float64) float64 {
	if f <= 0 {
		return 0
	}
	if math.Min(n, f) <= lgammaEntropyMin || n != math.Trunc(n) || f != math.Trunc(f) {
		return Entropy(n, f)
	}
	a, _ := math.Lgamma(n + f + 1)
	b, _ := math.Lgamma(f + 1)
	c, _ := math.Lgamma(n + 1)
	return (a - b - c) / math.Ln2
}

// ExpectedPrecision returns E[N/(N+F)] for F ~ decoys + Poisson(mean):
// the share of the adversary's set that is the wallet's, averaged over
// the false-positive count. Precision is convex in F, so this is at least
// the plug-in Precision(N, decoys+mean). It returns 0 for no members.
func ExpectedPrecision(members, decoys, mean float64) float64 {
	if members <= 0 {
		return 0
	}
	return ExpectOverPoisson(mean, func(x float64) float64 { return Precision(members, decoys+x) })
}
