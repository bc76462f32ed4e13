// Package stats holds the pure statistics of the adversary model: the
// formulas of docs/PRIVACY-MODEL.md (Log2Binomial, Entropy, Precision,
// Recall, ProbNoFalsePositive and the rates of several forms or filters),
// the 95 % intervals every measured figure carries (PoissonInterval,
// BinomialInterval, NormalInterval, PoissonRange, BinomialSigma), the
// comparison of a measured count with its expectation (ComparisonPower,
// CompareCount, CountPValue), expectations over a Poisson false-positive
// count (ExpectOverPoisson, ExpectedEntropy, ExpectedPrecision), the
// Holm correction of a family of tests (HolmAdjust, HolmReject), and the
// decision of one run's verdicts as such a family (DecideFamily over
// Tests, each printed only where it has the power to fail).
//
// Every function is pure and the package imports nothing else of the
// module; package privacy and its sub-packages build on it.
package stats
