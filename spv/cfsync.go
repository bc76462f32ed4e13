package spv

import (
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/gcs"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// The compact-filter sync (BIP157/158) runs in the manager goroutine
// beside the header sync, in place of the filtered-block download:
//
//  1. every filter peer is asked its filter headers (getcfheaders, in
//     messages of at most wire.MaxCFHeadersPerMsg) from the genesis
//     block up to the header tip, and its checkpoints (getcfcheckpt);
//     each peer's headers must chain from its PrevFilterHeader and agree
//     with its own checkpoints (cfheaders.go);
//  2. a height's filter header is agreed when every peer whose chain
//     reaches it gave the same one; a disagreement stops the agreement
//     there until the block itself settles it (cfheaders.go, as neutrino
//     does): the liars are banned;
//  3. the download peer is asked the filters (getcfilters, at most
//     wire.MaxGetCFiltersReqRange a message) from the watcher's next
//     block, at most Tuning.Window ahead; each must hash to its agreed
//     filter hash, or the peer is banned;
//  4. each filter is matched against the output scripts of the
//     watcher's data elements (btcutil/gcs); a matching block is fetched
//     whole (MSG_WITNESS_BLOCK, closed by a ping so that silence is
//     caught as notfound is), its merkle root and witness commitment
//     checked against its header, and its transactions that touch the
//     watcher delivered as a filtered block would be: the same
//     watch.Watcher contract, in height order, non-matching blocks as
//     blocks without transactions;
//  5. when a delivered block grows the watcher's elements, the filters
//     fetched ahead are matched again against the new scripts before
//     they are delivered (the gap-limit race costs no re-fetch).
//
// BIP158 has no mempool filtering: nothing unconfirmed is asked, and the
// watcher sees a payment when a block confirms it.

// ErrFilterConflict is the sync's error when peers disagree on a filter
// header and the block cannot tell which of them lies (every filter is
// consistent with it and no strict majority exists).
var ErrFilterConflict = errors.New("spv: unresolvable compact filter conflict")

// cfMaxFilterRange is how many filters one getcfilters asks.
const cfMaxFilterRange = wire.MaxGetCFiltersReqRange

// cfMaxBlocksAhead bounds the whole blocks asked or held ahead of
// delivery (the next block to deliver is always asked): what the node
// holds on a peer's behalf stays a few blocks, not a window of them.
const cfMaxBlocksAhead = 16

// cfPeer is one peer's compact-filter state (peerState.cf).
type cfPeer struct {
	// pendHash and pendHdr are the peer's filter hashes and headers
	// above the agreed chain, from height len(cfSync.hdr) on.
	pendHash, pendHdr []chainhash.Hash
	hdrReq            *cfHeadersReq
	// cpReq is the outstanding getcfcheckpt (nil: none); checkpts the
	// filter headers at heights 1000, 2000, ... the peer gave.
	cpReq    *cfCheckptReq
	checkpts []chainhash.Hash
	// filters are the outstanding cfilter answers, in the order they come.
	filters []cfFilterReq
	// blocks are the outstanding block requests by hash; pings the
	// nonces of the pings that close them.
	blocks map[chainhash.Hash]cfBlockReq
	pings  map[uint64]struct{}
	// seq numbers the peer's header, checkpoint and filter requests in
	// the order they are sent; barriers maps the nonce of each ping sent
	// after a reorg made requests stale to the last seq sent before it.
	seq      uint64
	barriers map[uint64]uint64
}

// owes reports whether the peer owes an answer (nil: none). A stale
// request is not owed: it names a block that left the best chain, which
// an honest peer may no longer serve a filter or header for (btcd drops
// a disconnected block's index entries and answers nothing). The ping
// after it, its barrier, is owed; its pong settles every stale request
// sent before it (closeStale).
func (p *cfPeer) owes() bool {
	if p == nil {
		return false
	}
	if p.hdrReq != nil && !p.hdrReq.stale || p.cpReq != nil && !p.cpReq.stale || len(p.blocks) > 0 || len(p.barriers) > 0 {
		return true
	}
	for _, r := range p.filters {
		if !r.stale {
			return true
		}
	}
	return false
}

// next returns the seq of the peer's next request.
func (p *cfPeer) next() uint64 {
	p.seq++
	return p.seq
}

// closeStale forgets the stale requests numbered up to seq: a peer
// answers in order, so the pong of a ping sent after them means each was
// answered or will never be.
func (p *cfPeer) closeStale(seq uint64) {
	if r := p.hdrReq; r != nil && r.stale && r.seq <= seq {
		p.hdrReq = nil
	}
	if r := p.cpReq; r != nil && r.stale && r.seq <= seq {
		p.cpReq = nil
	}
	kept := p.filters[:0]
	for _, r := range p.filters {
		if !r.stale || r.seq > seq {
			kept = append(kept, r)
		}
	}
	clear(p.filters[len(kept):])
	p.filters = kept
}

// cfHeadersReq is an outstanding getcfheaders.
type cfHeadersReq struct {
	start, stop int32
	stopHash    chainhash.Hash
	stale       bool // a reorg came after it: the answer is dropped
	seq         uint64
}

// cfCheckptReq is an outstanding getcfcheckpt.
type cfCheckptReq struct {
	stop     int32
	stopHash chainhash.Hash
	stale    bool
	seq      uint64
}

// cfFilterReq is one filter asked.
type cfFilterReq struct {
	height   int32
	hash     chainhash.Hash
	conflict bool // asked to settle a conflict, not for delivery
	// stale: a reorg dropped its height; the peer may skip it.
	stale bool
	seq   uint64
}

// cfBlockReq is one block asked.
type cfBlockReq struct {
	height int32
	ping   uint64
}

// cfEntry is one height's filter on its way to delivery.
type cfEntry struct {
	hash   chainhash.Hash
	filter *gcs.Filter
	// matched is how many scripts of the query set it was matched
	// against; match whether one of them matched.
	matched int
	match   bool
	block   *wire.MsgBlock
	asked   *peerState // the peer asked its block (nil: none)
}

// cfSync is the manager's compact-filter sync state (manager.cf).
type cfSync struct {
	m *manager
	// hdr and fhash are the agreed filter headers and filter hashes by
	// height, from the genesis block on.
	hdr, fhash []chainhash.Hash
	scripts    cfScripts
	entries    map[int32]*cfEntry
	inflight   map[int32]*peerState
	conflict   *cfConflict
	st         CFStats
}

// CFStats counts the compact-filter sync's work (Status.CF).
type CFStats struct {
	// FilterHeaders counts agreed filter headers; Filters the filters
	// received and FilterBytes their bytes.
	FilterHeaders, Filters int
	FilterBytes            uint64
	// Blocks counts blocks fetched whole because their filter matched
	// (BlockBytes their bytes); FalsePositives those that held nothing
	// for the watcher.
	Blocks, FalsePositives int
	BlockBytes             uint64
	// Conflicts counts filter-header disagreements settled by a block.
	Conflicts int
	// Checkpoints is the most filter-header checkpoints (one every
	// wire.CFCheckptInterval blocks) a peer gave and the node checked
	// against that peer's filter headers.
	Checkpoints int
}

// newCFSync returns the compact-filter sync of m.
func newCFSync(m *manager) *cfSync {
	cf := &cfSync{m: m, entries: make(map[int32]*cfEntry), inflight: make(map[int32]*peerState)}
	cf.scripts.update(m.els)
	return cf
}

// onPeerReady starts a peer's compact-filter state.
func (cf *cfSync) onPeerReady(ps *peerState) {
	ps.cf = &cfPeer{blocks: make(map[chainhash.Hash]cfBlockReq), pings: make(map[uint64]struct{}), barriers: make(map[uint64]uint64)}
}

// dropPeer forgets what a peer was asked: its filters and blocks go to
// another peer, a conflict goes on without it.
func (cf *cfSync) dropPeer(ps *peerState) {
	if ps.cf == nil {
		return
	}
	for h, p := range cf.inflight {
		if p == ps {
			delete(cf.inflight, h)
		}
	}
	for _, e := range cf.entries {
		if e.asked == ps {
			e.asked = nil
		}
	}
	if c := cf.conflict; c != nil {
		delete(c.claims, ps)
		delete(c.filters, ps)
		if c.blockFrom == ps {
			c.blockFrom = nil
		}
	}
	ps.cf = nil
	if cf.conflict != nil {
		cf.resolve()
	} else {
		cf.advance()
	}
}

// dropFrom forgets everything at or above height h (a reorg): agreed
// headers, the peers' headers, filters and outstanding requests.
func (cf *cfSync) dropFrom(h int32) {
	if int(h) < len(cf.hdr) {
		cf.hdr, cf.fhash = cf.hdr[:h], cf.fhash[:h]
		cf.st.FilterHeaders = len(cf.hdr)
	}
	for ps := range cf.m.peers {
		p := ps.cf
		if p == nil {
			continue
		}
		p.pendHash, p.pendHdr = nil, nil
		stale := false
		if p.hdrReq != nil && !p.hdrReq.stale {
			p.hdrReq.stale, stale = true, true
		}
		if p.cpReq != nil && !p.cpReq.stale {
			p.cpReq.stale, stale = true, true
		}
		for i := range p.filters {
			if r := &p.filters[i]; r.height >= h && !r.stale {
				r.stale, stale = true, true
			}
		}
		if stale {
			nonce := cf.m.nonce()
			p.barriers[nonce] = p.seq
			ps.send(wire.NewMsgPing(nonce))
		}
		if n := int(h/wire.CFCheckptInterval) - 1; n < len(p.checkpts) {
			p.checkpts = p.checkpts[:max(n, 0)]
		}
	}
	for height := range cf.entries {
		if height >= h {
			delete(cf.entries, height)
		}
	}
	for height := range cf.inflight {
		if height >= h {
			delete(cf.inflight, height)
		}
	}
	if cf.conflict != nil && cf.conflict.height >= h {
		cf.conflict = nil
	}
}

// target is the last height ps is asked filter headers for: the header
// tip, or the peer's height when lower.
func (cf *cfSync) target(ps *peerState) int32 {
	_, tip := cf.m.n.store.Tip()
	return min(tip, ps.lastBlock)
}

// schedule sends what is due: checkpoints and filter headers to every
// filter peer, filters and blocks to the download peer, then delivers.
func (cf *cfSync) schedule() {
	m := cf.m
	for ps := range m.peers {
		if ps.cf != nil {
			cf.askHeaders(ps)
		}
	}
	if m.dl != nil && m.dl.cf != nil {
		cf.askFilters(m.dl)
	}
	// Matching blocks not asked yet, nearest first.
	for h, end := m.next, m.next+int32(m.n.cfg.Tuning.Window); h < end && len(cf.entries) > 0; h++ {
		e := cf.entries[h]
		if e != nil && e.match && e.block == nil && e.asked == nil {
			if !cf.roomForBlock(h) {
				break
			}
			cf.askBlock(h, e)
		}
	}
	cf.deliver()
}

// askFilters fills the window [next, next+Window) up to the agreed
// filter headers with getcfilters to ps.
func (cf *cfSync) askFilters(ps *peerState) {
	m := cf.m
	if len(ps.cf.barriers) > 0 {
		return // a stale filter may still come: a height asked again could be taken for it
	}
	last := min(int32(len(cf.hdr))-1, m.next+int32(m.n.cfg.Tuning.Window)-1, cf.target(ps))
	for h := m.next; h <= last; {
		if cf.entries[h] != nil || cf.inflight[h] != nil {
			h++
			continue
		}
		from := h
		for h <= last && h-from < cfMaxFilterRange && cf.entries[h] == nil && cf.inflight[h] == nil {
			h++
		}
		cf.sendGetCFilters(ps, from, h-1, false)
	}
}

// sendGetCFilters asks ps the filters of heights from..to.
func (cf *cfSync) sendGetCFilters(ps *peerState, from, to int32, conflict bool) {
	m := cf.m
	stop, err := m.n.store.HashByHeight(to)
	if err != nil {
		m.fail(fmt.Errorf("%w: hash at %d: %w", ErrHeaderStore, to, err))
		return
	}
	if !cf.recordCF(ps, transcript.KindGetCFilters, from, to-from+1, conflict) {
		return
	}
	for h := from; h <= to; h++ {
		hash, err := m.n.store.HashByHeight(h)
		if err != nil {
			m.fail(fmt.Errorf("%w: hash at %d: %w", ErrHeaderStore, h, err))
			return
		}
		ps.cf.filters = append(ps.cf.filters, cfFilterReq{height: h, hash: hash, conflict: conflict, seq: ps.cf.next()})
		if !conflict {
			cf.inflight[h] = ps
		}
	}
	if !ps.owesData() {
		ps.lastAnswer = m.n.clock.Now()
	}
	ps.send(wire.NewMsgGetCFilters(wire.GCSFilterRegular, uint32(from), &stop))
}

// onCFilter takes one filter: it must be the next one the peer owes,
// past stale requests it skipped, and hash to the agreed filter hash of
// its height.
func (cf *cfSync) onCFilter(ps *peerState, msg *wire.MsgCFilter) {
	m := cf.m
	p := ps.cf
	i := 0
	for i < len(p.filters) && p.filters[i].hash != msg.BlockHash && p.filters[i].stale {
		i++
	}
	if i == len(p.filters) || p.filters[i].hash != msg.BlockHash || msg.FilterType != wire.GCSFilterRegular {
		m.misbehave(ps, misbehaviorBadFilter, "cfilter not asked: block "+msg.BlockHash.String())
		return
	}
	r := p.filters[i]
	p.filters = p.filters[i+1:]
	ps.lastAnswer = m.n.clock.Now()
	cf.st.Filters++
	cf.st.FilterBytes += uint64(len(msg.Data))
	if r.conflict {
		if c := cf.conflict; c != nil && c.hash == r.hash {
			c.filters[ps] = msg.Data
			cf.resolve()
		}
		return
	}
	if cf.inflight[r.height] == ps {
		delete(cf.inflight, r.height)
	}
	h := r.height
	if h < m.next || int(h) >= len(cf.hdr) || cf.entries[h] != nil || !m.n.store.IsBest(r.hash) {
		return // answered after a reorg or a delivery
	}
	if got := chainhash.DoubleHashH(msg.Data); got != cf.fhash[h] {
		m.misbehave(ps, misbehaviorBadFilter, fmt.Sprintf("filter of block %d hashes to %v, its filter header commits to %v", h, got, cf.fhash[h]))
		return
	}
	f, err := gcs.FromNBytes(builder.DefaultP, builder.DefaultM, msg.Data)
	if err != nil {
		m.misbehave(ps, misbehaviorBadFilter, fmt.Sprintf("filter of block %d: %v", h, err))
		return
	}
	e := &cfEntry{hash: r.hash, filter: f}
	cf.entries[h] = e
	if err := cf.match(e); err != nil {
		m.misbehave(ps, misbehaviorBadFilter, fmt.Sprintf("filter of block %d: %v", h, err))
		delete(cf.entries, h)
		return
	}
	if e.match && cf.roomForBlock(h) {
		cf.askBlock(h, e)
	}
}

// roomForBlock reports whether the block at height h may be asked now:
// it is the next to deliver, or fewer than cfMaxBlocksAhead blocks are
// asked or held.
func (cf *cfSync) roomForBlock(h int32) bool {
	if h == cf.m.next {
		return true
	}
	n := 0
	for _, e := range cf.entries {
		if e.block != nil || e.asked != nil {
			n++
		}
	}
	return n < cfMaxBlocksAhead
}

// match matches e's filter against the scripts it was not matched
// against yet.
func (cf *cfSync) match(e *cfEntry) error {
	if e.match || e.matched == len(cf.scripts.list) {
		return nil
	}
	ok, err := cf.scripts.matchFilter(e.filter, &e.hash, e.matched)
	if err != nil {
		return err
	}
	e.matched, e.match = len(cf.scripts.list), ok
	return nil
}

// askBlock asks the whole block of a matching filter from the download
// peer, or another filter peer that has it, closed by a ping.
func (cf *cfSync) askBlock(h int32, e *cfEntry) {
	m := cf.m
	ps := m.dl
	if ps == nil || ps.cf == nil || cf.target(ps) < h {
		ps = nil
		for other := range m.peers {
			if other.cf != nil && cf.target(other) >= h {
				ps = other
				break
			}
		}
	}
	if ps == nil {
		return
	}
	if cf.sendGetBlock(ps, h, e.hash, false) {
		e.asked = ps
	}
}

// sendGetBlock asks ps block hash (height h) with its witnesses and a
// ping after it: the pong with the block still owed means withheld. It
// reports whether the request was recorded and sent.
func (cf *cfSync) sendGetBlock(ps *peerState, h int32, hash chainhash.Hash, check bool) bool {
	m := cf.m
	if !cf.recordCF(ps, transcript.KindGetBlock, h, 1, check) {
		return false
	}
	if !ps.owesData() {
		ps.lastAnswer = m.n.clock.Now()
	}
	nonce := m.nonce()
	ps.cf.blocks[hash] = cfBlockReq{height: h, ping: nonce}
	ps.cf.pings[nonce] = struct{}{}
	gd := wire.NewMsgGetDataSizeHint(1)
	_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessBlock, &hash))
	ps.send(gd)
	ps.send(wire.NewMsgPing(nonce))
	return true
}

