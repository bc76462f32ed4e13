package bip37

import "math/bits"

// fastMod computes a % d for 32-bit a and a fixed non-zero 32-bit d with a
// multiplication instead of a division (Lemire, Kaser and Kurz, "Faster
// Remainder by Direct Computation", 2019). The result is exact for every
// 32-bit a and d, so filters stay bit-exact with Core's "% (size * 8)".
type fastMod struct {
	m uint64 // ceil(2^64 / d), or 0 when d == 1 (then every result is 0)
	d uint64
}

// newFastMod prepares the multiplier for divisor d, which must be non-zero.
func newFastMod(d uint32) fastMod {
	return fastMod{m: ^uint64(0)/uint64(d) + 1, d: uint64(d)}
}

// mod returns a % d.
func (f fastMod) mod(a uint32) uint32 {
	hi, _ := bits.Mul64(f.m*uint64(a), f.d)
	return uint32(hi)
}

// mod31 returns a % d like mod, for d < 2^31, with two 64-bit
// multiplications that need no 128-bit product: floor(((L>>32)+1)*d / 2^32)
// where L = m*a mod 2^64.
//
// Why it is exact: write a = q*d + r and m*d = 2^64 + c with 0 <= c < d.
// Then L = r*m + q*c (q*c < 2^32 <= m, so nothing wraps) and
// L*d/2^64 = r + δ with δ = c*a/2^64 < d/2^32. Rounding L up to the next
// multiple of 2^32 adds less than d/2^32, so the product lies in
// [r, r + 2d/2^32), and 2d/2^32 < 1 when d < 2^31: its floor is r. Filters
// have at most maxFilterBits bits.
func (f fastMod) mod31(a uint32) uint32 {
	t := f.m * uint64(a) >> 32
	return uint32((t*f.d + f.d) >> 32)
}
