package spv

import (
	"fmt"
	"sort"

	"github.com/btcsuite/btcd/btcutil/gcs"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// cfHeaderOf returns the filter header at height h as peer p gave it: the
// agreed one below its pending headers, zero for height -1.
func (cf *cfSync) cfHeaderOf(p *cfPeer, h int32) (chainhash.Hash, bool) {
	switch {
	case h < 0:
		return chainhash.Hash{}, true
	case int(h) < len(cf.hdr):
		return cf.hdr[h], true
	case int(h)-len(cf.hdr) < len(p.pendHdr):
		return p.pendHdr[int(h)-len(cf.hdr)], true
	}
	return chainhash.Hash{}, false
}

// askHeaders sends ps its next getcfcheckpt and getcfheaders, when due:
// checkpoints up to its target when they cover fewer intervals than the
// target has, headers from the end of its chain.
func (cf *cfSync) askHeaders(ps *peerState) {
	m := cf.m
	p := ps.cf
	target := cf.target(ps)
	if target < 0 {
		return
	}
	if p.cpReq == nil && int(target/wire.CFCheckptInterval) > len(p.checkpts) {
		stop, err := m.n.store.HashByHeight(target)
		if err != nil {
			m.fail(fmt.Errorf("%w: hash at %d: %w", ErrHeaderStore, target, err))
			return
		}
		if !ps.owesData() {
			ps.lastAnswer = m.n.clock.Now()
		}
		p.cpReq = &cfCheckptReq{stop: target, stopHash: stop, seq: p.next()}
		ps.send(wire.NewMsgGetCFCheckpt(wire.GCSFilterRegular, &stop))
	}
	start := int32(len(cf.hdr) + len(p.pendHdr))
	if p.hdrReq != nil || start > target || cf.conflict != nil && start > cf.conflict.height {
		return
	}
	stop := min(target, start+wire.MaxCFHeadersPerMsg-1)
	stopHash, err := m.n.store.HashByHeight(stop)
	if err != nil {
		m.fail(fmt.Errorf("%w: hash at %d: %w", ErrHeaderStore, stop, err))
		return
	}
	if !ps.owesData() {
		ps.lastAnswer = m.n.clock.Now()
	}
	p.hdrReq = &cfHeadersReq{start: start, stop: stop, stopHash: stopHash, seq: p.next()}
	ps.send(wire.NewMsgGetCFHeaders(wire.GCSFilterRegular, uint32(start), &stopHash))
}

// onCFHeaders takes a peer's filter headers: they must answer its
// outstanding getcfheaders, chain from the header below them and agree
// with the peer's checkpoints.
func (cf *cfSync) onCFHeaders(ps *peerState, msg *wire.MsgCFHeaders) {
	m := cf.m
	p := ps.cf
	r := p.hdrReq
	if r == nil || r.stopHash != msg.StopHash {
		m.misbehave(ps, misbehaviorBadFilterHeader, "cfheaders not asked: stop "+msg.StopHash.String())
		return
	}
	p.hdrReq = nil
	ps.lastAnswer = m.n.clock.Now()
	if r.stale {
		return
	}
	if msg.FilterType != wire.GCSFilterRegular || len(msg.FilterHashes) != int(r.stop-r.start+1) {
		m.misbehave(ps, misbehaviorBadFilterHeader, fmt.Sprintf("cfheaders %d..%d: %d filter hashes of type %d",
			r.start, r.stop, len(msg.FilterHashes), msg.FilterType))
		return
	}
	if start := int32(len(cf.hdr) + len(p.pendHdr)); start != r.start {
		return // the agreed chain moved under it (a conflict settled): ask again
	}
	prev, _ := cf.cfHeaderOf(p, r.start-1)
	if msg.PrevFilterHeader != prev {
		m.misbehave(ps, misbehaviorBadFilterHeader, fmt.Sprintf("cfheaders from %d: previous header %v, its chain has %v",
			r.start, msg.PrevFilterHeader, prev))
		return
	}
	hashes := make([]chainhash.Hash, len(msg.FilterHashes))
	hdrs := make([]chainhash.Hash, len(msg.FilterHashes))
	for i, fh := range msg.FilterHashes {
		hashes[i] = *fh
		prev = filterHeader(*fh, prev)
		hdrs[i] = prev
		h := r.start + int32(i)
		if cp, ok := checkpointAt(p.checkpts, h); ok && cp != prev {
			m.misbehave(ps, misbehaviorBadFilterHeader, fmt.Sprintf("filter header %d contradicts its own checkpoint", h))
			return
		}
	}
	p.pendHash = append(p.pendHash, hashes...)
	p.pendHdr = append(p.pendHdr, hdrs...)
	cf.advance()
}

// filterHeader is BIP157's filter header: the double SHA-256 of the
// filter hash and the previous header.
func filterHeader(filterHash, prev chainhash.Hash) chainhash.Hash {
	var b [2 * chainhash.HashSize]byte
	copy(b[:], filterHash[:])
	copy(b[chainhash.HashSize:], prev[:])
	return chainhash.DoubleHashH(b[:])
}

// checkpointAt returns the checkpoint of height h among checkpts (the
// headers at heights 1000, 2000, ...), when there is one.
func checkpointAt(checkpts []chainhash.Hash, h int32) (chainhash.Hash, bool) {
	if h <= 0 || h%wire.CFCheckptInterval != 0 {
		return chainhash.Hash{}, false
	}
	i := int(h/wire.CFCheckptInterval) - 1
	if i >= len(checkpts) {
		return chainhash.Hash{}, false
	}
	return checkpts[i], true
}

// onCFCheckpt takes a peer's checkpoints: they must answer its
// getcfcheckpt, extend the ones it gave before and agree with the headers
// it gave.
func (cf *cfSync) onCFCheckpt(ps *peerState, msg *wire.MsgCFCheckpt) {
	m := cf.m
	p := ps.cf
	r := p.cpReq
	if r == nil || r.stopHash != msg.StopHash {
		m.misbehave(ps, misbehaviorBadFilterHeader, "cfcheckpt not asked: stop "+msg.StopHash.String())
		return
	}
	p.cpReq = nil
	ps.lastAnswer = m.n.clock.Now()
	if r.stale {
		return
	}
	want := int(r.stop / wire.CFCheckptInterval)
	if msg.FilterType != wire.GCSFilterRegular || len(msg.FilterHeaders) != want {
		m.misbehave(ps, misbehaviorBadFilterHeader, fmt.Sprintf("cfcheckpt to %d: %d headers, want %d", r.stop, len(msg.FilterHeaders), want))
		return
	}
	cps := make([]chainhash.Hash, want)
	for i, fh := range msg.FilterHeaders {
		cps[i] = *fh
		if i < len(p.checkpts) && p.checkpts[i] != cps[i] {
			m.misbehave(ps, misbehaviorBadFilterHeader, fmt.Sprintf("checkpoint %d changed", (i+1)*wire.CFCheckptInterval))
			return
		}
		if got, ok := cf.cfHeaderOf(p, int32(i+1)*wire.CFCheckptInterval); ok && got != cps[i] {
			m.misbehave(ps, misbehaviorBadFilterHeader, fmt.Sprintf("checkpoint %d contradicts its filter headers", (i+1)*wire.CFCheckptInterval))
			return
		}
	}
	p.checkpts = cps
	cf.st.Checkpoints = max(cf.st.Checkpoints, len(cps))
	for other := range m.peers {
		if other == ps || other.cf == nil {
			continue
		}
		for i := range min(len(cps), len(other.cf.checkpts)) {
			if other.cf.checkpts[i] != cps[i] {
				m.n.log.Warn("filter checkpoints disagree: the filter headers settle it",
					"height", (i+1)*wire.CFCheckptInterval, "peer", ps.addr, "other", other.addr)
				break
			}
		}
	}
}

// advance extends the agreed filter-header chain while every filter peer
// whose target reaches the next height gave the same filter hash for it;
// a disagreement starts a conflict there.
func (cf *cfSync) advance() {
	m := cf.m
	for cf.conflict == nil && m.st.Err == nil {
		h := int32(len(cf.hdr))
		var ref *cfPeer
		any, split := false, false
		for ps := range m.peers {
			p := ps.cf
			if p == nil || cf.target(ps) < h {
				continue
			}
			if len(p.pendHash) == 0 {
				return // wait for its headers
			}
			any = true
			switch {
			case ref == nil:
				ref = p
			case p.pendHash[0] != ref.pendHash[0]:
				split = true
			}
		}
		if !any {
			return
		}
		if split {
			cf.startConflict(h)
			return
		}
		cf.hdr = append(cf.hdr, ref.pendHdr[0])
		cf.fhash = append(cf.fhash, ref.pendHash[0])
		cf.st.FilterHeaders = len(cf.hdr)
		for ps := range m.peers {
			if p := ps.cf; p != nil && len(p.pendHash) > 0 {
				p.pendHash, p.pendHdr = p.pendHash[1:], p.pendHdr[1:]
			}
		}
	}
}

// cfConflict is a disagreement on the filter of one block: what each
// peer claims, the filters they sent and the block that settles it.
type cfConflict struct {
	height    int32
	hash      chainhash.Hash
	claims    map[*peerState]chainhash.Hash
	filters   map[*peerState][]byte
	block     *wire.MsgBlock
	blockFrom *peerState
}

// startConflict asks every peer that gave a filter hash for height h its
// filter, and one of them the block.
func (cf *cfSync) startConflict(h int32) {
	m := cf.m
	hash, err := m.n.store.HashByHeight(h)
	if err != nil {
		m.fail(fmt.Errorf("%w: hash at %d: %w", ErrHeaderStore, h, err))
		return
	}
	c := &cfConflict{height: h, hash: hash, claims: make(map[*peerState]chainhash.Hash), filters: make(map[*peerState][]byte)}
	for ps := range m.peers {
		if p := ps.cf; p != nil && len(p.pendHash) > 0 {
			c.claims[ps] = p.pendHash[0]
		}
	}
	cf.conflict = c
	cf.st.Conflicts++
	m.n.log.Warn("peers disagree on a filter header: fetching the block to settle it", "height", h, "hash", hash, "peers", len(c.claims))
	for ps := range c.claims {
		cf.sendGetCFilters(ps, h, h, true)
	}
	cf.askConflictBlock()
}

// askConflictBlock asks the conflict's block from a peer that claims a
// filter for it (the download peer first).
func (cf *cfSync) askConflictBlock() {
	c := cf.conflict
	if c == nil || c.block != nil || c.blockFrom != nil {
		return
	}
	var from *peerState
	if _, ok := c.claims[cf.m.dl]; ok {
		from = cf.m.dl
	} else {
		for ps := range c.claims {
			if from == nil || ps.addr < from.addr {
				from = ps
			}
		}
	}
	if from == nil {
		return
	}
	if cf.sendGetBlock(from, c.height, c.hash, true) {
		c.blockFrom = from
	}
}

// resolve settles the conflict once the block and every claimant's
// filter are in: a filter that does not hash to its sender's claim, or
// that the block shows wrong (filterProblem), bans its sender; when the
// block cannot tell, the filter a strict majority sent wins (neutrino's
// rule). The peers left agree, and the agreed chain goes on.
func (cf *cfSync) resolve() {
	m := cf.m
	c := cf.conflict
	if c == nil {
		return
	}
	if agreed(c.claims) {
		cf.conflict = nil
		cf.advance()
		return
	}
	if c.block == nil {
		cf.askConflictBlock()
		return
	}
	for ps := range c.claims {
		if _, ok := c.filters[ps]; !ok {
			return
		}
	}
	bad := map[*peerState]string{}
	valid := map[chainhash.Hash]int{}
	for ps, claim := range c.claims {
		data := c.filters[ps]
		if got := chainhash.DoubleHashH(data); got != claim {
			bad[ps] = fmt.Sprintf("its filter of block %d hashes to %v, its filter header claims %v", c.height, got, claim)
			continue
		}
		f, err := gcs.FromNBytes(builder.DefaultP, builder.DefaultM, data)
		if err == nil {
			err = filterProblem(c.block, f)
		}
		if err != nil {
			bad[ps] = err.Error()
			continue
		}
		valid[claim]++
	}
	if len(bad) == 0 {
		// Every filter is consistent with the block: the majority wins.
		type vote struct {
			hash chainhash.Hash
			n    int
		}
		var votes []vote
		for h, n := range valid {
			votes = append(votes, vote{h, n})
		}
		sort.Slice(votes, func(i, j int) bool { return votes[i].n > votes[j].n })
		if len(votes) > 1 && votes[0].n*2 <= len(c.claims) {
			m.fail(fmt.Errorf("%w: block %d %v: %d peers, %d filters, no majority", ErrFilterConflict, c.height, c.hash, len(c.claims), len(votes)))
			return
		}
		for ps, claim := range c.claims {
			if claim != votes[0].hash {
				bad[ps] = fmt.Sprintf("filter of block %d differs from the majority's", c.height)
			}
		}
	}
	cf.conflict = nil
	for ps, why := range bad {
		m.misbehave(ps, misbehaviorBadFilterHeader, why)
		if ps.ready {
			m.dropPeer(ps, "bad filter header")
			ps.p.Disconnect()
		}
	}
	cf.advance()
}

// agreed reports whether the claims left name one filter hash.
func agreed(claims map[*peerState]chainhash.Hash) bool {
	var first *chainhash.Hash
	for _, h := range claims {
		if first == nil {
			h := h
			first = &h
		} else if h != *first {
			return false
		}
	}
	return true
}
