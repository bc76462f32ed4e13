package spv

import (
	"fmt"

	"github.com/bloomwatch/bloomwatch/transcript"
)

// CFRequested reports a compact-filter request recorded in the privacy
// transcript before it was sent (transcript.KindGetCFilters or
// KindGetBlock): what a BIP157/158 peer learns of the client.
type CFRequested struct {
	At
	Record transcript.Record
}

// recordCF writes what a compact-filter request shows ps, count blocks
// from height h, to the transcript and publishes it (CFRequested). When
// the record cannot be written the sync stops and the request is not
// sent: bloomwatch sends no request its user cannot account for. Filter
// headers and checkpoints (from the genesis block, the same for every
// client) are not recorded.
func (cf *cfSync) recordCF(ps *peerState, kind transcript.Kind, h, count int32, check bool) bool {
	m := cf.m
	reason := transcript.ReasonSync
	switch {
	case check:
		reason = transcript.ReasonCheck
	case m.liveFrom > 0 && h > m.liveFrom:
		reason = transcript.ReasonLive
	}
	rec, err := m.n.trans.Append(transcript.Record{
		Time: m.n.clock.Now(), Peer: ps.addr, Height: h, Kind: kind, Count: int64(count),
		Reason: reason, Via: ps.via, Transport: ps.transport,
	})
	if err != nil {
		m.fail(fmt.Errorf("%w: %s to %s not sent: %w", ErrTranscriptWrite, kind, ps.addr, err))
		return false
	}
	m.n.publish(CFRequested{At: At{Time: rec.Time}, Record: rec})
	return true
}
