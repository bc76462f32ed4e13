package spv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// blockReq is one filtered-block request sent to a peer.
type blockReq struct {
	hash   chainhash.Hash
	height int32
	gen    uint64 // the peer's filter generation when sent
	batch  uint64
	// stale requests are answered but their answer is discarded: a
	// filterload or a reorg came after them.
	stale bool
	// check requests are cross-peer omission checks, not for delivery.
	check *spotCheck
	// refetch marks a block asked before (the transcript's reason).
	refetch bool
	// cover marks a block of an aligned re-fetch asked only so that the
	// re-fetch does not start at the block it is for: its answer is
	// checked and replayed into the mirror, never delivered.
	cover bool
}

// pendingBlock is a verified merkle block collecting its transactions.
type pendingBlock struct {
	req     *blockReq
	ps      *peerState
	header  wire.BlockHeader
	matches []chainhash.Hash
	indexes []uint32
	total   uint32
	txs     map[chainhash.Hash]*wire.MsgTx
	// asked reports that the missing txs were requested with MSG_TX.
	asked bool
}

// want reports whether txid is a match still missing.
func (pb *pendingBlock) want(txid chainhash.Hash) bool {
	if _, ok := pb.txs[txid]; ok {
		return false
	}
	return slices.Contains(pb.matches, txid)
}

