package bip37

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// BuildMerkleBlock returns the merkleblock message for block in which
// transaction i is matched when match(i, tx) is true: the partial merkle tree
// Core's CPartialMerkleTree constructor builds, under a copy of the block
// header. match is called once per transaction, in block order. A block
// without transactions yields a message with Transactions == 0 and no
// hashes or flags (Core's constructor has no defined result for it).
func BuildMerkleBlock(block *wire.MsgBlock, match func(i int, tx *wire.MsgTx) bool) *wire.MsgMerkleBlock {
	txids := make([]chainhash.Hash, len(block.Transactions))
	matched := make([]bool, len(block.Transactions))
	for i, tx := range block.Transactions {
		txids[i] = tx.TxHash()
		matched[i] = match(i, tx)
	}
	return buildMerkleBlock(&block.Header, txids, matched)
}

// FilterBlock does what a full node does to serve getdata MSG_FILTERED_BLOCK:
// it runs f.MatchTxAndUpdate over the block's transactions in order (so f
// gains the outpoints its update mode adds) and returns the merkleblock with
// the indexes of the matched transactions.
func FilterBlock(f *Filter, block *wire.MsgBlock) (*wire.MsgMerkleBlock, []int) {
	txids := make([]chainhash.Hash, len(block.Transactions))
	matched := make([]bool, len(block.Transactions))
	var indexes []int
	for i, tx := range block.Transactions {
		txids[i] = tx.TxHash()
		if f.relevant(tx, &txids[i], true) {
			matched[i] = true
			indexes = append(indexes, i)
		}
	}
	return buildMerkleBlock(&block.Header, txids, matched), indexes
}

// buildMerkleBlock builds the partial merkle tree over txids with the
// given match set.
func buildMerkleBlock(header *wire.BlockHeader, txids []chainhash.Hash, matched []bool) *wire.MsgMerkleBlock {
	mb := &wire.MsgMerkleBlock{Header: *header, Transactions: uint32(len(txids))}
	if len(txids) == 0 {
		return mb
	}
	b := newTreeBuilder(txids, matched)
	b.traverse(uint(len(b.levels)-1), 0)
	mb.Hashes = b.hashes
	mb.Flags = make([]byte, (len(b.bits)+bitsPerByte-1)/bitsPerByte)
	for i, bit := range b.bits {
		if bit {
			mb.Flags[i/bitsPerByte] |= 1 << (i % bitsPerByte)
		}
	}
	return mb
}

// treeBuilder holds every level of the merkle tree (hashes and whether a
// node has a matched leaf below it), computed bottom-up once, so the
// depth-first traversal of Core's TraverseAndBuild does no rehashing.
type treeBuilder struct {
	levels  [][]chainhash.Hash
	parents [][]bool
	bits    []bool
	hashes  []*chainhash.Hash
}

// newTreeBuilder computes all levels over the leaves. The last node of an
// odd-width level is paired with itself, as in the block merkle root.
func newTreeBuilder(txids []chainhash.Hash, matched []bool) *treeBuilder {
	b := &treeBuilder{levels: [][]chainhash.Hash{txids}, parents: [][]bool{matched}}
	for hashes, marks := txids, matched; len(hashes) > 1; {
		width := (len(hashes) + 1) / 2
		up := make([]chainhash.Hash, width)
		upMarks := make([]bool, width)
		for p := range width {
			l, r := 2*p, 2*p+1
			if r == len(hashes) {
				r = l
			}
			up[p] = hashPair(&hashes[l], &hashes[r])
			upMarks[p] = marks[l] || marks[r]
		}
		b.levels = append(b.levels, up)
		b.parents = append(b.parents, upMarks)
		hashes, marks = up, upMarks
	}
	return b
}

// traverse is Core's TraverseAndBuild.
func (b *treeBuilder) traverse(height uint, pos int) {
	parent := b.parents[height][pos]
	b.bits = append(b.bits, parent)
	if height == 0 || !parent {
		h := b.levels[height][pos]
		b.hashes = append(b.hashes, &h)
		return
	}
	b.traverse(height-1, pos*2)
	if pos*2+1 < len(b.levels[height-1]) {
		b.traverse(height-1, pos*2+1)
	}
}
