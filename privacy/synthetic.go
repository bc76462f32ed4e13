package privacy

import "github.com/bloomwatch/bloomwatch/privacy/internal/synth"

// Synthetic candidates: deterministic, cheap, never held in memory. The
// generator (splitmix64 lanes) lives in internal/synth, which the
// experiments share for their synthetic keys.

// Sizes of synthetic forms.
const (
	// SyntheticHashSize is the size of a synthetic primary form, a
	// hash160-like 20-byte string.
	SyntheticHashSize = synth.HashSize
	// SyntheticPubKeySize is the size of a synthetic second form, a
	// compressed-public-key-like 33-byte string (0x02 or 0x03 prefix).
	SyntheticPubKeySize = synth.PubKeySize
)

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
	ms, first := synth.Mix64(s.Seed), i*synth.TotalLanes
	c.Forms[0] = synth.Hash(c.Forms[0], ms, first)
	if s.PubKeys {
		c.Forms[1] = synth.PubKey(c.Forms[1], ms, first+synth.HashLanes)
	}
}

var _ IndexedUniverse = Synthetic{}