// onPong closes the block requests a ping followed; it reports whether
// the pong was one of them.
func (cf *cfSync) onPong(ps *peerState, msg *wire.MsgPong) bool {
	p := ps.cf
	if p == nil {
		return false
	}
	if seq, ok := p.barriers[msg.Nonce]; ok {
		delete(p.barriers, msg.Nonce)
		p.closeStale(seq)
		ps.lastAnswer = cf.m.n.clock.Now()
		return true
	}
	if _, ok := p.pings[msg.Nonce]; !ok {
		return false
	}
	delete(p.pings, msg.Nonce)
	for hash, r := range p.blocks {
		if r.ping == msg.Nonce {
			cf.withheld(ps, hash, r, "not sent before the pong after its getdata")
			if ps.cf == nil {
				return true
			}
		}
	}
	return true
}

// onNotFound takes a notfound: a block the peer's filters cover that it
// will not send is withheld.
func (cf *cfSync) onNotFound(ps *peerState, msg *wire.MsgNotFound) {
	for _, iv := range msg.InvList {
		if ps.cf == nil {
			return
		}
		r, ok := ps.cf.blocks[iv.Hash]
		if ok && (iv.Type == wire.InvTypeWitnessBlock || iv.Type == wire.InvTypeBlock) {
			cf.withheld(ps, iv.Hash, r, "notfound")
		}
	}
}

