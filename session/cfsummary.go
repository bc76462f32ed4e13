package session

import (
	"time"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// CFSummary is what a sync over BIP157/158 fetched (Summary.CF): the
// agreed filter headers, the filters and the blocks fetched whole, with
// their bytes; FalsePositiveBlocks are fetched blocks that held nothing
// for the wallet; Conflicts the filter-header disagreements between peers
// that a block settled.
type CFSummary struct {
	FilterHeaders       int    `json:"filter_headers"`
	Filters             int    `json:"filters"`
	FilterBytes         uint64 `json:"filter_bytes"`
	Blocks              int    `json:"blocks_fetched"`
	BlockBytes          uint64 `json:"block_bytes"`
	FalsePositiveBlocks int    `json:"false_positive_blocks"`
	Conflicts           int    `json:"conflicts"`
	// Seen is what the peers saw of this run: the first filter height
	// asked (the birthday) and the whole blocks asked, per peer. Which
	// wallets they are consistent with needs the chain: privacy
	// analyze.
	Seen *privacy.BlockRequests `json:"seen,omitempty"`
}

// noteCF keeps a compact-filter record of this run (the bridge).
func (s *Session) noteCF(r transcript.Record) {
	s.mu.Lock()
	s.cfRecs = append(s.cfRecs, r)
	s.mu.Unlock()
}

// cfSummary returns the compact-filter part of st (nil over BIP37).
func (s *Session) cfSummary(st spv.Status) *CFSummary {
	if st.Protocol != spv.ProtocolBIP158 {
		return nil
	}
	c := st.CF
	s.mu.Lock()
	seen := privacy.SummarizeBlockRequests(s.cfRecs)
	s.mu.Unlock()
	return &CFSummary{Seen: seen,
		FilterHeaders: c.FilterHeaders, Filters: c.Filters, FilterBytes: c.FilterBytes,
		Blocks: c.Blocks, BlockBytes: c.BlockBytes, FalsePositiveBlocks: c.FalsePositives, Conflicts: c.Conflicts,
	}
}

// bip37Records returns recs without the compact-filter records, which the
// BIP37 meter does not read (privacy.AnalyzeBlockRequests does).
func bip37Records(recs []transcript.Record) []transcript.Record {
	out := recs[:0:0]
	for _, r := range recs {
		if !r.Kind.BIP158() {
			out = append(out, r)
		}
	}
	return out
}

// noteCFStart marks, over BIP158, the first peer ready as the start of
// the peer-to-peer sync (Timing.FirstFilterMs): where a BIP37 sync sends
// its first filterload.
func (s *Session) noteCFStart(at time.Time) {
	if s.cfg.Node.Protocol != spv.ProtocolBIP158 {
		return
	}
	s.mu.Lock()
	if s.firstFilter.IsZero() {
		s.firstFilter = at
	}
	s.mu.Unlock()
}

// overBIP158 reports whether the node syncs over BIP158 (the bridge): the
// BIP37 meter then reads no block.
func (s *Session) overBIP158() bool {
	switch {
	case s.cfMode:
		return true
	case s.cfg.Node.Protocol == spv.ProtocolBIP158:
		s.cfMode = true
	case s.cfg.Node.Protocol == spv.ProtocolAuto:
		s.cfMode = s.node.Status().Protocol == spv.ProtocolBIP158
	}
	return s.cfMode
}
