package bip37

import (
	"errors"
	"fmt"
	"math"
)

// Set-size estimators an observer applies to two filters of one wallet.
//
// A wallet that keeps its tweak (bloomwatch does, and bitcoinj within one
// process) sends filters whose bits are h_j(x) mod n for the same 32-bit
// hashes h_j. Two such filters with the same hash count k are linkable
// and comparable: OR-ing them gives the filter of the union of their
// element sets, and the element estimate m^ = -(n/k) ln(1 - X/n) of the
// union, with the estimates of each, gives the intersection. When one
// size divides the other the larger filter folds exactly onto the smaller
// size (h mod n_small = (h mod n_large) mod n_small), so a wallet that
// doubles its filter exactly gives the observer the number of elements
// each reload added.

// Errors returned by the estimators. They are wrapped with details; test
// for them with errors.Is.
var (
	// ErrParamsDiffer is returned when two filters do not share their
	// tweak and hash count: their bits are unrelated hashes of the
	// elements and cannot be combined.
	ErrParamsDiffer = errors.New("bip37: filters differ in tweak or hash count")

	// ErrSizesNotNested is returned when neither filter size divides the
	// other (or a fold target does not divide the filter's size): the
	// bits of one cannot be mapped onto the other's.
	ErrSizesNotNested = errors.New("bip37: filter sizes do not nest")

	// ErrNoElementInfo is returned for a filter that matches everything
	// (zero length or no hash functions): its bits say nothing about its
	// elements.
	ErrNoElementInfo = errors.New("bip37: filter carries no element information")

	// ErrSaturated is returned when every bit is set at the size the
	// estimate is made: any number of elements could have produced it.
	ErrSaturated = errors.New("bip37: every bit set, element count unbounded")
)

// Fold returns f folded onto sizeBytes bytes: the OR of f's consecutive
// sizeBytes-byte tiles. When sizeBytes divides f's size, this is exactly
// the filter the same elements give at sizeBytes bytes with f's tweak,
// hash count and flags, because each element's bit h mod 8*size maps to
// h mod 8*sizeBytes. It returns ErrSizesNotNested when sizeBytes is not a
// positive divisor of f.Size(), and ErrNoElementInfo for a filter without
// hash functions or bits.
func Fold(f *Filter, sizeBytes int) (*Filter, error) {
	if f.Size() == 0 || f.HashFuncs() == 0 {
		return nil, fmt.Errorf("fold: %w: %d bytes, %d hash functions", ErrNoElementInfo, f.Size(), f.HashFuncs())
	}
	if sizeBytes <= 0 || f.Size()%sizeBytes != 0 {
		return nil, fmt.Errorf("fold %d bytes onto %d: %w", f.Size(), sizeBytes, ErrSizesNotNested)
	}
	out := make([]byte, sizeBytes)
	for off := 0; off < f.Size(); off += sizeBytes {
		for i, b := range f.bits[off : off+sizeBytes] {
			out[i] |= b
		}
	}
	return newFilter(out, f.hashFuncs, f.tweak, f.flags), nil
}

// Overlap is what an observer infers about the element sets A and B of
// two filters that share tweak and hash count: every figure is an element
// estimate m^ = -(n/k) ln(1 - X/n) made at SizeBytes, the smaller of the
// two sizes, after folding the larger filter onto it.
//
// The estimates are unbiased to first order and noisy: Intersection can
// come out slightly negative or above min(A, B) when the true overlap is
// at a bound. StdErr gives their standard errors, which grow quickly as
// the filter at SizeBytes fills up.
type Overlap struct {
	// SizeBytes is the size, in bytes, at which the estimates are made.
	SizeBytes int
	// HashFuncs is the two filters' hash count.
	HashFuncs uint32
	// A and B are the estimated element counts of each filter at
	// SizeBytes.
	A, B float64
	// Union is the estimate of |A ∪ B|, from the OR of the two filters.
	Union float64
	// Intersection is A + B - Union, the estimate of |A ∩ B|.
	Intersection float64
}

// OnlyA returns Union - B, the estimated number of A's elements missing
// from B (for B a later reload: the elements dropped).
func (o Overlap) OnlyA() float64 { return o.Union - o.B }

// OnlyB returns Union - A, the estimated number of B's elements missing
// from A (for B a later reload: the elements it added).
func (o Overlap) OnlyB() float64 { return o.Union - o.A }

