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
