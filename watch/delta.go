package watch

import "github.com/btcsuite/btcd/wire"

// ElementDelta is how a Watcher's filter elements changed while it applied
// a block, an unconfirmed transaction or a rollback: the data elements it
// started to watch, the outpoints it started to watch, and the outpoints
// it stopped watching (spent, or created by a block a rollback removed).
// Data elements are never removed: an address once watched stays
// watched. The node applies deltas to its own copy of the element set, so
// the watcher never hands the whole set over again.
type ElementDelta struct {
	Data      [][]byte
	OutPoints []wire.OutPoint
	Spent     []wire.OutPoint
}

// Empty reports whether the delta changes nothing.
func (d ElementDelta) Empty() bool {
	return len(d.Data) == 0 && len(d.OutPoints) == 0 && len(d.Spent) == 0
}

// Added reports whether the delta adds elements (what a filter must then
// hold); removals alone never require a new filter.
func (d ElementDelta) Added() bool { return len(d.Data) > 0 || len(d.OutPoints) > 0 }

// DeltaLog accumulates a watcher's element changes between two reports.
// An outpoint added and removed in between (a coin received and spent in
// one block) cancels out. The zero value is ready to use; it is not safe
// for concurrent use.
type DeltaLog struct {
	data [][]byte
	add  map[wire.OutPoint]struct{}
	del  map[wire.OutPoint]struct{}
}

// AddData records a new data element.
func (l *DeltaLog) AddData(b []byte) { l.data = append(l.data, b) }

// AddOutPoint records an outpoint that joined the set.
func (l *DeltaLog) AddOutPoint(op wire.OutPoint) {
	if _, ok := l.del[op]; ok {
		delete(l.del, op)
		return
	}
	if l.add == nil {
		l.add = make(map[wire.OutPoint]struct{})
	}
	l.add[op] = struct{}{}
}

// RemoveOutPoint records an outpoint that left the set.
func (l *DeltaLog) RemoveOutPoint(op wire.OutPoint) {
	if _, ok := l.add[op]; ok {
		delete(l.add, op)
		return
	}
	if l.del == nil {
		l.del = make(map[wire.OutPoint]struct{})
	}
	l.del[op] = struct{}{}
}

// Take returns the changes recorded since the last Take (or Reset) and
// starts a new log.
func (l *DeltaLog) Take() ElementDelta {
	d := ElementDelta{Data: l.data}
	for op := range l.add {
		d.OutPoints = append(d.OutPoints, op)
	}
	for op := range l.del {
		d.Spent = append(d.Spent, op)
	}
	l.Reset()
	return d
}

// Reset forgets the recorded changes (the whole set was just handed over).
func (l *DeltaLog) Reset() { *l = DeltaLog{} }
