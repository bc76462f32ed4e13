package element

import (
	"bytes"
	"hash/maphash"
	"math/bits"
)

// setLoad is the inverse load factor of a Set's table: four
// slots per element keep probe chains short.
const setLoad = 4

// Set is an immutable set of byte strings with a membership test
// cheap enough to run on every candidate of a billion-candidate scan: an
// open-addressing table of 64-bit fingerprints, verified against the stored
// element on a fingerprint hit. It is safe for concurrent readers.
type Set struct {
	seed     maphash.Seed
	prints   []uint64 // 0 marks an empty slot
	slotElem []int32  // element index of each occupied slot
	elems    [][]byte
	mask     uint64
}

// NewSet returns the set of elements (copied; duplicates and empty
// strings are dropped).
func NewSet(elements [][]byte) *Set {
	size := uint64(1)
	if n := uint64(len(elements)) * setLoad; n > 1 {
		size = 1 << bits.Len64(n-1)
	}
	s := &Set{
		seed:     maphash.MakeSeed(),
		prints:   make([]uint64, size),
		slotElem: make([]int32, size),
		mask:     size - 1,
	}
	for _, e := range elements {
		if len(e) == 0 || s.Contains(e) {
			continue
		}
		s.insert(bytes.Clone(e))
	}
	return s
}

// NewSetFromCandidates returns the set of every form of cands.
func NewSetFromCandidates(cands []Candidate) *Set {
	var all [][]byte
	for _, c := range cands {
		all = append(all, c.Forms...)
	}
	return NewSet(all)
}

// fingerprint returns b's nonzero 64-bit hash.
func (s *Set) fingerprint(b []byte) uint64 {
	return maphash.Bytes(s.seed, b) | 1
}

// insert adds e, which is not in the set.
func (s *Set) insert(e []byte) {
	fp := s.fingerprint(e)
	for i := fp & s.mask; ; i = (i + 1) & s.mask {
		if s.prints[i] == 0 {
			s.prints[i] = fp
			s.slotElem[i] = int32(len(s.elems))
			s.elems = append(s.elems, e)
			return
		}
	}
}

// Contains reports whether b is in the set.
func (s *Set) Contains(b []byte) bool {
	if s == nil || len(s.elems) == 0 {
		return false
	}
	fp := s.fingerprint(b)
	for i := fp & s.mask; ; i = (i + 1) & s.mask {
		switch s.prints[i] {
		case 0:
			return false
		case fp:
			if bytes.Equal(s.elems[s.slotElem[i]], b) {
				return true
			}
		}
	}
}

// ContainsAny reports whether any form of c is in the set.
func (s *Set) ContainsAny(c Candidate) bool {
	for _, f := range c.Forms {
		if s.Contains(f) {
			return true
		}
	}
	return false
}

// Len returns the number of distinct elements.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.elems)
}

// Elements returns the elements in insertion order. The caller must not
// modify them.
func (s *Set) Elements() [][]byte {
	if s == nil {
		return nil
	}
	return s.elems
}
