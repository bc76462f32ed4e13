package headers

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// work is an unsigned 128-bit amount of proof of work. Bitcoin's total work
// is about 2^96 today; a header whose own work reached 2^128 would need
// about 2^128 hashes, so 128 bits cannot overflow in practice, and the
// arithmetic saturates rather than wraps if it ever did.
type work struct{ hi, lo uint64 }

// add returns w + v, saturating at the maximum.
func (w work) add(v work) work {
	lo, c := bits.Add64(w.lo, v.lo, 0)
	hi, c := bits.Add64(w.hi, v.hi, c)
	if c != 0 {
		return work{math.MaxUint64, math.MaxUint64}
	}
	return work{hi, lo}
}

// cmp returns -1, 0 or 1 as w is less than, equal to or greater than v.
func (w work) cmp(v work) int {
	switch {
	case w.hi < v.hi:
		return -1
	case w.hi > v.hi:
		return 1
	case w.lo < v.lo:
		return -1
	case w.lo > v.lo:
		return 1
	}
	return 0
}

// big returns w as a big.Int.
func (w work) big() *big.Int {
	b := new(big.Int).SetUint64(w.hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(w.lo))
}

// workFromBig converts a non-negative big.Int, saturating above 2^128-1.
func workFromBig(b *big.Int) work {
	if b.Sign() <= 0 {
		return work{}
	}
	if b.BitLen() > 128 {
		return work{math.MaxUint64, math.MaxUint64}
	}
	var buf [16]byte
	b.FillBytes(buf[:])
	return work{binary.BigEndian.Uint64(buf[:8]), binary.BigEndian.Uint64(buf[8:])}
}

// node is the in-memory record of one stored header: 64 bytes. Its index
// in Store.nodes is also its record number in headers.dat.
type node struct {
	hash   chainhash.Hash
	work   work // cumulative, genesis included
	parent int32
	height int32
	bits   uint32
	time   uint32
}

// noParent is the parent index of the genesis node.
const noParent = -1

// hashKey is the map key for a hash: 8 bytes from its low end, which are
// uniformly distributed (the leading zero bytes of proof of work are at the
// other end).
func hashKey(h *chainhash.Hash) uint64 {
	return binary.LittleEndian.Uint64(h[:8])
}

// hashIndex maps hashes to node indexes with 12-byte map entries; the rare
// hashes that share a key with an earlier one live in a small overflow map.
type hashIndex struct {
	byKey    map[uint64]int32
	overflow map[chainhash.Hash]int32
}

func newHashIndex(capacity int) hashIndex {
	return hashIndex{
		byKey:    make(map[uint64]int32, capacity),
		overflow: make(map[chainhash.Hash]int32),
	}
}

// lookup returns the index of hash in nodes.
func (x *hashIndex) lookup(nodes []node, h *chainhash.Hash) (int32, bool) {
	i, ok := x.byKey[hashKey(h)]
	if !ok {
		return 0, false
	}
	if nodes[i].hash == *h {
		return i, true
	}
	i, ok = x.overflow[*h]
	return i, ok
}

// insert records that nodes[i] has hash h, which must not be present.
func (x *hashIndex) insert(h *chainhash.Hash, i int32) {
	k := hashKey(h)
	if _, taken := x.byKey[k]; taken {
		x.overflow[*h] = i
		return
	}
	x.byKey[k] = i
}

// remove undoes insert of nodes[i] (used to roll back a failed write).
// Nodes must be removed newest first: a key's owner in byKey is always
// older than the nodes in overflow that share its key.
func (x *hashIndex) remove(h *chainhash.Hash, i int32) {
	if _, ok := x.overflow[*h]; ok {
		delete(x.overflow, *h)
		return
	}
	if j, ok := x.byKey[hashKey(h)]; ok && j == i {
		delete(x.byKey, hashKey(h))
	}
}
