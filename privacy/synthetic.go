package privacy

import "encoding/binary"

// Synthetic candidates: deterministic, cheap, never held in memory.

// Sizes of synthetic forms.
const (
	// SyntheticHashSize is the size of a synthetic primary form, a
	// hash160-like 20-byte string.
	SyntheticHashSize = 20
	// SyntheticPubKeySize is the size of a synthetic second form, a
	// compressed-public-key-like 33-byte string (0x02 or 0x03 prefix).
	SyntheticPubKeySize = 33
	// compressedEven is the prefix of a compressed public key with an even
	// Y; compressedEven|1 is the odd one.
	compressedEven = 0x02
)

// splitmix64 constants (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", 2014).
const (
	golden64  = 0x9e3779b97f4a7c15
	splitMul1 = 0xbf58476d1ce4e5b9
	splitMul2 = 0x94d049bb133111eb
	splitSh1  = 30
	splitSh2  = 27
	splitSh3  = 31
)

// Lanes of the counter: each candidate draws hashLanes words for its
// primary form and pubKeyLanes for its second form.
const (
	hashLanes   = 3
	pubKeyLanes = 4
	totalLanes  = hashLanes + pubKeyLanes
	wordBytes   = 8
	wordBits    = 64
)

// mix64 is splitmix64's finalizer: a bijective 64-bit mixer whose outputs
// pass BigCrush when fed a Weyl sequence.
func mix64(z uint64) uint64 {
	z = (z ^ z>>splitSh1) * splitMul1
	z = (z ^ z>>splitSh2) * splitMul2
	return z ^ z>>splitSh3
}

// Synthetic is an indexed universe of Count pseudorandom candidates drawn
// from Seed: candidate i is a fixed function of (Seed, i), so any range can
// be generated independently and a run is reproducible. Candidates of
// different seeds are independent (a collision needs two equal 160-bit
// strings). With PubKeys each candidate also carries a 33-byte second form
// drawn independently of the first, standing for the public key behind a
// hash160; the filter test cannot tell independent pseudorandom strings
// from real key and hash pairs, and generating them is a thousand times
// cheaper than computing real hash160s.
type Synthetic struct {
	Seed    uint64
	Count   uint64
	PubKeys bool
}

// Len implements IndexedUniverse.
func (s Synthetic) Len() uint64 { return s.Count }

// Fill implements IndexedUniverse. Fill is safe for concurrent use with
// distinct candidates.
func (s Synthetic) Fill(i uint64, c *Candidate) {
	forms := 1
	if s.PubKeys {
		forms = 2
	}
	if cap(c.Forms) < forms {
		c.Forms = make([][]byte, forms)
	}
	c.Forms, c.FirstSeen = c.Forms[:forms], 0
	ms, first := mix64(s.Seed), i*totalLanes
	c.Forms[0] = syntheticHash(c.Forms[0], ms, first)
	if s.PubKeys {
		c.Forms[1] = syntheticPubKey(c.Forms[1], ms, first+hashLanes)
	}
}

// lane returns word j of the stream whose mixed seed is ms: splitmix64's
// output for counter j.
func lane(ms, j uint64) uint64 {
	return mix64(ms + (j+1)*golden64)
}

// syntheticHash fills a 20-byte form from the three lanes starting at
// first.
func syntheticHash(buf []byte, ms, first uint64) []byte {
	if cap(buf) < SyntheticHashSize {
		buf = make([]byte, SyntheticHashSize)
	}
	buf = buf[:SyntheticHashSize]
	binary.LittleEndian.PutUint64(buf[0:], lane(ms, first))
	binary.LittleEndian.PutUint64(buf[wordBytes:], lane(ms, first+1))
	binary.LittleEndian.PutUint32(buf[2*wordBytes:], uint32(lane(ms, first+2)))
	return buf
}

// syntheticPubKey fills a 33-byte compressed-key-like form from the four
// lanes starting at first.
func syntheticPubKey(buf []byte, ms, first uint64) []byte {
	if cap(buf) < SyntheticPubKeySize {
		buf = make([]byte, SyntheticPubKeySize)
	}
	buf = buf[:SyntheticPubKeySize]
	var w uint64
	for j := range uint64(pubKeyLanes) {
		w = lane(ms, first+j)
		binary.LittleEndian.PutUint64(buf[1+j*wordBytes:], w)
	}
	buf[0] = compressedEven | byte(w>>(wordBits-1))
	return buf
}

var _ IndexedUniverse = Synthetic{}
