package bip37

import (
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// refPMT is a plain transcription of Core's CPartialMerkleTree
// deserialization and ExtractMatches: vBits as one bool per flag bit, a
// sticky fBad that lets the traversal run on after a failure, and
// recursion over CalcTreeWidth. It reports only success or failure.
type refPMT struct {
	nTransactions uint32
	vBits         []bool
	vHash         []chainhash.Hash
	fBad          bool
}

func newRefPMT(numTxs uint32, hashes []*chainhash.Hash, flags []byte) *refPMT {
	p := &refPMT{nTransactions: numTxs}
	for _, b := range flags {
		for i := 0; i < 8; i++ {
			p.vBits = append(p.vBits, b&(1<<i) != 0)
		}
	}
	for _, h := range hashes {
		p.vHash = append(p.vHash, *h)
	}
	return p
}

func (p *refPMT) width(height int) uint32 {
	return uint32((uint64(p.nTransactions) + (1 << height) - 1) >> height)
}

func (p *refPMT) traverse(height int, pos uint32, bitsUsed, hashUsed *int, matches *[]chainhash.Hash, idx *[]uint32) chainhash.Hash {
	if *bitsUsed >= len(p.vBits) {
		p.fBad = true
		return chainhash.Hash{}
	}
	parent := p.vBits[*bitsUsed]
	*bitsUsed++
	if height == 0 || !parent {
		if *hashUsed >= len(p.vHash) {
			p.fBad = true
			return chainhash.Hash{}
		}
		h := p.vHash[*hashUsed]
		*hashUsed++
		if height == 0 && parent {
			*matches = append(*matches, h)
			*idx = append(*idx, pos)
		}
		return h
	}
	left := p.traverse(height-1, pos*2, bitsUsed, hashUsed, matches, idx)
	right := left
	if pos*2+1 < p.width(height-1) {
		right = p.traverse(height-1, pos*2+1, bitsUsed, hashUsed, matches, idx)
		if right == left {
			p.fBad = true
		}
	}
	return blockchain.HashMerkleBranches(&left, &right)
}

// extract returns the root and matches, and ok == false where Core's
// ExtractMatches returns the null hash.
func (p *refPMT) extract() (root chainhash.Hash, matches []chainhash.Hash, idx []uint32, ok bool) {
	if p.nTransactions == 0 || p.nTransactions > 4000000/240 ||
		len(p.vHash) > int(p.nTransactions) || len(p.vBits) < len(p.vHash) {
		return root, nil, nil, false
	}
	height := 0
	for p.width(height) > 1 {
		height++
	}
	bitsUsed, hashUsed := 0, 0
	root = p.traverse(height, 0, &bitsUsed, &hashUsed, &matches, &idx)
	if p.fBad || (bitsUsed+7)/8 != (len(p.vBits)+7)/8 || hashUsed != len(p.vHash) {
		return chainhash.Hash{}, nil, nil, false
	}
	return root, matches, idx, true
}