// withheld bans a peer that did not send a block it has (it served the
// filter headers that cover it) and asks another peer.
func (cf *cfSync) withheld(ps *peerState, hash chainhash.Hash, r cfBlockReq, how string) {
	delete(ps.cf.blocks, hash)
	if e := cf.entries[r.height]; e != nil && e.asked == ps {
		e.asked = nil
	}
	if c := cf.conflict; c != nil && c.hash == hash && c.blockFrom == ps {
		c.blockFrom = nil
	}
	if !cf.m.n.store.IsBest(hash) {
		return // off the best chain since: the peer may well lack it
	}
	cf.m.misbehave(ps, misbehaviorWithheldBlock, fmt.Sprintf("block %d %v: %s", r.height, hash, how))
}

// onBlock takes a whole block: it must be asked, on the best chain, and
// its transactions must commit to its header (merkle root, no duplicate,
// witness commitment).
func (cf *cfSync) onBlock(ps *peerState, b *wire.MsgBlock) {
	m := cf.m
	hash := b.BlockHash()
	r, ok := ps.cf.blocks[hash]
	if !ok {
		m.misbehave(ps, misbehaviorUnrequestedBlock, "block "+hash.String())
		return
	}
	delete(ps.cf.blocks, hash)
	ps.lastAnswer = m.n.clock.Now()
	if e := cf.entries[r.height]; e != nil && e.asked == ps {
		e.asked = nil
	}
	err := checkFullBlock(b)
	if err == nil {
		err = blockchain.ValidateWitnessCommitment(btcutil.NewBlock(b))
	}
	if err != nil {
		m.misbehave(ps, misbehaviorBadBlock, fmt.Sprintf("block %d %v: %v", r.height, hash, err))
		return
	}
	cf.st.Blocks++
	cf.st.BlockBytes += uint64(b.SerializeSize())
	if c := cf.conflict; c != nil && c.hash == hash {
		c.block = b
		cf.resolve()
	}
	if e := cf.entries[r.height]; e != nil && e.hash == hash {
		e.block = b
	}
}