// StdErr returns the standard errors of Intersection, OnlyA and OnlyB,
// from the first-order (delta method) covariance of two element estimates
// made at one size n with k hash functions:
//
//	Cov(m^_S, m^_T) = (n/k^2) phi(k |S ∩ T| / n),  phi(t) = e^t - 1 - t,
//
// so Var(OnlyB) = (n/k^2) (phi(t_U) - phi(t_A)) and Var(Intersection) =
// (n/k^2) (phi(t_U) + 2 phi(t_I) - phi(t_A) - phi(t_B)), with the
// estimates plugged in for the true counts (a negative intersection
// estimate counts as 0). For m elements alone this is the familiar
// sqrt(n phi(k m / n)) / k. The tests check the formula against the
// spread measured over random element sets.
func (o Overlap) StdErr() (intersection, onlyA, onlyB float64) {
	n := float64(o.SizeBytes * bitsPerByte)
	k := float64(o.HashFuncs)
	if n == 0 || k == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	phi := func(m float64) float64 {
		t := k * math.Max(m, 0) / n
		return math.Expm1(t) - t
	}
	scale := n / (k * k)
	pa, pb, pu, pi := phi(o.A), phi(o.B), phi(o.Union), phi(o.Intersection)
	sd := func(v float64) float64 { return math.Sqrt(math.Max(v, 0) * scale) }
	return sd(pu + 2*pi - pa - pb), sd(pu - pb), sd(pu - pa)
}

// EstimateOverlap estimates the union and intersection of the element sets
// of a and b. The filters must share tweak and hash count (else
// ErrParamsDiffer) and one size must divide the other (else
// ErrSizesNotNested); the larger is folded onto the smaller. It returns
// ErrNoElementInfo when either filter matches everything and ErrSaturated
// when the union of the two at the common size has every bit set (then
// neither estimate is finite for the union; each filter alone may still
// be estimated with Filter.EstimatedElements).
func EstimateOverlap(a, b *Filter) (Overlap, error) {
	for _, f := range []*Filter{a, b} {
		if f.Size() == 0 || f.HashFuncs() == 0 {
			return Overlap{}, fmt.Errorf("estimate overlap: %w: %d bytes, %d hash functions", ErrNoElementInfo, f.Size(), f.HashFuncs())
		}
	}
	if a.Tweak() != b.Tweak() || a.HashFuncs() != b.HashFuncs() {
		return Overlap{}, fmt.Errorf("estimate overlap: %w: tweaks %#x and %#x, %d and %d hash functions",
			ErrParamsDiffer, a.Tweak(), b.Tweak(), a.HashFuncs(), b.HashFuncs())
	}
	size := min(a.Size(), b.Size())
	fa, err := Fold(a, size)
	if err != nil {
		return Overlap{}, fmt.Errorf("estimate overlap: sizes %d and %d bytes: %w", a.Size(), b.Size(), ErrSizesNotNested)
	}
	fb, err := Fold(b, size)
	if err != nil {
		return Overlap{}, fmt.Errorf("estimate overlap: sizes %d and %d bytes: %w", a.Size(), b.Size(), ErrSizesNotNested)
	}
	union := fa.Clone()
	for i, x := range fb.bits {
		union.bits[i] |= x
	}
	union.set = uint32(popcount(union.bits))
	n, k := union.NumBits(), union.HashFuncs()
	xu := union.BitsSet()
	if xu >= n {
		return Overlap{}, fmt.Errorf("estimate overlap: %w: union of %d-byte filters", ErrSaturated, size)
	}
	o := Overlap{
		SizeBytes: size,
		HashFuncs: k,
		A:         EstimateElements(n, k, fa.BitsSet()),
		B:         EstimateElements(n, k, fb.BitsSet()),
		Union:     EstimateElements(n, k, xu),
	}
	o.Intersection = o.A + o.B - o.Union
	return o, nil
}

// EstimateUnion returns the estimate of |A ∪ B| for two filters of one
// tweak and hash count whose sizes nest: -(n/k) ln(1 - X_or/n) at the
// smaller size n. See EstimateOverlap for the errors.
func EstimateUnion(a, b *Filter) (float64, error) {
	o, err := EstimateOverlap(a, b)
	if err != nil {
		return math.NaN(), err
	}
	return o.Union, nil
}

// EstimateIntersection returns the estimate of |A ∩ B| = |A| + |B| -
// |A ∪ B| for two filters of one tweak and hash count whose sizes nest,
// every term estimated at the smaller size. See EstimateOverlap for the
// errors.
func EstimateIntersection(a, b *Filter) (float64, error) {
	o, err := EstimateOverlap(a, b)
	if err != nil {
		return math.NaN(), err
	}
	return o.Intersection, nil
}
