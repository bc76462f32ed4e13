package stats

import "math"

// The formulas of the adversary model (docs/PRIVACY-MODEL.md, "The
// formulas"; their sources in docs/RESEARCH.md, "Sources, as read"). Every
// function is pure; the bloom filter false-positive rate itself, f(m), and
// the element estimate m^ live in package bip37 (FalsePositiveRate,
// EstimateElements).

// directBinomialTerms is the largest min(k, n-k) for which Log2Binomial
// sums the product's terms instead of using lgamma.
const directBinomialTerms = 1024

// Log2Binomial returns log2 C(n, k) for real n >= k >= 0, computed with
// math.Lgamma (or, for a short integer product, term by term) so it stays
// finite and accurate for very large n (C(n, k) itself overflows a
// float64 beyond n ~ 1030). It returns 0 when k <= 0 or
// k >= n, and NaN when n or k is NaN or negative.
func Log2Binomial(n, k float64) float64 {
	if math.IsNaN(n) || math.IsNaN(k) || n < 0 || k < 0 {
		return math.NaN()
	}
	if k == 0 || k >= n {
		return 0
	}
	// A short product is summed term by term: lgamma of a huge n loses
	// the small difference to cancellation.
	if kk := math.Min(k, n-k); kk == math.Trunc(kk) && kk <= directBinomialTerms {
		s := 0.0
		for i := 0.0; i < kk; i++ {
			s += math.Log2((n - i) / (i + 1))
		}
		return s
	}
	ln1, _ := math.Lgamma(n + 1)
	lk, _ := math.Lgamma(k + 1)
	lnk, _ := math.Lgamma(n - k + 1)
	return (ln1 - lk - lnk) / math.Ln2
}

// Entropy returns H = log2 C(N+F, N) bits: the uncertainty of an adversary
// who knows the wallet's N elements hide among N+F equally likely
// candidates, F of them false positives. F may be fractional (an expected
// count).
func Entropy(members, falsePositives float64) float64 {
	if falsePositives <= 0 {
		return 0
	}
	return Log2Binomial(members+falsePositives, members)
}

// Precision returns N/(N+F), the share of the adversary's set that is the
// wallet's. An empty set (tp+fp == 0) has no correct claim and returns 0.
func Precision(truePositives, falsePositives float64) float64 {
	if truePositives+falsePositives <= 0 {
		return 0
	}
	return truePositives / (truePositives + falsePositives)
}

// Recall returns tp/members, the share of the wallet's elements the
// adversary's set contains; 0 when members is 0.
func Recall(truePositives, members float64) float64 {
	if members <= 0 {
		return 0
	}
	return truePositives / members
}

// ProbNoFalsePositive returns (1-f)^trials, the probability that none of
// trials independent non-members matches a filter of false-positive rate f:
// the probability that the adversary's match set is exactly the wallet.
// It is close to e^(-E[F]) with E[F] = f * trials.
func ProbNoFalsePositive(fpRate, trials float64) float64 {
	if trials <= 0 || fpRate <= 0 {
		return 1
	}
	if fpRate >= 1 {
		return 0
	}
	return math.Exp(trials * math.Log1p(-fpRate))
}

// AnyFormRate returns 1-(1-f)^forms: the probability that a candidate with
// forms independent byte strings matches a filter of rate f through at
// least one of them (the plain single-filter test).
func AnyFormRate(fpRate float64, forms int) float64 {
	if forms <= 0 {
		return 0
	}
	if fpRate >= 1 {
		return 1
	}
	return -math.Expm1(float64(forms) * math.Log1p(-fpRate))
}

// AllFormsRate returns f^forms: the probability that a non-member matches
// through every one of its forms (the both-forms test: pubkey AND hash160
// must match, formula 4).
func AllFormsRate(fpRate float64, forms int) float64 {
	if forms <= 0 {
		return 0
	}
	return math.Pow(fpRate, float64(forms))
}

// IntersectionRate returns prod f_i, the probability that a non-member
// matches every one of several independent filters (formula 5). It returns
// 1 for no filters (nothing excludes anyone).
func IntersectionRate(rates []float64) float64 {
	p := 1.0
	for _, r := range rates {
		p *= r
	}
	return p
}