// deliver hands the watcher the blocks whose filters are in, in height
// order: a block whose filter matches the current scripts once it came
// whole, the others as blocks without transactions.
func (cf *cfSync) deliver() {
	m := cf.m
	for m.st.Err == nil {
		cf.scripts.update(m.els)
		h := m.next
		e := cf.entries[h]
		if e == nil {
			return
		}
		if err := cf.match(e); err != nil {
			m.fail(fmt.Errorf("match filter %d: %w", h, err))
			return
		}
		if e.match && e.block == nil {
			if e.asked == nil {
				cf.askBlock(h, e)
			}
			return
		}
		hdr, err := m.n.store.HeaderByHeight(h)
		if err != nil {
			m.fail(fmt.Errorf("%w: header at %d: %w", ErrHeaderStore, h, err))
			return
		}
		fb := &watch.FilteredBlock{Height: h, Hash: e.hash, Header: hdr}
		if e.block != nil {
			fb.Txs, fb.TxIndexes = cf.scripts.blockMatches(e.block, m.els.ops)
			fb.TotalTxs = uint32(len(e.block.Transactions))
			if len(fb.Txs) == 0 {
				cf.st.FalsePositives++
			}
		}
		info := &CFBlock{FilterItems: e.filter.N(), Queries: e.matched, Fetched: e.block != nil}
		if !cf.apply(fb, info) {
			return // not applied: a reorg or a failure
		}
		// A block that grew the watcher's elements may hold more of its
		// transactions (a payment to an address it derived only now, a
		// spend of an output it received only now): the block is
		// delivered again with them, as the watcher contract allows.
		for e.block != nil && m.st.Err == nil {
			cf.scripts.update(m.els)
			more := cf.moreMatches(e.block, fb)
			if more == nil {
				break
			}
			m.next, fb = h, more
			if !cf.apply(fb, info) {
				return
			}
		}
		delete(cf.entries, h)
	}
}

