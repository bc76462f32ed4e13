package spv

import (
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/wire"
)

// elementSet is the node's copy of the watcher's elements, read once with
// FilterElements and kept current with the deltas of ApplyBlock,
// ApplyMempoolTx and Rollback.
type elementSet struct {
	data [][]byte
	seen map[string]struct{}
	ops  map[wire.OutPoint]struct{}
	// opsLog lists every outpoint added, in order, with the height of
	// the block that added it (-1: none; append-only: a peer's opsHeld
	// is an index into it, checkers.go).
	opsLog []loggedOutPoint
}

// loggedOutPoint is an entry of elementSet.opsLog.
type loggedOutPoint struct {
	op     wire.OutPoint
	height int32
}

// newElementSet copies els.
func newElementSet(els watch.Elements) *elementSet {
	s := &elementSet{seen: make(map[string]struct{}, len(els.Data)), ops: make(map[wire.OutPoint]struct{}, len(els.OutPoints))}
	s.apply(watch.ElementDelta{Data: els.Data, OutPoints: els.OutPoints}, -1)
	return s
}

// apply adds and removes what d, from the block at height h (-1: no
// block), says: Data and Reserve join the data elements. A data element
// already held is not added twice.
func (s *elementSet) apply(d watch.ElementDelta, h int32) {
	for _, list := range [][][]byte{d.Data, d.Reserve} {
		for _, b := range list {
			if _, ok := s.seen[string(b)]; ok {
				continue
			}
			s.seen[string(b)] = struct{}{}
			s.data = append(s.data, b)
		}
	}
	for _, op := range d.OutPoints {
		s.ops[op] = struct{}{}
		s.opsLog = append(s.opsLog, loggedOutPoint{op: op, height: h})
	}
	for _, op := range d.Spent {
		delete(s.ops, op)
	}
}

// len returns the number of elements a filter must hold.
func (s *elementSet) len() int { return len(s.data) + len(s.ops) }

// snapshot returns the set as Elements (outpoints in no particular order).
func (s *elementSet) snapshot() watch.Elements {
	els := watch.Elements{Data: s.data, OutPoints: make([]wire.OutPoint, 0, len(s.ops))}
	for op := range s.ops {
		els.OutPoints = append(els.OutPoints, op)
	}
	return els
}
