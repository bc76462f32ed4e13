package tui

import (
	"math/bits"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/spv"
)

// Bounds of the filter bookkeeping.
const (
	// maxFilterMeta is the number of filterloads whose size the detail
	// view can name (by transcript sequence number).
	maxFilterMeta = 256
	// maxPeerFilters is the number of peers whose last filter is kept
	// for the reload diff (each at most bip37.MaxFilterSize bytes).
	maxPeerFilters = 64
)

// sentFilter is the last filter sent to one peer.
type sentFilter struct {
	seq uint64
	f   *bip37.Filter
}

// filterMeta is what the detail view says of the filter a peer held.
type filterMeta struct {
	peer   string
	height int32
	reason string
	nBits  uint64
	k      uint32
	at     time.Time
}

// filterPicture is the latest filterload, decoded when it arrives: the
// figures the filter panel and the picture show, and the bits that
// changed since the previous filter sent to the same peer.
type filterPicture struct {
	ok      bool // the record carried a filter that decodes
	seq     uint64
	peer    string
	height  int32
	nBytes  int
	nBits   uint64
	k       uint32
	tweak   uint32
	flags   string
	bitsSet uint64
	fill    float64 // bitsSet / nBits
	est     float64 // m^, -1 when every bit is set
	rate    float64 // fill^k
	bits    []byte  // the filter's array (the decoded filter's, not copied)
	// prev is the previous filter sent to the same peer; diff holds the
	// bits set now and not then (only when both have the same size, k
	// and tweak: otherwise the same element sets other bits).
	havePrev   bool
	prevSeq    uint64
	comparable bool
	added      uint64 // bits set now, not before
	cleared    uint64 // bits set before, not now
	diff       []byte
}

// noteFilter reads a filterload's record for the filter panel, the
// picture and the detail view.
func (s *state) noteFilter(e spv.FilterLoaded) {
	s.filterGen++
	rec := e.Record
	if len(rec.Filter) == 0 {
		s.pic = filterPicture{}
		return
	}
	f, err := rec.Bloom() // the node's own filter, shared: read only
	if err != nil {
		s.pic = filterPicture{}
		return
	}
	p := filterPicture{ok: true, seq: rec.Seq, peer: e.Peer, height: rec.Height, nBytes: f.Size(), nBits: f.NumBits(),
		k: f.HashFuncs(), tweak: f.Tweak(), flags: f.Flags().String(), bitsSet: f.BitsSet(), est: f.EstimatedElements(),
		rate: f.CurrentFPRate(), bits: f.Bits()}
	if p.nBits > 0 {
		p.fill = float64(p.bitsSet) / float64(p.nBits)
	}
	if prev, ok := s.peerFilters[e.Peer]; ok {
		p.havePrev, p.prevSeq = true, prev.seq
		old := prev.f
		if old.Size() == f.Size() && old.HashFuncs() == f.HashFuncs() && old.Tweak() == f.Tweak() {
			p.comparable = true
			p.diff = make([]byte, len(p.bits))
			for i, b := range p.bits {
				o := old.Bits()[i]
				p.diff[i] = b &^ o
				p.added += uint64(bits.OnesCount8(b &^ o))
				p.cleared += uint64(bits.OnesCount8(o &^ b))
			}
		}
	}
	if _, ok := s.peerFilters[e.Peer]; ok || len(s.peerFilters) < maxPeerFilters {
		s.peerFilters[e.Peer] = sentFilter{seq: rec.Seq, f: f}
	}
	s.pic = p
	if _, dup := s.filterMeta[rec.Seq]; !dup {
		if old, evicted := s.metaOrder.push(rec.Seq); evicted {
			delete(s.filterMeta, old)
		}
	}
	s.filterMeta[rec.Seq] = filterMeta{peer: e.Peer, height: rec.Height, reason: e.Reason, nBits: p.nBits, k: p.k, at: e.Time}
}