// missing returns the matched txids not received.
func (pb *pendingBlock) missing() []chainhash.Hash {
	var out []chainhash.Hash
	for _, id := range pb.matches {
		if _, ok := pb.txs[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// slot is one height of the download window.
type slot struct {
	hash     chainhash.Hash
	req      *blockReq
	block    *watch.FilteredBlock
	attempts int
	// why explains each delivered tx's match; plan is the omission
	// check decided for the block, sent at delivery.
	why  map[chainhash.Hash]txWhy
	plan *checkPlan
	// cf is what the compact-filter sync knew of the block (nil over
	// BIP37).
	cf *CFBlock
}

// txWhy is why a peer's filter matched a delivered transaction: what
// matched, the filter (its filterload's transcript sequence number) and
// that filter's false-positive rate at the time.
type txWhy struct {
	peer   string
	seq    uint64
	match  bip37.Match
	fpRate float64
}

// txReq is an outstanding getdata MSG_TX.
type txReq struct {
	block *pendingBlock // nil: a mempool tx
}

// manager owns all sync state; only its goroutine touches it.
type manager struct {
	n *Node
	w watch.Watcher

	peers map[*peerState]struct{}
	dl    *peerState

	els    *elementSet
	filter *bip37.Filter
	// filterEls is the number of elements filter holds.
	filterEls int
	// rl is the reload schedule (reload.go).
	rl       reloadState
	loads    int
	restart  bool
	birthday int32

	synced  watch.SyncPoint
	next    int32
	slots   map[int32]*slot
	reqHigh int32 // highest height with a slot
	retry   bool  // some slot at or above next lacks a request

	// syncDoneAt is the tip of the last SyncDone: the node leaves
	// "synced" for a moment whenever a getheaders or an omission check
	// is out, and coming back to the same tip is not news.
	syncDoneAt chainhash.Hash
	// liveFrom is the tip of the first SyncDone of this run: blocks above
	// it are the live chain (the transcript's getdata reason).
	liveFrom int32
	// uncheckedRun is set while delivered blocks go unchecked for want
	// of a second peer (the first of a run is logged).
	uncheckedRun bool
	// waiting are the cross checks waiting for a second peer to have
	// their block, in height order (spotcheck.go).
	waiting []*checkPlan
	// recheck are the blocks of an earlier run's unfinished checks, by
	// height, not fetched and planned again yet; saved is the record of
	// unfinished checks last written, savedOnce set once it is known
	// (pendingchecks.go).
	recheck   map[int32]chainhash.Hash
	saved     []uncheckedBlock
	savedOnce bool
	begun     bool      // a download peer was picked once
	startAt   time.Time // when the manager started

	mempoolSeen map[chainhash.Hash]struct{}
	// recent keeps the last matched relays' bodies (relayCache) so that
	// a second peer announcing one gets its server's insertions replayed
	// into its mirror without fetching it again.
	recent relayCache
	nonces uint64 // pings sent, for unique nonces
	// checkRNG draws the second peers of omission checks (checkers.go).
	checkRNG *rand.Rand

	// lastHash and lastSeen are the last block delivered and the txids
	// reported with it (a re-delivery reports only new ones).
	lastHash chainhash.Hash
	lastSeen map[chainhash.Hash]bool

	// st is the status the manager publishes (publishStatus), and the
	// one record of whether the watcher is at the best peer's tip
	// (st.Synced) and of the error that stopped syncing (st.Err).
	st Status

	// cf is the compact-filter sync (cfsync.go) when the session syncs
	// over BIP158; nil over BIP37.
	cf *cfSync
	// protocolSet is set once ProtocolAuto chose the protocol.
	protocolSet bool
}

// newManager reads the watcher's state and builds the first filter.
func newManager(n *Node) (*manager, error) {
	w := n.cfg.Watcher
	sp, err := w.SyncedTo()
	if err != nil {
		return nil, fmt.Errorf("%w: synced to: %w", ErrWatcher, err)
	}
	m := &manager{
		n:           n,
		w:           w,
		peers:       make(map[*peerState]struct{}),
		slots:       make(map[int32]*slot),
		birthday:    w.Birthday(),
		restart:     len(n.history) > 0,
		mempoolSeen: make(map[chainhash.Hash]struct{}),
		startAt:     n.clock.Now(),
	}
	if m.checkRNG, err = newCheckRNG(); err != nil {
		return nil, err
	}
	// Blocks whose omission check an earlier run left unfinished are
	// fetched and checked again (pendingchecks.go).
	low, err := m.loadRechecks(sp.Height)
	if err != nil {
		return nil, err
	}
	if low >= 0 {
		if _, err := w.Rollback(low - 1); err != nil {
			return nil, fmt.Errorf("%w: rollback to %d for unfinished omission checks: %w", ErrWatcher, low-1, err)
		}
		if sp, err = w.SyncedTo(); err != nil {
			return nil, fmt.Errorf("%w: synced to: %w", ErrWatcher, err)
		}
		n.log.Warn("omission checks of the last run did not finish: their blocks are fetched and checked again",
			"blocks", len(m.recheck), "from", low)
	}
	m.synced = sp
	m.rl.race, m.rl.coverFrom, m.rl.refetchTo, m.rl.walletBlocks = -1, -1, -1, -1
	m.drawSchedule(m.startAt)
	m.next = m.firstWanted(sp.Height + 1)
	m.reqHigh = m.next - 1
	els, err := w.FilterElements()
	if err != nil {
		return nil, fmt.Errorf("%w: filter elements: %w", ErrWatcher, err)
	}
	m.els = newElementSet(els)
	if n.cfg.Protocol == ProtocolBIP158 {
		m.cf = newCFSync(m)
	} else if _, err := m.currentFilter(); err != nil {
		return nil, err
	}
	m.st = n.Status()
	m.st.WatcherHeight, m.st.WatcherHash = sp.Height, sp.Hash
	return m, nil
}

// firstWanted returns the first height at or after h the watcher needs:
// never the genesis block, never below the birthday.
func (m *manager) firstWanted(h int32) int32 {
	return max(h, m.birthday, 1)
}

// currentFilter returns the filter template for the current elements,
// building it when the elements changed since the last one. A wallet's
// elements change with every payment it receives (a new outpoint), and
// with BLOOM_UPDATE_ALL the peers' filters already hold that outpoint, so
// most changes send nothing: the template is built only when a filter is
// sent (building one for each change cost 76% of a 2,000-address sync's
// CPU in the bench).
func (m *manager) currentFilter() (*bip37.Filter, error) {
	if m.filter != nil {
		return m.filter, nil
	}
	els := m.els.snapshot()
	if ds := m.n.decoys.active(); len(ds) > 0 {
		// A fresh slice: snapshot shares the element set's.
		els.Data = append(append(make([][]byte, 0, len(els.Data)+len(ds)), els.Data...), ds...)
	}
	// The outpoints the servers inserted for the outputs they matched,
	// false positives' included (reload.go, carried): a fresh slice too.
	// At most as many as the filter of the watcher's own elements has
	// room for: carrying never moves it to a larger capacity (past
	// BIP37's cap, fewer hash functions: more false positives, more
	// insertions to carry).
	room := int(filterpolicy.FilterCapacity(els.Len()))/2 - els.Len()
	for op := range m.rl.carried {
		if room <= 0 {
			break
		}
		if _, own := m.els.ops[op]; !own {
			els.OutPoints = append(els.OutPoints, op)
			room--
		}
	}
	f, err := filterpolicy.BuildFilter(els, m.n.cfg.FPRate, m.n.tweak)
	if err != nil {
		return nil, err
	}
	m.filter, m.filterEls = f, els.Len()
	return f, nil
}

// switchNeedsReload reports whether next, about to become the download
// peer, must be reloaded at once: its filter lacks an outpoint of the set
// that another connected peer's filter holds (a coin created in a block
// that peer filtered and next did not), so next would miss a spend the
// node used to see. An outpoint no peer's filter holds yet (a pending
// payment's guard, which no server inserts, or the outpoint of a payment
// just relayed) makes no reload here: it waits for the next reload point
// like every other element (pendingReason), or a switch right after a
// payment would send a filter that only a payment explains (on a live
// chain, a reload of every peer within a second of the relay).
func (m *manager) switchNeedsReload(next *peerState) bool {
	if next.mirror == nil {
		return false
	}
	for op := range m.els.ops {
		if next.mirror.MatchesOutPoint(&op) {
			continue
		}
		for other := range m.peers {
			if other != next && other.mirror != nil && other.mirror.MatchesOutPoint(&op) {
				return true
			}
		}
	}
	return false
}

// outpointsHeld reports whether a peer's filter (its mirror f) matches
// every outpoint of the set (outpointsLacking: a reason for the next
// scheduled reload). Data elements need no check: every
// peer holds those of the last reload, and the gap-limit race covers
// those it lacks (elementsChanged).
func (m *manager) outpointsHeld(f *bip37.Filter) bool {
	for op := range m.els.ops {
		if !f.MatchesOutPoint(&op) {
			return false
		}
	}
	return true
}

// run is the manager goroutine.
func (m *manager) run() {
	n := m.n
	tick := n.clock.TickAfter(n.cfg.Tuning.TickInterval)
	for {
		select {
		case msg := <-n.msgs:
			m.handle(msg)
		case now := <-tick:
			m.onTick(now)
			tick = n.clock.TickAfter(n.cfg.Tuning.TickInterval)
		case <-n.quit:
			return
		}
		m.publishStatus()
	}
}

// handle dispatches one message.
func (m *manager) handle(msg any) {
	switch msg := msg.(type) {
	case peerReadyMsg:
		m.onPeerReady(msg.ps)
	case peerDoneMsg:
		m.dropPeer(msg.ps, "disconnected")
	case reloadMsg:
		if m.cf == nil {
			m.reloadAll(msg.reason) // the user asked: at once
		}
	case peerWireMsg:
		ps := msg.ps
		defer ps.acct.release(msg.held)
		if !ps.ready {
			return // dropped peer still draining
		}
		switch w := msg.msg.(type) {
		case *wire.MsgHeaders:
			m.onHeaders(ps, w)
		case *wire.MsgMerkleBlock:
			m.onMerkleBlock(ps, w)
		case *wire.MsgTx:
			m.onTx(ps, w)
		case *wire.MsgBlock:
			if ps.cf != nil {
				m.cf.onBlock(ps, w)
			} else {
				m.onBlock(ps, w)
			}
		case *wire.MsgCFHeaders:
			if ps.cf != nil {
				m.cf.onCFHeaders(ps, w)
			} else {
				m.misbehave(ps, misbehaviorBadFilterHeader, "cfheaders not asked (no BIP157 sync with this peer)")
			}
		case *wire.MsgCFilter:
			if ps.cf != nil {
				m.cf.onCFilter(ps, w)
			} else {
				m.misbehave(ps, misbehaviorBadFilter, "cfilter not asked (no BIP157 sync with this peer)")
			}
		case *wire.MsgCFCheckpt:
			if ps.cf != nil {
				m.cf.onCFCheckpt(ps, w)
			} else {
				m.misbehave(ps, misbehaviorBadFilterHeader, "cfcheckpt not asked (no BIP157 sync with this peer)")
			}
		case *wire.MsgInv:
			m.onInv(ps, w)
		case *wire.MsgNotFound:
			if ps.cf != nil {
				m.cf.onNotFound(ps, w)
			} else {
				m.onNotFound(ps, w)
			}
		case *wire.MsgPong:
			if ps.cf == nil || !m.cf.onPong(ps, w) {
				m.onPong(ps, w)
			}
		case *wire.MsgReject:
			m.n.log.Info("peer rejected a message", "peer", ps.addr, "cmd", w.Cmd, "code", w.Code, "reason", w.Reason)
		}
	}
	m.schedule()
}

// onPeerReady starts using a peer whose handshake completed.
func (m *manager) onPeerReady(ps *peerState) {
	if _, banned := m.n.bans.IsBanned(ps.addr); banned {
		ps.p.Disconnect()
		return
	}
	ps.ready = true
	ps.lastBlock = ps.p.StartingHeight()
	if ps.rules == bip37.RulesCore {
		ps.rules = bip37.RulesFor(ps.p.UserAgent())
	}
	ps.pings = make(map[uint64]uint64)
	ps.txReqs = make(map[chainhash.Hash]*txReq)
	ps.lastAnswer = m.n.clock.Now()
	if !m.chooseProtocol(ps) {
		return
	}
	m.peers[ps] = struct{}{}
	if m.cf != nil {
		m.cf.onPeerReady(ps)
		m.n.log.Info("peer connected", "addr", ps.addr, "agent", ps.p.UserAgent(), "height", ps.lastBlock, "protocol", ProtocolBIP158)
		m.n.publish(PeerConnected{At: m.n.at(), Peer: ps.info(m.n, false)})
		m.refreshPeers()
		return
	}
	reason := transcript.ReasonNewPeer
	switch {
	case m.loads == 0 && m.restart:
		reason = transcript.ReasonRestart
	case m.loads == 0:
		reason = transcript.ReasonInitial
	}
	// The filter the other peers hold: elements added since wait for
	// the next reload point, when every peer gets them together.
	f, err := m.sentFilter()
	if err != nil {
		m.fail(err)
		return
	}
	m.loadFilter(ps, reason, f)
	m.n.log.Info("peer connected", "addr", ps.addr, "agent", ps.p.UserAgent(), "height", ps.lastBlock, "filter_rules", ps.rules)
	m.n.publish(PeerConnected{At: m.n.at(), Peer: ps.info(m.n, false)})
	if m.st.AtTip {
		m.sendMempool(ps)
	}
	m.refreshPeers()
}

// dropPeer forgets a peer (disconnected or banned); its outstanding
// requests go to other peers. It is idempotent.
func (m *manager) dropPeer(ps *peerState, reason string) {
	if !ps.ready {
		return
	}
	ps.ready = false
	delete(m.peers, ps)
	for _, r := range ps.reqs {
		m.abandon(r)
		m.requeueCheck(r) // a check it will not answer: ask another
	}
	ps.reqs = nil
	if ps.cur != nil {
		m.abandon(ps.cur.req)
		m.requeueCheck(ps.cur.req)
		ps.cur = nil
	}
	for _, tr := range ps.txReqs {
		if tr.block != nil {
			m.abandon(tr.block.req)
		}
	}
	ps.txReqs = nil
	ps.fullReqs = nil
	if m.dl == ps {
		m.dl = nil
	}
	if m.cf != nil {
		m.cf.dropPeer(ps)
	}
	m.n.log.Info("peer gone", "addr", ps.addr, "reason", reason)
	m.n.publish(PeerDisconnected{At: m.n.at(), Addr: ps.addr, Reason: reason})
	m.refreshPeers()
}

// abandon marks r stale and frees its slot for another request.
func (m *manager) abandon(r *blockReq) {
	if r == nil {
		return
	}
	r.stale = true
	if s := m.slots[r.height]; s != nil && s.req == r {
		s.req = nil
		m.retry = true
	}
}

// misbehave scores a violation; at the threshold the peer is banned and
// disconnected.
func (m *manager) misbehave(ps *peerState, kind misbehavior, detail string) {
	score, ban, banned, err := m.n.bans.Misbehaving(ps.addr, kind, detail)
	m.n.log.Warn("peer misbehaved", "addr", ps.addr, "kind", kind.String(), "detail", detail, "score", score)
	if err != nil {
		m.n.log.Error("save ban list", "err", err)
	}
	if !banned {
		return
	}
	m.n.publish(PeerBanned{At: m.n.at(), Addr: ps.addr, Reason: ban.Reason, Score: ban.Score, Until: ban.Until})
	m.dropPeer(ps, "banned: "+ban.Reason)
	ps.p.Disconnect()
}

// onTick runs housekeeping: stall detection and peer snapshots. A peer
// stalls when it owes data and made no progress on it (lastAnswer) for
// StallTimeout, or left a getheaders unanswered that long. Progress is an
// answer to a request, never any message: a download peer that stopped
// answering its batch and sends empty headers messages (which reset a
// message timer) is dropped all the same, and another takes over.
func (m *manager) onTick(now time.Time) {
	timeout := m.n.cfg.Tuning.StallTimeout
	for ps := range m.peers {
		if !ps.owesData() {
			ps.lastAnswer = now
		}
		var why string
		switch {
		case ps.owesData() && now.Sub(ps.lastAnswer) >= timeout:
			why = fmt.Sprintf("no block, transaction or pong it owes for %v", timeout)
		case !ps.headersReq.IsZero() && now.Sub(ps.headersReq) >= timeout:
			why = fmt.Sprintf("no answer to getheaders for %v", timeout)
		default:
			continue
		}
		ps.lastAnswer = now
		m.misbehave(ps, misbehaviorStall, why)
		if ps.ready {
			m.dropPeer(ps, "stalled")
			ps.p.Disconnect()
		}
	}
	if m.st.AtTip {
		for ps := range m.peers {
			m.sendMempool(ps) // one a reload asked for and the ban score held back
		}
	}
	m.refreshPeers()
	if len(m.st.Peers) > 0 {
		m.n.publish(PeersUpdated{At: m.n.at(), Peers: m.st.Peers, BytesReceived: m.n.bytesReceived()})
	}
	m.schedule()
}

// refreshPeers rebuilds the peer list of the status.
func (m *manager) refreshPeers() {
	out := make([]PeerInfo, 0, len(m.peers))
	best := int32(0)
	for ps := range m.peers {
		out = append(out, ps.info(m.n, ps == m.dl))
		best = max(best, ps.lastBlock)
	}
	slices.SortFunc(out, func(a, b PeerInfo) int {
		switch {
		case a.Addr < b.Addr:
			return -1
		case a.Addr > b.Addr:
			return 1
		}
		return 0
	})
	m.st.Peers = out
	m.st.PeerHeight = best
}

// publishStatus copies the manager's status for readers.
func (m *manager) publishStatus() {
	hash, height := m.n.store.Tip()
	m.st.HeaderHeight, m.st.HeaderHash = height, hash
	m.st.WatcherHeight, m.st.WatcherHash = m.synced.Height, m.synced.Hash
	m.st.ChecksInFlight = m.checksInFlight()
	// One pass over the requests in flight for both.
	plans := m.pendingPlans()
	m.st.AwaitingCheck = m.awaitingOf(plans)
	m.savePlans(false, plans)
	m.st.Protocol = m.protocol()
	if m.cf != nil {
		m.st.CF = m.cf.st
	}
	if m.dl != nil && m.dl.mirror != nil {
		m.st.Filter.PredictedFPRate = m.dl.mirror.CurrentFPRate()
	}
	st := m.st
	m.n.setStatus(func(s *Status) {
		stopped := s.Stopped
		*s = st
		s.Stopped = stopped
	})
}

// fail stops syncing after an error that is not a peer's fault.
func (m *manager) fail(err error) {
	if m.st.Err == nil {
		m.st.Err = err
		m.n.log.Error("sync stopped", "err", err)
		m.n.publish(SyncStopped{At: m.n.at(), Err: err})
	}
}

// loadFilter records filter f in the transcript, then sends it to ps. A
// filter that cannot be recorded is not sent, and the sync stops:
// bloomwatch never sends a peer a filter its user cannot account for.
// Requests the peer has not answered yet were filtered with its old
// filter: they turn stale and are asked again (a scheduled reload drains
// first, so there are none).
func (m *manager) loadFilter(ps *peerState, reason string, f *bip37.Filter) {
	height := m.next - 1
	payload := f.Serialize()
	// The record carries f itself: its readers (the meter, the
	// dashboard) share it instead of decoding the bytes again.
	rec, err := m.n.trans.Append(transcript.Record{
		Time: m.n.clock.Now(), Peer: ps.addr, Height: height,
		Kind: transcript.KindFilterLoad, Filter: payload, Reason: reason, Via: ps.via,
		Transport: ps.transport, Wire: m.n.filterLoadWire(ps, len(payload)),
	}.WithBloom(f))
	if err != nil {
		m.fail(fmt.Errorf("%w: filterload to %s not sent: %w", ErrTranscriptWrite, ps.addr, err))
		return
	}
	ps.send(f.MsgFilterLoad())
	ps.opsHeld = m.els.opsLogged()
	ps.mirror = f.Clone()
	ps.mirror.SetRules(ps.rules)
	ps.filterSeq = rec.Seq
	ps.resetDrift()
	ps.filterGen++
	for _, r := range ps.reqs {
		m.abandon(r)
	}
	if ps.cur != nil {
		m.abandon(ps.cur.req)
	}
	for _, tr := range ps.txReqs {
		if tr.block != nil {
			m.abandon(tr.block.req)
		}
	}
	m.loads++
	nEls := m.filterEls
	if f == m.rl.sent {
		nEls = m.rl.sentEls
	}
	fp := f.FPRate(float64(nEls))
	capacity := filterpolicy.FilterCapacity(nEls)
	ps.loadRate = f.FPRate(float64(capacity))
	capped := bip37.Capped(capacity, m.n.cfg.FPRate)
	info := FilterInfo{
		Elements: nEls, Decoys: len(m.n.decoys.active()), Capacity: capacity, Bytes: f.Size(),
		HashFuncs: f.HashFuncs(), Tweak: f.Tweak(), Flags: f.Flags().String(),
		FPRate: fp, PredictedFPRate: ps.mirror.CurrentFPRate(), TargetFPRate: m.n.cfg.FPRate,
		Capped: capped, Loads: m.loads, Seq: rec.Seq,
	}
	m.st.Filter = info
	switch {
	case nEls > filterpolicy.MaxFilterElements:
		m.n.log.Warn("the wallet watches more elements than a BIP37 filter can tell apart: "+
			"the filter is capped at 36,000 bytes and one hash function, and matches many transactions",
			"elements", nEls, "max_elements", filterpolicy.MaxFilterElements, "rate_now", fp, "target", m.n.cfg.FPRate)
	case capped:
		m.n.log.Warn("filter capped at BIP37's 36,000 bytes: it cannot reach the false-positive target",
			"elements", nEls, "capacity", capacity, "target", m.n.cfg.FPRate,
			"rate_now", fp, "rate_at_capacity", ps.loadRate)
	}
	m.n.log.Info("filterload", "seq", rec.Seq, "peer", ps.addr, "reason", reason, "elements", nEls,
		"bytes", f.Size(), "k", f.HashFuncs(), "height", height)
	m.n.publish(FilterLoaded{At: m.n.at(), Peer: ps.addr, Reason: reason, FilterInfo: info, Record: rec})
}

// pickDownloadPeer chooses the ready peer with the best chain; among
// equals, the one listed first in Config.Connect.
func (m *manager) pickDownloadPeer() {
	if m.dl != nil {
		if m.next <= m.dl.lastBlock {
			return
		}
		// The download peer has nothing we need: switch when another
		// peer has more.
		better := false
		for ps := range m.peers {
			better = better || ps.lastBlock > m.dl.lastBlock
		}
		if !better {
			return
		}
		m.dl = nil
	}
	if !m.begun && len(m.peers) < m.n.cfg.Tuning.MinPeers &&
		m.n.clock.Now().Sub(m.startAt) < m.n.cfg.Tuning.MinPeersWait {
		return
	}
	var best *peerState
	for ps := range m.peers {
		if best == nil || ps.lastBlock > best.lastBlock || (ps.lastBlock == best.lastBlock && ps.slot < best.slot) {
			best = ps
		}
	}
	m.dl = best
	if best != nil {
		m.begun = true
		if m.switchNeedsReload(best) {
			// Not a match: the peer changed. Every peer gets the same
			// filter.
			m.reloadAll(transcript.ReasonOutPoints)
		}
		m.n.log.Info("download peer", "addr", best.addr, "height", best.lastBlock)
		m.refreshPeers()
	}
}

// schedule sends whatever requests are due: headers, then filtered blocks
// in the window ahead of the watcher.
func (m *manager) schedule() {
	if m.st.Err != nil {
		return
	}
	if m.cf == nil {
		m.reviewReload()
		m.runWaitingChecks()
	}
	m.pickDownloadPeer()
	dl := m.dl
	if dl == nil {
		return
	}
	_, tip := m.n.store.Tip()
	if dl.headersReq.IsZero() && !dl.headersDone {
		m.sendGetHeaders(dl)
	}
	if m.cf != nil {
		m.cf.schedule()
	} else {
		m.requestBlocks(dl, min(tip, dl.lastBlock))
	}
	m.checkSynced()
}

// requestBlocks fills the window [next, next+Window) up to tip (the
// header tip, or the peer's height when lower) with getdata batches to
// ps, each closed by a ping.
func (m *manager) requestBlocks(ps *peerState, tip int32) {
	if m.holding() || m.st.Err != nil {
		return // a reload waits for the peers to drain
	}
	limit := min(tip, m.next+int32(m.n.cfg.Tuning.Window)-1)
	// An aligned re-fetch starts with its cover blocks, in the same
	// getdata as the blocks it is for.
	batch := m.coverRequests(ps)
	if len(batch) == 0 && !m.retry && limit < tip && limit-m.reqHigh < int32(m.n.cfg.Tuning.BatchSize) {
		return // wait until a whole batch fits: one ping per batch
	}
	from := m.reqHigh + 1
	if m.retry {
		from = m.next
		// Slots above this peer's limit still wait for a request.
		m.retry = limit < m.reqHigh
	}
	from = max(from, m.next)
	for h := from; h <= limit; h++ {
		s := m.slots[h]
		if s == nil {
			hash, err := m.n.store.HashByHeight(h)
			if err != nil {
				m.fail(fmt.Errorf("%w: hash at %d: %w", ErrHeaderStore, h, err))
				return
			}
			s = &slot{hash: hash}
			m.slots[h] = s
			m.reqHigh = max(m.reqHigh, h)
		}
		if s.block != nil || s.req != nil {
			continue
		}
		r := &blockReq{hash: s.hash, height: h, gen: ps.filterGen, refetch: s.attempts > 0 || h <= m.rl.refetchTo}
		s.req = r
		s.attempts++
		batch = append(batch, r)
		if len(batch) == m.n.cfg.Tuning.BatchSize {
			m.sendBatch(ps, batch)
			batch = nil
		}
	}
	if len(batch) > 0 {
		m.sendBatch(ps, batch)
	}
}

// sendBatch sends one getdata of filtered blocks followed by a ping whose
// pong marks the end of the answers.
func (m *manager) sendBatch(ps *peerState, reqs []*blockReq) {
	if !m.recordRequests(ps, reqs) {
		return
	}
	if !ps.owesData() {
		ps.lastAnswer = m.n.clock.Now()
	}
	ps.batch++
	gd := wire.NewMsgGetDataSizeHint(uint(len(reqs)))
	for _, r := range reqs {
		r.batch = ps.batch
		_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeFilteredBlock, &r.hash))
		ps.reqs = append(ps.reqs, r)
	}
	ps.send(gd)
	m.sendPing(ps)
}

// sendPing sends a ping naming the peer's current batch.
func (m *manager) sendPing(ps *peerState) {
	nonce := m.nonce()
	ps.pings[nonce] = ps.batch
	ps.send(wire.NewMsgPing(nonce))
}

// nonce returns a ping nonce unique within the node.
func (m *manager) nonce() uint64 {
	m.nonces++
	return uint64(m.n.clock.Now().UnixNano())<<16 ^ m.nonces
}

// recordRequests writes what a getdata of reqs shows ps to the transcript
// before it is sent, and publishes each record (BlocksRequested), as the
// filterload records are: one getdata record
// per run of consecutive heights with one reason (what the serving peer
// learns from the request pattern: the birthday, the blocks asked again
// after a reload). When the record cannot be written the sync stops and
// nothing is sent; the requests stay on the slots, unanswered.
func (m *manager) recordRequests(ps *peerState, reqs []*blockReq) bool {
	for i := 0; i < len(reqs); {
		reason := m.requestReason(reqs[i])
		j := i + 1
		for j < len(reqs) && reqs[j].height == reqs[j-1].height+1 && m.requestReason(reqs[j]) == reason {
			j++
		}
		rec, err := m.n.trans.Append(transcript.Record{
			Time: m.n.clock.Now(), Peer: ps.addr, Height: reqs[i].height, Kind: transcript.KindGetData,
			Count: int64(j - i), Reason: reason, Via: ps.via, Transport: ps.transport,
		})
		if err != nil {
			m.fail(fmt.Errorf("%w: getdata to %s not sent: %w", ErrTranscriptWrite, ps.addr, err))
			return false
		}
		m.n.publish(BlocksRequested{At: At{Time: rec.Time}, Record: rec})
		i = j
	}
	return true
}

// requestReason is why r is asked: a check, a block asked before, or a
// block of the catch-up sync or of the live chain.
func (m *manager) requestReason(r *blockReq) string {
	switch {
	case r.check != nil:
		return transcript.ReasonCheck
	case r.refetch:
		return transcript.ReasonRefetch
	case m.liveFrom > 0 && r.height > m.liveFrom:
		return transcript.ReasonLive
	}
	return transcript.ReasonSync
}
