package headers

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"

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

// sub returns w - v, or zero when v is larger.
func (w work) sub(v work) work {
	if w.cmp(v) <= 0 {
		return work{}
	}
	lo, b := bits.Sub64(w.lo, v.lo, 0)
	hi, _ := bits.Sub64(w.hi, v.hi, b)
	return work{hi, lo}
}

// mul returns w * n, saturating at the maximum.
func (w work) mul(n uint64) work {
	hiLo, lo := bits.Mul64(w.lo, n)
	hiHi, hi := bits.Mul64(w.hi, n)
	hi, c := bits.Add64(hi, hiLo, 0)
	if hiHi != 0 || c != 0 {
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

// chunkBits sets the arena's chunk size: 2^14 nodes, 1 MiB.
const chunkBits = 14

// maxNodes is the most headers a store holds: the hash index keeps node
// indexes in 27 bits. (134 million headers; mainnet has under a million.)
// A variable only so that a test can lower it.
var maxNodes = 1<<27 - 1

// nodeArena is a growable array of nodes in fixed-size chunks: appending
// never copies earlier nodes (a 900,000-node slice would be copied about
// fourteen times while growing) and the slack is at most one chunk.
type nodeArena struct {
	chunks [][]node
	n      int32
}

// at returns node i, which must be below len.
func (a *nodeArena) at(i int32) *node {
	return &a.chunks[i>>chunkBits][i&(1<<chunkBits-1)]
}

// len is the number of nodes.
func (a *nodeArena) len() int { return int(a.n) }

// push appends a node and returns its index.
func (a *nodeArena) push(n node) int32 {
	if int(a.n>>chunkBits) == len(a.chunks) {
		a.chunks = append(a.chunks, make([]node, 1<<chunkBits))
	}
	i := a.n
	*a.at(i) = n
	a.n++
	return i
}

// truncate drops the nodes from index n on.
func (a *nodeArena) truncate(n int32) { a.n = n }

// noParent is the parent index of the genesis node.
const noParent = -1

// hashKey is the table key of a hash: 8 bytes from its low end, which are
// uniformly distributed (the leading zero bytes of proof of work are at the
// other end).
func hashKey(h *chainhash.Hash) uint64 {
	return binary.LittleEndian.Uint64(h[:8])
}

// minIndexSlots is the smallest table.
const minIndexSlots = 1024

const (
	// slotIndexBits of a slot hold node index + 1 (0: empty slot).
	slotIndexBits = 27
	slotIndexMask = 1<<slotIndexBits - 1
)

// hashIndex maps hashes to node indexes: a list of open-addressing tables
// (linear probing) of uint32 slots, each slot holding node index + 1 in its
// low 27 bits and 5 more bits of the hash as a tag, so that a probe reads a
// node (a likely cache miss) only when the tag matches. The hash itself is
// not stored. Inserts go to the newest table until it is 3/4 full; then a
// table twice its size is added. Tables are never rehashed (a rehash reads
// every node and writes every slot again at random, which cost about as
// much as all the inserts together), so a lookup probes the tables, newest
// first, one cache miss each: after a sync from scratch about
// log2(headers/6,000) + 1 of them (8 for 900,000 headers), and one after
// Open, which sizes its table for the file. The tables hold 5 to 11 bytes
// a header, as one table growing by doubling would. Keys are mixed with a
// per-process random seed, so peers cannot aim headers at one probe
// sequence.
type hashIndex struct {
	tables []indexTable
	count  int
	seed   uint64
}

// indexTable is one table of a hashIndex.
type indexTable struct {
	slots []uint32
	shift uint // 64 - log2(len(slots))
	count int
}

func newHashIndex(capacity int) hashIndex {
	n := minIndexSlots
	for n*3/4 < capacity {
		n *= 2
	}
	return hashIndex{tables: []indexTable{newIndexTable(n)}, seed: rand.Uint64()}
}

func newIndexTable(slots int) indexTable {
	return indexTable{slots: make([]uint32, slots), shift: uint(64 - bits.TrailingZeros(uint(slots)))}
}

// home is the first slot of table t probed for key k, and tag the bits
// stored with the index.
func (x *hashIndex) home(t *indexTable, k uint64) (uint64, uint32) {
	m := (k ^ x.seed) * 0x9e3779b97f4a7c15
	return m >> t.shift, uint32(k>>59) << slotIndexBits
}

// lookup returns the index of hash in nodes.
func (x *hashIndex) lookup(nodes *nodeArena, h *chainhash.Hash) (int32, bool) {
	k := hashKey(h)
	for t := len(x.tables) - 1; t >= 0; t-- {
		tb := &x.tables[t]
		mask := uint64(len(tb.slots) - 1)
		i, tag := x.home(tb, k)
		for ; ; i = (i + 1) & mask {
			s := tb.slots[i]
			if s == 0 {
				break
			}
			if s&^slotIndexMask == tag {
				if idx := int32(s&slotIndexMask) - 1; nodes.at(idx).hash == *h {
					return idx, true
				}
			}
		}
	}
	return 0, false
}

// prefetch starts loading the slot where an insert of hash would probe
// first, so that an insert shortly after finds it in the cache.
func (x *hashIndex) prefetch(h *chainhash.Hash) {
	tb := &x.tables[len(x.tables)-1]
	j, _ := x.home(tb, hashKey(h))
	prefetch(&tb.slots[j])
}

// insert records node i, whose hash must not be present; i must be below
// maxNodes.
func (x *hashIndex) insert(nodes *nodeArena, i int32) {
	tb := &x.tables[len(x.tables)-1]
	if (tb.count+1)*4 > len(tb.slots)*3 {
		x.tables = append(x.tables, newIndexTable(2*len(tb.slots)))
		tb = &x.tables[len(x.tables)-1]
	}
	mask := uint64(len(tb.slots) - 1)
	j, tag := x.home(tb, hashKey(&nodes.at(i).hash))
	for tb.slots[j] != 0 {
		j = (j + 1) & mask
	}
	tb.slots[j] = tag | uint32(i+1)
	tb.count++
	x.count++
}

// remove deletes node i (used to roll back a failed write), shifting later
// members of its probe cluster back so that lookups stay correct.
func (x *hashIndex) remove(nodes *nodeArena, i int32) {
	k := hashKey(&nodes.at(i).hash)
	for t := len(x.tables) - 1; t >= 0; t-- {
		tb := &x.tables[t]
		mask := uint64(len(tb.slots) - 1)
		j, _ := x.home(tb, k)
		for tb.slots[j] != 0 && tb.slots[j]&slotIndexMask != uint32(i+1) {
			j = (j + 1) & mask
		}
		if tb.slots[j] == 0 {
			continue
		}
		tb.slots[j] = 0
		tb.count--
		x.count--
		for m := (j + 1) & mask; tb.slots[m] != 0; m = (m + 1) & mask {
			h, _ := x.home(tb, hashKey(&nodes.at(int32(tb.slots[m]&slotIndexMask)-1).hash))
			// Move slot m to the hole at j unless its home lies
			// cyclically in (j, m].
			if (m > j && (h <= j || h > m)) || (m < j && h <= j && h > m) {
				tb.slots[j], tb.slots[m] = tb.slots[m], 0
				j = m
			}
		}
		return
	}
}
