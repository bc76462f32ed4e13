package scan

import "math/bits"

// bitsetWordBits is the number of bits per Bitset word.
const bitsetWordBits = 64

// Bitset is a fixed-size set of small integers (filter indexes).
type Bitset []uint64

// NewBitset returns an empty bitset that can hold 0..n-1.
func NewBitset(n int) Bitset {
	return make(Bitset, (n+bitsetWordBits-1)/bitsetWordBits)
}

// Set adds i.
func (b Bitset) Set(i int) { b[i/bitsetWordBits] |= 1 << (uint(i) % bitsetWordBits) }

// Has reports whether i is in the set.
func (b Bitset) Has(i int) bool {
	return i/bitsetWordBits < len(b) && b[i/bitsetWordBits]&(1<<(uint(i)%bitsetWordBits)) != 0
}

// Count returns the number of members.
func (b Bitset) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// ContainsAll reports whether every member of sub is in b.
func (b Bitset) ContainsAll(sub Bitset) bool {
	for i, w := range sub {
		var have uint64
		if i < len(b) {
			have = b[i]
		}
		if w&^have != 0 {
			return false
		}
	}
	return true
}

// Or adds every member of o to b; o must not be longer than b.
func (b Bitset) Or(o Bitset) {
	for i, w := range o {
		b[i] |= w
	}
}
