package watch

import "github.com/btcsuite/btcd/wire"

// ElementDelta is how a Watcher's filter elements changed while it applied
// a block, an unconfirmed transaction or a rollback: the data elements it
// started to watch, the outpoints it started to watch, and the outpoints
// it stopped watching (spent, or created by a block a rollback removed).
// Data elements are never removed: an address once watched stays
// watched. The node applies deltas to its own copy of the element set, so
// the watcher never hands the whole set over again.
//
// A watcher with a lookahead reserve (an HD wallet that derives keys ahead
// of its gap limit) tells the node which elements it needs now and which
// only later: Data are new elements a filter must hold from now on (a
// payment may use them), Reserve are new elements derived ahead of need
// (no payment can use them before more payments have), and Due are
// elements watched earlier as Reserve that a filter must hold from now on.
// The node adds Data and Reserve to its set, loads them into the peers'
// filters at its next scheduled reload, and re-fetches blocks only when
// the download peer's filter lacks an element of Data or Due (the
// gap-limit race). A watcher without a reserve puts everything in Data.
type ElementDelta struct {
	Data      [][]byte
	OutPoints []wire.OutPoint
	Spent     []wire.OutPoint
	// Reserve are new elements derived ahead of need.
	Reserve [][]byte
	// Due are elements already watched (reported in an earlier Reserve)
	// that a filter must hold from now on.
	Due [][]byte
}

// Empty reports whether the delta changes nothing.
func (d ElementDelta) Empty() bool {
	return len(d.Data) == 0 && len(d.OutPoints) == 0 && len(d.Spent) == 0 &&
		len(d.Reserve) == 0 && len(d.Due) == 0
}

// Added reports whether the delta adds elements to the set; removals
// alone never require a new filter.
func (d ElementDelta) Added() bool {
	return len(d.Data) > 0 || len(d.OutPoints) > 0 || len(d.Reserve) > 0
}

// DeltaLog accumulates a watcher's element changes between two reports.
// An outpoint added and removed in between (a coin received and spent in
// one block) cancels out. The zero value is ready to use; it is not safe
// for concurrent use.
type DeltaLog struct {
	data    [][]byte
	reserve [][]byte
	due     [][]byte
	add     map[wire.OutPoint]struct{}
	del     map[wire.OutPoint]struct{}
}

// AddData records a new data element a filter must hold from now on.
func (l *DeltaLog) AddData(b []byte) { l.data = append(l.data, b) }

// AddReserve records a new data element derived ahead of need (see
// ElementDelta.Reserve).
func (l *DeltaLog) AddReserve(b []byte) { l.reserve = append(l.reserve, b) }

// AddDue records that an element recorded earlier with AddReserve is
// needed from now on (see ElementDelta.Due).
func (l *DeltaLog) AddDue(b []byte) { l.due = append(l.due, b) }

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
	d := ElementDelta{Data: l.data, Reserve: l.reserve, Due: l.due}
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
