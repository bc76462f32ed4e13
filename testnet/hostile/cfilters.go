package hostile

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// The compact-filter scenarios (BIP157/158): each serves the upstream's
// filters, read over RPC (getcfilter), and lies about one thing. They are
// not in Scenarios (a BIP37 node never asks what they lie about);
// CFScenarios lists them.
const (
	// CFWrongFilter serves honest filter headers and, for every filter
	// asked, a filter that matches nothing (no element): a filter whose
	// hash the headers do not commit to.
	CFWrongFilter Scenario = "cf-wrong-filter"
	// CFWrongHeader serves, from the block after genesis on, filter
	// headers, checkpoints and filters of filters that match nothing,
	// consistent with one another: a chain that hides every payment,
	// which only another peer's headers and the block itself contradict.
	CFWrongHeader Scenario = "cf-wrong-header"
	// CFWithholdBlock serves honest filters and answers every getdata of
	// a whole block with notfound: it omits the matching blocks.
	CFWithholdBlock Scenario = "cf-withhold-block"
)

// cfScenarios is the catalogue of the compact-filter scenarios.
var cfScenarios = map[Scenario]info{
	CFWrongFilter:   {ReactBan, "serves filters its filter headers do not commit to (they match nothing)"},
	CFWrongHeader:   {ReactBan, "serves a consistent filter-header chain of filters that match nothing"},
	CFWithholdBlock: {ReactBan, "answers notfound for every block a filter matched"},
}

// CFScenarios returns the compact-filter scenarios, sorted by name.
func CFScenarios() []Scenario {
	return []Scenario{CFWithholdBlock, CFWrongFilter, CFWrongHeader}
}

// CFUpstream is an Upstream that serves compact filters (btcd's
// getcfilter RPC: *rpcclient.Client).
type CFUpstream interface {
	GetCFilter(hash *chainhash.Hash, filterType wire.FilterType) (*wire.MsgCFilter, error)
}

// errNoCFUpstream: the upstream does not serve compact filters.
var errNoCFUpstream = errors.New("hostile: the upstream serves no compact filters (no GetCFilter)")

// emptyFilter is the serialized basic filter of no element (N = 0).
var emptyFilter = []byte{0}

// honestFilter returns the upstream's basic filter of block hash.
func (s *session) honestFilter(hash chainhash.Hash) ([]byte, error) {
	up, ok := s.p.cfg.Upstream.(CFUpstream)
	if !ok {
		return nil, errNoCFUpstream
	}
	s.p.mu.Lock()
	data, ok := s.p.filters[hash]
	s.p.mu.Unlock()
	if ok {
		return data, nil
	}
	msg, err := up.GetCFilter(&hash, wire.GCSFilterRegular)
	if err != nil {
		return nil, fmt.Errorf("upstream cfilter %v: %w", hash, err)
	}
	s.p.mu.Lock()
	s.p.filters[hash] = msg.Data
	s.p.mu.Unlock()
	return msg.Data, nil
}

// headerFilter returns the filter of block hash at height h that the
// session's filter headers commit to.
func (s *session) headerFilter(h int32, hash chainhash.Hash) ([]byte, error) {
	if s.cfg.Scenario == CFWrongHeader && h > 0 {
		return emptyFilter, nil
	}
	return s.honestFilter(hash)
}

// servedFilter returns the filter the session sends for block hash.
func (s *session) servedFilter(h int32, hash chainhash.Hash) ([]byte, error) {
	if s.cfg.Scenario == CFWrongFilter && s.canApply() {
		s.markApplied(fmt.Sprintf("empty filter for block %d", h))
		return emptyFilter, nil
	}
	if s.cfg.Scenario == CFWrongHeader && h > 0 && s.canApply() {
		s.markApplied(fmt.Sprintf("empty filter for block %d", h))
	}
	return s.headerFilter(h, hash)
}

// cfHeaders returns the session's filter hashes and headers from the
// genesis block up to height stop.
func (s *session) cfHeaders(v *view, stop int32) ([]chainhash.Hash, []chainhash.Hash, error) {
	hashes := make([]chainhash.Hash, 0, stop+1)
	hdrs := make([]chainhash.Hash, 0, stop+1)
	var prev chainhash.Hash
	for h := int32(0); h <= stop; h++ {
		data, err := s.headerFilter(h, v.headers[h].BlockHash())
		if err != nil {
			return nil, nil, err
		}
		fh := chainhash.DoubleHashH(data)
		var b [2 * chainhash.HashSize]byte
		copy(b[:], fh[:])
		copy(b[chainhash.HashSize:], prev[:])
		prev = chainhash.DoubleHashH(b[:])
		hashes = append(hashes, fh)
		hdrs = append(hdrs, prev)
	}
	return hashes, hdrs, nil
}

// getCFHeaders answers getcfheaders from the view (nothing when the stop
// hash is not on it, as btcd).
func (s *session) getCFHeaders(m *wire.MsgGetCFHeaders) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	stop, ok := v.height[m.StopHash]
	start := int32(m.StartHeight)
	if !ok || start > stop || stop-start >= wire.MaxCFHeadersPerMsg {
		return nil
	}
	hashes, hdrs, err := s.cfHeaders(v, stop)
	if err != nil {
		return err
	}
	out := wire.NewMsgCFHeaders()
	out.FilterType, out.StopHash = m.FilterType, m.StopHash
	if start > 0 {
		out.PrevFilterHeader = hdrs[start-1]
	}
	for h := start; h <= stop; h++ {
		fh := hashes[h]
		out.FilterHashes = append(out.FilterHashes, &fh)
	}
	if s.cfg.Scenario == CFWrongHeader && stop > 0 && s.canApply() {
		s.markApplied(fmt.Sprintf("filter headers %d..%d of empty filters", max(start, 1), stop))
	}
	return s.write(out, wire.LatestEncoding)
}

// getCFCheckpt answers getcfcheckpt from the session's filter headers.
func (s *session) getCFCheckpt(m *wire.MsgGetCFCheckpt) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	stop, ok := v.height[m.StopHash]
	if !ok {
		return nil
	}
	_, hdrs, err := s.cfHeaders(v, stop)
	if err != nil {
		return err
	}
	out := wire.NewMsgCFCheckpt(m.FilterType, &m.StopHash, int(stop/wire.CFCheckptInterval))
	for h := int32(wire.CFCheckptInterval); h <= stop; h += wire.CFCheckptInterval {
		if err := out.AddCFHeader(&hdrs[h]); err != nil {
			return fmt.Errorf("cfcheckpt: %w", err)
		}
	}
	return s.write(out, wire.LatestEncoding)
}

// getCFilters answers getcfilters from the view, one cfilter a block.
func (s *session) getCFilters(m *wire.MsgGetCFilters) error {
	v, err := s.view()
	if err != nil {
		return err
	}
	stop, ok := v.height[m.StopHash]
	start := int32(m.StartHeight)
	if !ok || start > stop || stop-start >= wire.MaxGetCFiltersReqRange {
		return nil
	}
	for h := start; h <= stop; h++ {
		hash := v.headers[h].BlockHash()
		data, err := s.servedFilter(h, hash)
		if err != nil {
			return err
		}
		if err := s.write(wire.NewMsgCFilter(m.FilterType, &hash, data), wire.LatestEncoding); err != nil {
			return err
		}
	}
	return nil
}
