package element

import "bytes"

// Candidate is one on-chain identity the adversary tests against a filter:
// an address, key or script. Forms are the byte strings by which it can
// appear in a BIP37 filter: Forms[0] is its primary form, the data push a
// server finds in an output script (hash160 for P2PKH and P2WPKH, script
// hash for P2SH, witness program for P2WSH and P2TR, the key itself for a
// bare pubkey); further forms are alternative encodings the adversary knows
// from the chain, such as the public key behind a hash160 once it has been
// revealed by a spend.
//
// FirstSeen is the height of the first block that paid the candidate, when
// the universe knows it (0 otherwise: the candidate is taken to be older
// than every filter). A wallet watches an address from before it is first
// paid, so every filter loaded at or after FirstSeen holds a wallet
// address: the intersection attack requires a candidate to match exactly
// those filters.
type Candidate struct {
	Forms     [][]byte
	FirstSeen int32
}

// Key returns the primary form as a string, the candidate's identity.
func (c Candidate) Key() string {
	if len(c.Forms) == 0 {
		return ""
	}
	return string(c.Forms[0])
}

// Clone returns a deep copy of c, independent of any buffer c aliases.
func (c Candidate) Clone() Candidate {
	out := Candidate{Forms: make([][]byte, len(c.Forms)), FirstSeen: c.FirstSeen}
	for i, f := range c.Forms {
		out.Forms[i] = bytes.Clone(f)
	}
	return out
}

// Equal reports whether c and o have the same forms in the same order and
// the same first-seen height.
func (c Candidate) Equal(o Candidate) bool {
	if len(c.Forms) != len(o.Forms) || c.FirstSeen != o.FirstSeen {
		return false
	}
	for i := range c.Forms {
		if !bytes.Equal(c.Forms[i], o.Forms[i]) {
			return false
		}
	}
	return true
}

// Dedup returns the distinct candidates of cands by primary form, in order
// of first appearance; the forms of a repeated candidate are merged into
// its first occurrence (up to MaxFormsPerLine). Universes are assumed
// distinct: a candidate listed twice would be counted twice.
func Dedup(cands []Candidate) []Candidate {
	index := make(map[string]int, len(cands))
	out := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		if len(c.Forms) == 0 {
			continue
		}
		i, ok := index[c.Key()]
		if !ok {
			index[c.Key()] = len(out)
			out = append(out, c)
			continue
		}
		for _, f := range c.Forms[1:] {
			out[i] = withForm(out[i], f)
		}
	}
	return out
}
