package element

import (
	"fmt"
	"sort"
)

// Universe is a stream of candidates: every address, key or script the
// adversary considers, typically everything seen on chain up to a height.
// Streams are consumed once and may be far larger than memory.
type Universe interface {
	// Next stores the next candidate in c and reports whether there was
	// one. The byte slices it stores may alias the universe's buffers or
	// c's previous ones and stay valid only until the next call; Clone
	// what must be kept.
	Next(c *Candidate) bool
	// Err returns the error that ended the stream early, or nil after a
	// complete stream.
	Err() error
}

// IndexedUniverse is a universe with random access, which a scan splits
// into ranges for its workers. Fill must be safe for concurrent callers
// that pass distinct candidates.
type IndexedUniverse interface {
	// Len returns the number of candidates.
	Len() uint64
	// Fill stores candidate i (0 <= i < Len) in c, reusing c's buffers
	// where it can. The stored slices stay valid until c is filled again.
	Fill(i uint64, c *Candidate)
}

// Stream returns a Universe that yields the candidates of ix in order.
func Stream(ix IndexedUniverse) Universe {
	return &rangeStream{ix: ix, next: 0, end: ix.Len()}
}

// StreamRange returns a Universe over candidates lo to hi-1 of ix.
func StreamRange(ix IndexedUniverse, lo, hi uint64) Universe {
	return &rangeStream{ix: ix, next: lo, end: hi}
}

// Indexed reports whether u is a stream over an indexed universe, made by
// Stream or StreamRange, and if so returns that universe and the index
// range lo..hi-1 that u has yet to yield, which it then counts as read: a
// reader that handles the range itself (scan.Run splits it across workers)
// takes it whole.
func Indexed(u Universe) (ix IndexedUniverse, lo, hi uint64, ok bool) {
	rs, ok := u.(*rangeStream)
	if !ok {
		return nil, 0, 0, false
	}
	lo, hi = rs.next, rs.end
	rs.next = rs.end
	return rs.ix, lo, hi, true
}

// rangeStream walks an index range of an IndexedUniverse.
type rangeStream struct {
	ix        IndexedUniverse
	next, end uint64
}

// Next implements Universe.
func (s *rangeStream) Next(c *Candidate) bool {
	if s.next >= s.end {
		return false
	}
	s.ix.Fill(s.next, c)
	s.next++
	return true
}

// Err implements Universe; an index range never fails.
func (s *rangeStream) Err() error { return nil }

// SliceUniverse is an in-memory universe, for element files, chains read
// over RPC and tests.
type SliceUniverse []Candidate

// Len implements IndexedUniverse.
func (s SliceUniverse) Len() uint64 { return uint64(len(s)) }

// Fill implements IndexedUniverse. It copies into c's buffers: handing
// out the stored slices would let the next Fill from another universe
// overwrite them.
func (s SliceUniverse) Fill(i uint64, c *Candidate) { *c = CloneInto(*c, s[i]) }

var _ IndexedUniverse = SliceUniverse(nil)

// Concat is the concatenation of indexed universes, itself indexed.
type Concat struct {
	parts  []IndexedUniverse
	starts []uint64 // starts[i] is the global index of parts[i]'s first candidate
	total  uint64
}

// NewConcat returns the concatenation of parts, in order.
func NewConcat(parts ...IndexedUniverse) *Concat {
	c := &Concat{parts: parts, starts: make([]uint64, len(parts))}
	for i, p := range parts {
		c.starts[i] = c.total
		c.total += p.Len()
	}
	return c
}

// Len implements IndexedUniverse.
func (c *Concat) Len() uint64 { return c.total }

// Fill implements IndexedUniverse.
func (c *Concat) Fill(i uint64, cand *Candidate) {
	if i >= c.total {
		panic(fmt.Sprintf("privacy: Concat.Fill index %d of %d", i, c.total))
	}
	// The last part whose start is <= i; empty parts share a start with
	// their successor and are skipped by searching for the first start > i.
	p := sort.Search(len(c.starts), func(j int) bool { return c.starts[j] > i }) - 1
	c.parts[p].Fill(i-c.starts[p], cand)
}

// Parts returns the universes c concatenates, in order.
func (c *Concat) Parts() []IndexedUniverse { return append([]IndexedUniverse(nil), c.parts...) }

var _ IndexedUniverse = (*Concat)(nil)

// CloneInto copies src into dst's buffers, growing them as needed, and
// returns dst: a batch slot reuses its memory from one batch to the next.
func CloneInto(dst, src Candidate) Candidate {
	if cap(dst.Forms) < len(src.Forms) {
		dst.Forms = make([][]byte, len(src.Forms))
	}
	dst.Forms = dst.Forms[:len(src.Forms)]
	for i, f := range src.Forms {
		dst.Forms[i] = append(dst.Forms[i][:0], f...)
	}
	dst.FirstSeen = src.FirstSeen
	return dst
}
