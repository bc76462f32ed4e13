package bip37

// SeedStep is the difference between the MurmurHash3 seeds of successive
// hash functions of a filter (Core's 0xFBA4C795): hash function j of a
// filter with tweak t uses seed j*SeedStep + t, in uint32 arithmetic.
//
// Two filters therefore evaluate the same 32-bit hash h(x) for an element
// whenever one of their seeds coincides: for every j when they share the
// tweak, and for hash j+d of one and hash j of the other when their tweaks
// differ by d*SeedStep. The bit each selects is h(x) mod its size in bits,
// so such filters are correlated whatever their sizes.
const SeedStep uint32 = seedStep

// HashSeed returns the MurmurHash3 seed of hash function j of a filter
// with the given tweak: j*SeedStep + tweak (mod 2^32), as Core's
// CBloomFilter::Hash. The bit that hash function j selects for data in a
// filter of n bits is MurmurHash3(HashSeed(tweak, j), data) % n. SeedStep
// is odd, so the seeds of one filter's hash functions are all distinct.
func HashSeed(tweak, j uint32) uint32 {
	return j*SeedStep + tweak
}
