package bip37

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// ExtractMatches checks a partial merkle tree exactly as Bitcoin Core's
// CPartialMerkleTree::ExtractMatches does and returns the root it computes,
// the matched txids in block order and their positions in the block.
//
// The checks, each failing with a *MerkleError whose Reason names it:
// numTxs is 0; numTxs exceeds MaxMerkleTxs; more hashes than transactions;
// fewer flag bits (len(flags)*8) than hashes; the depth-first traversal runs
// out of flag bits or hashes; an inner node whose right child exists has
// identical children (CVE-2012-2459); the bits used, rounded up to whole
// bytes, do not fill flags exactly; not every hash was used. A nil entry in
// hashes fails with ReasonNilHash.
//
// The function adds nothing to Core's checks; in particular it does not
// compare the root with a block header (VerifyMerkleBlock does). Recursion
// depth is bounded by the tree height, at most 15 for MaxMerkleTxs.
//
// The proof authenticates txids and their positions, not the match flags
// of leaves: a peer may set or clear the flag of any leaf whose hash it
// sends (a matched transaction's sibling), adding or removing that txid
// from matches without breaking the proof. Callers must still test each
// received transaction against their own filter.
func ExtractMatches(numTxs uint32, hashes []*chainhash.Hash, flags []byte) (root chainhash.Hash, matches []chainhash.Hash, indexes []uint32, err error) {
	if numTxs == 0 {
		return root, nil, nil, merkleErrorf(ReasonNoTransactions, "0 transactions")
	}
	if numTxs > MaxMerkleTxs {
		return root, nil, nil, merkleErrorf(ReasonTooManyTransactions, "%d transactions, limit %d", numTxs, MaxMerkleTxs)
	}
	if uint64(len(hashes)) > uint64(numTxs) {
		return root, nil, nil, merkleErrorf(ReasonTooManyHashes, "%d hashes for %d transactions", len(hashes), numTxs)
	}
	numBits := uint64(len(flags)) * bitsPerByte
	if numBits < uint64(len(hashes)) {
		return root, nil, nil, merkleErrorf(ReasonNotEnoughBits, "%d flag bits for %d hashes", numBits, len(hashes))
	}
	for i, h := range hashes {
		if h == nil {
			return root, nil, nil, merkleErrorf(ReasonNilHash, "hash %d", i)
		}
	}
	x := extractor{numTxs: numTxs, hashes: hashes, flags: flags, numBits: numBits}
	root = x.traverse(treeHeight(numTxs), 0)
	if x.err != nil {
		return chainhash.Hash{}, nil, nil, x.err
	}
	if (x.bitsUsed+bitsPerByte-1)/bitsPerByte != uint64(len(flags)) {
		return chainhash.Hash{}, nil, nil, merkleErrorf(ReasonUnusedBits, "used %d of %d flag bits", x.bitsUsed, numBits)
	}
	if x.hashesUsed != len(hashes) {
		return chainhash.Hash{}, nil, nil, merkleErrorf(ReasonUnusedHashes, "used %d of %d hashes", x.hashesUsed, len(hashes))
	}
	return root, x.matches, x.indexes, nil
}

// VerifyMerkleBlock runs ExtractMatches on mb and also requires the computed
// root to equal mb.Header.MerkleRoot (ReasonMerkleRootMismatch). It does not
// check the header itself (proof of work, chain): that is the caller's job.
func VerifyMerkleBlock(mb *wire.MsgMerkleBlock) (matches []chainhash.Hash, indexes []uint32, err error) {
	if mb == nil {
		return nil, nil, fmt.Errorf("verify merkleblock: %w", ErrNilMessage)
	}
	root, matches, indexes, err := ExtractMatches(mb.Transactions, mb.Hashes, mb.Flags)
	if err != nil {
		return nil, nil, err
	}
	if root != mb.Header.MerkleRoot {
		return nil, nil, merkleErrorf(ReasonMerkleRootMismatch, "computed %v, header %v", root, mb.Header.MerkleRoot)
	}
	return matches, indexes, nil
}

// extractor holds the traversal state of ExtractMatches.
type extractor struct {
	numTxs     uint32
	hashes     []*chainhash.Hash
	flags      []byte
	numBits    uint64
	bitsUsed   uint64
	hashesUsed int
	matches    []chainhash.Hash
	indexes    []uint32
	err        error
}

// traverse is Core's TraverseAndExtract. It stops at the first failure;
// Core keeps going but rejects the tree all the same.
func (x *extractor) traverse(height uint, pos uint32) chainhash.Hash {
	if x.bitsUsed >= x.numBits {
		x.err = merkleErrorf(ReasonBitsExhausted, "needed more than %d flag bits", x.numBits)
		return chainhash.Hash{}
	}
	parentOfMatch := x.flags[x.bitsUsed/bitsPerByte]>>(x.bitsUsed%bitsPerByte)&1 == 1
	x.bitsUsed++
	if height == 0 || !parentOfMatch {
		if x.hashesUsed >= len(x.hashes) {
			x.err = merkleErrorf(ReasonHashesExhausted, "needed more than %d hashes", len(x.hashes))
			return chainhash.Hash{}
		}
		h := *x.hashes[x.hashesUsed]
		x.hashesUsed++
		if height == 0 && parentOfMatch {
			x.matches = append(x.matches, h)
			x.indexes = append(x.indexes, pos)
		}
		return h
	}
	left := x.traverse(height-1, pos*2)
	if x.err != nil {
		return chainhash.Hash{}
	}
	right := left
	if pos*2+1 < treeWidth(x.numTxs, height-1) {
		right = x.traverse(height-1, pos*2+1)
		if x.err != nil {
			return chainhash.Hash{}
		}
		if right == left {
			x.err = merkleErrorf(ReasonDuplicateHash, "height %d position %d", height, pos)
			return chainhash.Hash{}
		}
	}
	return hashPair(&left, &right)
}

// treeWidth is Core's CalcTreeWidth: the number of nodes at a height.
func treeWidth(numTxs uint32, height uint) uint32 {
	return uint32((uint64(numTxs) + (1 << height) - 1) >> height)
}

// treeHeight returns the height of the merkle tree over numTxs leaves.
func treeHeight(numTxs uint32) uint {
	var h uint
	for treeWidth(numTxs, h) > 1 {
		h++
	}
	return h
}

// hashPair returns the double SHA-256 of left || right.
func hashPair(left, right *chainhash.Hash) chainhash.Hash {
	var buf [2 * chainhash.HashSize]byte
	copy(buf[:chainhash.HashSize], left[:])
	copy(buf[chainhash.HashSize:], right[:])
	return chainhash.DoubleHashH(buf[:])
}