// apply hands fb, whose filter info describes, to the watcher through
// the manager's delivery and reports whether it was applied.
func (cf *cfSync) apply(fb *watch.FilteredBlock, info *CFBlock) bool {
	m := cf.m
	m.slots[fb.Height] = &slot{hash: fb.Hash, block: fb, cf: info}
	m.reqHigh = max(m.reqHigh, fb.Height)
	m.deliver()
	return m.next > fb.Height
}

// moreMatches returns block b delivered again with the transactions the
// current query set matches beside those fb held, in block order, or nil
// when there are none.
func (cf *cfSync) moreMatches(b *wire.MsgBlock, fb *watch.FilteredBlock) *watch.FilteredBlock {
	had := make(map[uint32]bool, len(fb.TxIndexes))
	for _, i := range fb.TxIndexes {
		had[i] = true
	}
	_, idx := cf.scripts.blockMatches(b, cf.m.els.ops)
	grew := false
	for _, i := range idx {
		if !had[i] {
			had[i] = true
			grew = true
		}
	}
	if !grew {
		return nil
	}
	out := &watch.FilteredBlock{Height: fb.Height, Hash: fb.Hash, Header: fb.Header, TotalTxs: fb.TotalTxs}
	for i, tx := range b.Transactions {
		if had[uint32(i)] {
			out.Txs = append(out.Txs, tx)
			out.TxIndexes = append(out.TxIndexes, uint32(i))
		}
	}
	return out
}
