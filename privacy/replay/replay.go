package replay

import (
	"bytes"
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// Event is one transcript record as the adversary replays it.
type Event struct {
	// Index is the record's position among the transcript's filter
	// records (getdata records, Timeline.Requests, are not events).
	Index  int
	Record transcript.Record
	// State is the index in Timeline.States of the filter the record's
	// peer holds after it, or -1 when the peer holds none (a filterclear,
	// or a filteradd without a loaded filter).
	State int
	// Generation is the index in Timeline.Generations of the filterload
	// the peer's filter descends from, or -1.
	Generation int
	// Revealed is the element a filteradd sent in clear: the adversary
	// knows it is the wallet's.
	Revealed []byte
	// Note explains a record a node would have punished or ignored.
	Note string
}

// Generation is one filterload and the filteradds that followed it on the
// same peer: one independent draw of the wallet's filter.
type Generation struct {
	Index int
	Peer  string
	// Load is the event index of the filterload.
	Load int
	// Latest is the index in Timeline.States of the generation's filter
	// after its last filteradd.
	Latest int
}

// Timeline is the adversary's reconstruction of a transcript: every filter
// state each peer held, in order.
type Timeline struct {
	Events      []Event
	Generations []Generation
	// States holds every distinct filter state (by serialized content) in
	// order of first appearance. Two peers sent the same filter share one
	// state.
	States []*bip37.Filter
	// Requests are the transcript's getdata records (version 3), in
	// order: what the request pattern shows (the requests experiment).
	Requests []transcript.Record
}

// Notes on records a full node would not have accepted as sent.
const (
	noteAddWithoutFilter = "filteradd without a loaded filter (ignored by the node)"
	noteAddTooLarge      = "filteradd element over 520 bytes (the node punishes it)"
)

// Replay rebuilds the filters every peer held from the transcript records,
// in order. A filterload whose filter a node would reject fails the replay
// with ErrBadFilterRecord naming the record; a filteradd the node would
// ignore or punish still reveals its element and is kept with a Note.
func Replay(records []transcript.Record) (*Timeline, error) {
	tl := &Timeline{}
	records, tl.Requests = splitRequests(records)
	type peerState struct {
		filter *bip37.Filter
		gen    int
	}
	peers := map[string]*peerState{}
	index := map[string]int{} // serialized filter -> state index
	addState := func(f *bip37.Filter) int {
		key := string(f.Serialize())
		if i, ok := index[key]; ok {
			return i
		}
		index[key] = len(tl.States)
		tl.States = append(tl.States, f.Clone())
		return len(tl.States) - 1
	}
	for i, r := range records {
		ev := Event{Index: i, Record: r, State: -1, Generation: -1}
		ps := peers[r.Peer]
		if ps == nil {
			ps = &peerState{gen: -1}
			peers[r.Peer] = ps
		}
		switch r.Kind {
		case transcript.KindFilterLoad:
			f, err := bip37.Deserialize(r.Filter)
			if err != nil {
				return nil, fmt.Errorf("%w: record %d (seq %d, peer %s): %w", ErrBadFilterRecord, i, r.Seq, r.Peer, err)
			}
			ps.filter = f
			ps.gen = len(tl.Generations)
			ev.State = addState(f)
			tl.Generations = append(tl.Generations, Generation{Index: ps.gen, Peer: r.Peer, Load: i, Latest: ev.State})
		case transcript.KindFilterAdd:
			ev.Revealed = bytes.Clone(r.Data)
			switch {
			case bip37.CheckFilterAdd(r.Data) != nil:
				ev.Note = noteAddTooLarge
			case ps.filter == nil:
				ev.Note = noteAddWithoutFilter
			default:
				ps.filter.Add(r.Data)
				ev.State = addState(ps.filter)
				tl.Generations[ps.gen].Latest = ev.State
			}
		case transcript.KindFilterClear:
			ps.filter, ps.gen = nil, -1
		default:
			return nil, fmt.Errorf("%w: record %d: unknown kind %q", transcript.ErrBad, i, r.Kind)
		}
		if ps.filter != nil {
			ev.Generation = ps.gen
		}
		tl.Events = append(tl.Events, ev)
	}
	if len(tl.Generations) == 0 {
		return nil, ErrNoFilters
	}
	return tl, nil
}

// splitRequests separates the getdata records from the filter records,
// keeping the order of each.
func splitRequests(records []transcript.Record) (filters, requests []transcript.Record) {
	for _, r := range records {
		if r.Kind == transcript.KindGetData {
			requests = append(requests, r)
		} else {
			filters = append(filters, r)
		}
	}
	if len(requests) == 0 {
		return records, nil
	}
	return filters, requests
}

// MatchesAll reports whether f matches every element (a zero-length filter
// or one without hash functions, CVE-2013-5700): it tells the adversary
// nothing.
func MatchesAll(f *bip37.Filter) bool {
	return f.Size() == 0 || f.HashFuncs() == 0
}
