package experiments

import "math"

// Exact distribution functions and confidence bounds for the
// experiments' measurements: the binomial (Clopper-Pearson) and Poisson
// (Garwood) intervals invert the same exact two-sided tests the verdicts
// use (verdict.go), so a reference lies outside a row's interval exactly
// when its unadjusted test rejects at 5 %.

// Z95 is the two-sided 95 % normal quantile.
const Z95 = 1.959963984540054

// Alpha95 is the two-sided level of the 95 % intervals.
const Alpha95 = 0.05

// Numerical settings of the special functions.
const (
	// cfIterations bounds the continued fractions and series.
	cfIterations = 100_000
	// cfEpsilon is their relative convergence threshold.
	cfEpsilon = 1e-15
	// cfTiny keeps Lentz's method away from a division by 0.
	cfTiny = 1e-300
	// quantileBisections pins an inverted bound to double precision.
	quantileBisections = 200
)

// regIncBeta returns the regularized incomplete beta function I_x(a, b)
// for a, b > 0 and x in [0, 1] (Lentz's continued fraction, on the side
// where it converges fast).
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

// betaCF is the continued fraction of the incomplete beta function.
func betaCF(x, a, b float64) float64 {
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < cfTiny {
		d = cfTiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= cfIterations; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < cfTiny {
			d = cfTiny
		}
		c = 1 + aa/c
		if math.Abs(c) < cfTiny {
			c = cfTiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < cfTiny {
			d = cfTiny
		}
		c = 1 + aa/c
		if math.Abs(c) < cfTiny {
			c = cfTiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < cfEpsilon {
			break
		}
	}
	return h
}

// regIncGammaP returns the regularized lower incomplete gamma function
// P(a, x) for a > 0 and x >= 0; regIncGammaQ is 1 - P.
func regIncGammaP(a, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x < a+1:
		return gammaSeries(a, x)
	}
	return 1 - gammaCF(a, x)
}

// regIncGammaQ returns Q(a, x) = 1 - P(a, x), accurately in the upper
// tail.
func regIncGammaQ(a, x float64) float64 {
	switch {
	case x <= 0:
		return 1
	case x < a+1:
		return 1 - gammaSeries(a, x)
	}
	return gammaCF(a, x)
}

// gammaSeries is P(a, x) by its series.
func gammaSeries(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	ap, sum := a, 1/a
	del := sum
	for range cfIterations {
		ap++
		del *= x / ap
		sum += del
		if math.Abs(del) < math.Abs(sum)*cfEpsilon {
			break
		}
	}
	return sum * math.Exp(-x+a*math.Log(x)-lg)
}

// gammaCF is Q(a, x) by its continued fraction.
func gammaCF(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	b := x + 1 - a
	c := 1 / cfTiny
	d := 1 / b
	h := d
	for i := 1; i <= cfIterations; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < cfTiny {
			d = cfTiny
		}
		c = b + an/c
		if math.Abs(c) < cfTiny {
			c = cfTiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < cfEpsilon {
			break
		}
	}
	return math.Exp(-x+a*math.Log(x)-lg) * h
}

// BinomialCDF returns P(X <= x) for X ~ Binomial(n, p).
func BinomialCDF(x, n float64, p float64) float64 {
	switch {
	case x < 0:
		return 0
	case x >= n:
		return 1
	case p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	x = math.Floor(x)
	return regIncBeta(1-p, n-x, x+1)
}

// binomialSF returns P(X >= x) for X ~ Binomial(n, p).
func binomialSF(x, n, p float64) float64 {
	if x <= 0 {
		return 1
	}
	return 1 - BinomialCDF(x-1, n, p)
}

// PoissonCDF returns P(X <= c) for X ~ Poisson(l).
func PoissonCDF(c, l float64) float64 {
	switch {
	case c < 0:
		return 0
	case l <= 0:
		return 1
	}
	return regIncGammaQ(math.Floor(c)+1, l)
}

// poissonSF returns P(X >= c) for X ~ Poisson(l).
func poissonSF(c, l float64) float64 {
	switch {
	case c <= 0:
		return 1
	case l <= 0:
		return 0
	}
	return regIncGammaP(math.Floor(c), l)
}

// bisect returns the boundary in [a, b] where below turns false, for a
// predicate true at a and false at b.
func bisect(below func(float64) bool, a, b float64) float64 {
	for range quantileBisections {
		m := (a + b) / 2
		if below(m) {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// ClopperPearson returns the exact (Clopper-Pearson) two-sided interval
// at level alpha for a proportion of x successes in n independent
// trials: the set of p no exact one-sided test rejects at alpha/2. It
// returns [0, 1] for no trials.
func ClopperPearson(x, n int64, alpha float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	fx, fn := float64(x), float64(n)
	tail := alpha / 2
	if x > 0 {
		// lo: P(X >= x; lo) = tail.
		lo = bisect(func(p float64) bool { return binomialSF(fx, fn, p) < tail }, 0, 1)
	}
	hi = 1
	if x < n {
		// hi: P(X <= x; hi) = tail.
		hi = bisect(func(p float64) bool { return BinomialCDF(fx, fn, p) > tail }, 0, 1)
	}
	return lo, hi
}

// PoissonInterval returns Garwood's exact two-sided interval at normal
// quantile z (each tail 1 - Phi(z)) for the mean of a Poisson count c.
// The lower bound of c == 0 is 0.
func PoissonInterval(c uint64, z float64) (lo, hi float64) {
	return garwood(float64(c), math.Erfc(z/math.Sqrt2))
}

// garwood is Garwood's interval at two-sided level alpha.
func garwood(c, alpha float64) (lo, hi float64) {
	tail := alpha / 2
	top := c + 20*math.Sqrt(c+1) + 20
	hi = bisect(func(l float64) bool { return PoissonCDF(c, l) > tail }, 0, top)
	if c > 0 {
		lo = bisect(func(l float64) bool { return poissonSF(c, l) < tail }, 0, c)
	}
	return lo, hi
}

// WilsonInterval returns the Wilson score interval for a proportion of
// successes out of trials at normal quantile z, for a fractional number
// of trials too (an effective sample size). It returns (0, 1) for no
// trials.
func WilsonInterval(successes, trials float64, z float64) (lo, hi float64) {
	if trials <= 0 {
		return 0, 1
	}
	p := successes / trials
	return wilsonAt(p, trials, z)
}

// wilsonAt is the Wilson interval of a proportion p over n trials.
func wilsonAt(p, n, z float64) (lo, hi float64) {
	z2 := z * z
	centre := (p + z2/(2*n)) / (1 + z2/n)
	half := z / (1 + z2/n) * math.Sqrt(math.Max(0, p*(1-p))/n+z2/(4*n*n))
	lo, hi = math.Max(0, centre-half), math.Min(1, centre+half)
	if p <= 0 {
		lo = 0
	}
	if p >= 1 {
		hi = 1
	}
	return lo, hi
}

// normalCDF is the standard normal distribution function.
func normalCDF(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }

// normalQuantile returns the standard normal quantile of p in (0, 1).
func normalQuantile(p float64) float64 {
	return bisect(func(x float64) bool { return normalCDF(x) < p }, -40, 40)
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
