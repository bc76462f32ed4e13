package session

import (
	"time"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
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

// cfFeed is what the bridge counts of a sync over BIP158, from the
// node's BlockProcessed events: the live part of privacy.CFReading.
type cfFeed struct {
	// scanned counts the blocks delivered (their filter matched against
	// the wallet's scripts), wallet and falsePositive the fetched ones
	// that held a wallet transaction and those that held none; expected
	// sums BIP158's chance of a false match over the blocks that held
	// none; queries is the last block's query count.
	scanned, wallet, falsePositive, queries int
	expected                                float64
	// walletChanged is set when the wallet may hold other elements than
	// the BIP37 alternative was built for; alt is that alternative.
	walletChanged bool
	alt           *privacy.FilterAlternative
}

// block counts one delivered block (a block delivered again after the
// wallet grew was counted at its first delivery, as the node's CF
// status counts it).
func (c *cfFeed) block(ev spv.BlockProcessed) {
	if ev.Matched > 0 {
		c.walletChanged = true
	}
	if ev.Again || ev.CF == nil {
		return
	}
	c.scanned++
	c.queries = ev.CF.Queries
	switch {
	case ev.CF.Fetched && ev.Matched > 0:
		c.wallet++
		return
	case ev.CF.Fetched:
		c.falsePositive++
	}
	c.expected += privacy.BlockFPRate(ev.CF.Queries, ev.CF.FilterItems)
}

// withCF returns r with, over BIP158, what the peers learned so far
// (Reading.CF): the requests of the transcript (what they saw), the
// blocks delivered, and the BIP37 alternative for the wallet as it is.
func (s *Session) withCF(f *feed, r privacy.Reading) privacy.Reading {
	if !s.cfMode && s.cfg.Node.Protocol != spv.ProtocolBIP158 {
		return r
	}
	c := &f.cf
	s.mu.Lock()
	seen := privacy.SummarizeBlockRequests(s.cfRecs)
	s.mu.Unlock()
	cr := &privacy.CFReading{FiltersFrom: -1, PerPeer: []privacy.PeerBlocks{},
		Scanned: c.scanned, WalletBlocks: c.wallet, FalsePositiveBlocks: c.falsePositive,
		Queries: c.queries, ExpectedFPBlocks: c.expected,
		FPBlocksCI: stats.PoissonInterval(uint64(c.falsePositive), stats.ConfidenceLevel),
	}
	if seen != nil {
		cr.FiltersFrom, cr.Fetched, cr.PerPeer = seen.FiltersFrom, len(seen.Blocks), seen.PerPeer
	}
	if c.walletChanged {
		c.walletChanged = false
		c.alt = s.bip37Alternative(f)
	}
	cr.BIP37 = c.alt
	r.CF = cr
	return r
}

// bip37Alternative builds the filter a sync over BIP37 would load for
// the wallet now (its elements, the session's false-positive target, the
// node's tweak: what the node's own filter template uses) and returns the
// meter's reading of it alone; nil, logged, when it cannot be built. The
// filter is never sent.
func (s *Session) bip37Alternative(f *feed) *privacy.FilterAlternative {
	els, err := s.w.Elements()
	if err != nil {
		s.log.Warn("bip37 alternative: wallet elements not read", "err", err)
		return nil
	}
	rate := s.fpRate()
	fl, err := filterpolicy.BuildFilter(els, rate, s.node.Tweak())
	if err != nil {
		s.log.Warn("bip37 alternative: filter not built", "err", err)
		return nil
	}
	n, src := s.universe.size()
	c := privacy.WalletCounts{OnChain: f.counts.Used(), Watched: f.counts.Derived + f.counts.Imported, Elements: els.Len()}
	alt, err := privacy.MeasureFilter(privacy.MeterConfig{FPRate: rate}, fl, c, n, src)
	if err != nil {
		s.log.Warn("bip37 alternative: not measured", "err", err)
		return nil
	}
	return alt
}

// fpRate is the false-positive target a BIP37 filter of this session
// has (spv.Config.FPRate, filterpolicy.DefaultFPRate when unset).
func (s *Session) fpRate() float64 {
	if r := s.cfg.Node.FPRate; r > 0 {
		return r
	}
	return filterpolicy.DefaultFPRate
}
