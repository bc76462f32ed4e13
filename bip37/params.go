package bip37

import (
	"fmt"
	"math"
)

// Core's constants from src/common/bloom.cpp, as literals so the float64
// values are the correctly rounded ones Core's compiler produces (the
// product math.Ln2*math.Ln2 is not guaranteed to round the same way).
const (
	ln2Squared = 0.4804530139182014246671025263266649717305529515945455
	ln2        = 0.6931471805599453094172321214581765680755001343602552
)

// maxFilterBits is the filter size cap expressed in bits.
const maxFilterBits = MaxFilterSize * bitsPerByte

// Params returns the filter size in bytes and the number of hash functions
// Bitcoin Core's CBloomFilter(nElements, nFPRate, ...) constructor chooses:
//
//	bits      = min((unsigned)(-1 / LN2SQUARED * nElements * log(nFPRate)), MAX_BLOOM_FILTER_SIZE*8)
//	sizeBytes = bits / 8
//	hashFuncs = min((unsigned)(sizeBytes*8 / nElements * LN2), MAX_HASH_FUNCS)
//
// The float expression is evaluated in Core's order, left to right, because
// floating-point multiplication is not associative. In the hash-function
// count, sizeBytes*8 / nElements is size_t arithmetic in Core, so the
// division truncates to an integer BEFORE the multiplication by ln 2.
// btcutil/bloom divides in floating point instead and so picks one more hash
// function whenever the dropped fraction lifts the product over an integer:
// for 5 elements at 0.05 both choose 3 bytes (24 bits), but Core computes
// 24/5 = 4, 4 ln 2 = 2.77 -> k = 2 while btcutil computes 4.8 ln 2 = 3.33 ->
// k = 3 (likewise 10 elements at 0.01: Core 5, btcutil 6). Note that Core's
// rule can yield k = 0 (5 elements at 0.3), a filter that matches
// everything.
//
// Two caveats, both outside the range where the results could matter: Core
// converts the double to unsigned int, which is undefined behaviour in C++
// when the value is 2^32 or more (elements near 2^32 with a tiny rate); this
// function saturates to the cap instead. And Go's math.Log and the C
// library's log may differ in the last ulp; the truncation to whole bits
// hides that unless the product lies within an ulp of an integer.
//
// elements must be at least 1 and fpRate must be in (0, 1); Params returns
// (0, 0) otherwise. NewFilter returns a typed error for those inputs.
func Params(elements uint32, fpRate float64) (sizeBytes uint32, hashFuncs uint32) {
	if validateParams(elements, fpRate) != nil {
		return 0, 0
	}
	bitsF := filterBits(elements, fpRate)
	nBits := uint32(maxFilterBits)
	if bitsF < maxFilterBits {
		nBits = uint32(bitsF)
	}
	sizeBytes = nBits / bitsPerByte
	perElement := sizeBytes * bitsPerByte / elements // integer division, as Core
	hashFuncs = uint32(float64(perElement) * ln2)
	return sizeBytes, min(hashFuncs, MaxHashFuncs)
}

// filterBits is Core's unbounded filter size in bits for elements at
// fpRate, evaluated in Core's order (see Params).
func filterBits(elements uint32, fpRate float64) float64 {
	return -1 / ln2Squared * float64(elements) * math.Log(fpRate)
}

// Capped reports whether the filter Params sizes for elements at fpRate is
// cut to MaxFilterSize: BIP37's formula asks for more bits than the cap
// allows, so the filter at its capacity cannot reach fpRate. A filter whose
// formula size is exactly the cap is not capped (it reaches the target).
// This is the one "capped" rule of the module: the light node reports it
// (FilterInfo.Capped), the bench reports it for its minimal client, and the
// simulators size with Params, which caps at the same point. It returns
// false for inputs Params rejects.
func Capped(elements uint32, fpRate float64) bool {
	if validateParams(elements, fpRate) != nil {
		return false
	}
	return filterBits(elements, fpRate) > maxFilterBits
}

// validateParams checks the sizing inputs Params and NewFilter accept.
func validateParams(elements uint32, fpRate float64) error {
	if elements == 0 {
		return ErrZeroElements
	}
	// The negated comparison also rejects NaN.
	if !(fpRate > 0 && fpRate < 1) {
		return fmt.Errorf("%w: got %v", ErrFPRateRange, fpRate)
	}
	return nil
}
