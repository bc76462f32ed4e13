package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// Heights a matched row shows instead of a block height.
const (
	heightMempool = -1
	heightReorged = -2
)

// rateWindow is how far back (in event time) blocks/s is measured.
const rateWindow = 10 * time.Second

// matchRow is one matched transaction: what the table shows and what the
// detail view explains. The rows are a bounded ring (MaxMatched); a row
// holds the transaction (shared with the node, never modified) and the
// match explanation, and nothing derived that could grow.
type matchRow struct {
	txid    chainhash.Hash
	height  int32
	amount  int64
	verdict verdict
	// n is the row's arrival number (the table's default order).
	n uint64
	// rev counts the row's changes (the detail view's cache key).
	rev uint64
	// tx is the transaction (nil when the event did not carry it).
	tx *wire.MsgTx
	// peer served it through the filter of transcript record seq; why
	// is what matched (nil when unknown) and fpRate that filter's rate.
	peer   string
	seq    uint64
	why    *bip37.Match
	fpRate float64
	// hay is the row's search text (txid and output addresses), built
	// on the first search that needs it.
	hay string
}

// heightSample is one processed block's height and event time.
type heightSample struct {
	at     time.Time
	height int32
}

// state is everything the events, readings and log lines built up.
type state struct {
	// header
	headerHeight int32
	blockHeight  int32
	startHeight  int32 // height before the first processed block
	started      bool
	peerHeight   int32
	synced       bool
	// awaiting counts the blocks awaiting an omission check while the
	// node is at the tip (spv.ChecksAwaited): it is not synced yet.
	awaiting     int
	syncedLogged int32 // the height of the last "synced to" log line, -1 before
	samples      *ring[heightSample]
	lastBlock    time.Time

	// filter
	filter      spv.FilterLoaded
	haveFilter  bool
	pic         filterPicture // the latest filter, decoded, for the picture
	filterGen   uint64        // bumped on every filterload (picture cache key)
	peerFilters map[string]sentFilter
	filterMeta  map[uint64]filterMeta // by transcript seq, bounded
	metaOrder   *ring[uint64]
	reloads     int // filterloads sent for a reload reason (to each peer)
	// unchecked counts blocks delivered with no omission check for want
	// of a second peer; uncheckedRun is set during a run of them.
	unchecked    int
	uncheckedRun bool
	lastReason   string
	observedFP   float64
	theoryFP     float64
	haveBlockFP  bool

	// matched transactions; all holds every row, own only the wallet's
	// (the view with false positives hidden). byTxid indexes all.
	all      *ring[*matchRow]
	own      *ring[*matchRow]
	byTxid   map[chainhash.Hash]*matchRow
	nOwn     int
	nFP      int
	arrivals uint64 // rows ever added (matchRow.n)
	rowsGen  uint64 // bumped when rows are added or change (derived view key)
	reorgs   int
	peers    map[string]spv.PeerInfo
	peerList []spv.PeerInfo // the download peer first, then by address; rebuilt on change

	// privacy
	readings     *ring[privacy.Reading]
	reading      privacy.Reading
	haveReading  bool
	readingsGen  uint64 // bumped on every new reading (chart cache key)
	readingsSeen uint64 // records with a reading (the ring keeps the last MaxReadings)

	log *ring[string]
}

// newState returns an empty state.
func newState() *state {
	return &state{
		samples:      newRing[heightSample](64),
		syncedLogged: -1,
		peerFilters:  make(map[string]sentFilter),
		filterMeta:   make(map[uint64]filterMeta),
		metaOrder:    newRing[uint64](maxFilterMeta),
		all:          newRing[*matchRow](MaxMatched),
		own:          newRing[*matchRow](MaxMatched),
		byTxid:       make(map[chainhash.Hash]*matchRow),
		peers:        make(map[string]spv.PeerInfo),
		readings:     newRing[privacy.Reading](MaxReadings),
		log:          newRing[string](MaxLogLines),
	}
}

// stamp formats an event time for the log, in local time as the
// logger's lines are.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "--:--:--"
	}
	return t.Local().Format("15:04:05")
}

// logf appends a line about an event to the log pane.
func (s *state) logf(t time.Time, format string, args ...any) {
	s.log.push(stamp(t) + " " + fmt.Sprintf(format, args...))
}

// apply folds one node event into the state. It returns the number of
// rows added to the matched table's current view (own or all).
func (s *state) apply(e spv.Event, hideFP bool) (added int) {
	switch e := e.(type) {
	case spv.PeerConnected:
		e.Peer = cleanPeer(e.Peer)
		s.peers[e.Peer.Addr] = e.Peer
		s.notePeerHeight(max(e.Peer.StartHeight, e.Peer.LastBlock))
		s.rebuildPeers()
		s.logf(e.Time, "peer connected %s %s", e.Peer.Addr, e.Peer.UserAgent)
	case spv.PeerDisconnected:
		e.Addr, e.Reason = clean(e.Addr), clean(e.Reason)
		delete(s.peers, e.Addr)
		s.rebuildPeers()
		s.logf(e.Time, "peer disconnected %s: %s", e.Addr, e.Reason)
	case spv.PeerBanned:
		e.Addr, e.Reason = clean(e.Addr), clean(e.Reason)
		delete(s.peers, e.Addr)
		s.rebuildPeers()
		s.logf(e.Time, "peer BANNED %s (score %d) until %s: %s", e.Addr, e.Score, stamp(e.Until), e.Reason)
	case spv.PeersUpdated:
		clear(s.peers)
		for _, p := range e.Peers {
			p = cleanPeer(p)
			s.peers[p.Addr] = p
			s.notePeerHeight(max(p.StartHeight, p.LastBlock))
		}
		s.rebuildPeers()
	case spv.HeadersProgress:
		s.headerHeight = e.Height
		s.notePeerHeight(e.PeerHeight)
	case spv.FilterLoaded:
		e.Peer, e.Reason, e.Flags = clean(e.Peer), clean(e.Reason), clean(e.Flags)
		switch e.Reason {
		case transcript.ReasonInitial, transcript.ReasonRestart, transcript.ReasonNewPeer:
			// a first filter for a node or a peer, not a reload
		default:
			s.reloads++
			s.lastReason = e.Reason
		}
		s.filter, s.haveFilter = e, true
		s.noteFilter(e)
		s.logf(e.Time, "filterload #%d %s: %d elements, %d B, k %d to %s", e.Record.Seq, e.Reason, e.Elements, e.Bytes, e.HashFuncs, e.Peer)
	case spv.MatchedTx:
		return s.applyMatch(e, hideFP)
	case spv.BlockProcessed:
		s.applyBlock(e)
	case spv.Reorg:
		s.applyReorg(e)
	case spv.BlockUnchecked:
		s.unchecked++
		if e.Abandoned {
			s.awaiting = max(s.awaiting-1, 0)
			s.logf(e.Time, "block %d check ABANDONED (%s): it stays as its download peer delivered it", e.Height, clean(e.Reason))
			break
		}
		if !s.uncheckedRun {
			s.uncheckedRun = true
			s.logf(e.Time, "block %d UNCHECKED (%s): one peer can hide the wallet's transactions", e.Height, clean(e.Reason))
		}
	case spv.ChecksAwaited:
		if s.awaiting == 0 {
			s.logf(e.Time, "at the tip (height %d), %d %s awaiting a check", e.Height, e.Blocks, plural(e.Blocks, "block", "blocks"))
		}
		s.synced, s.awaiting = false, e.Blocks
		s.blockHeight = max(s.blockHeight, e.Height)
		s.headerHeight = max(s.headerHeight, e.Height)
	case spv.SyncDone:
		s.synced, s.awaiting = true, 0
		s.blockHeight = max(s.blockHeight, e.Height)
		s.headerHeight = max(s.headerHeight, e.Height)
		// The node says synced once per tip; a reorg back to a tip of
		// the same height says it again: log each height once.
		if e.Height != s.syncedLogged {
			s.syncedLogged = e.Height
			s.logf(e.Time, "synced to height %d", e.Height)
		}
	}
	return 0
}

// bestHeight returns the best height the peers have shown: announced in
// their version or inv messages, or given as headers (a peer that serves a
// header at height h has the chain to h even before it announces it).
func (s *state) bestHeight() int32 {
	return max(s.peerHeight, s.headerHeight)
}

// notePeerHeight raises the best known peer height.
func (s *state) notePeerHeight(h int32) {
	s.peerHeight = max(s.peerHeight, h)
}

// rebuildPeers refreshes the peer list: the download peer first (a panel
// that has room for one row shows the peer that serves the blocks), then
// the others by address.
func (s *state) rebuildPeers() {
	s.peerList = s.peerList[:0]
	for _, p := range s.peers {
		s.peerList = append(s.peerList, p)
	}
	sort.Slice(s.peerList, func(i, j int) bool {
		a, b := s.peerList[i], s.peerList[j]
		if a.Download != b.Download {
			return a.Download
		}
		return a.Addr < b.Addr
	})
}

// downloadPeer returns the download peer's address, or "".
func (s *state) downloadPeer() string {
	for _, p := range s.peerList {
		if p.Download {
			return p.Addr
		}
	}
	return ""
}

// verdict is what the watcher said of a matched transaction.
type verdict uint8

// The verdicts. verdictSeen is a transaction the watcher had already
// judged (a block fetched again after the filter grew, or a block
// re-applied after a restart): the event carries neither flag.
const (
	verdictSeen verdict = iota
	verdictWallet
	verdictFP
)

// verdictOf returns an event's verdict.
func verdictOf(e spv.MatchedTx) verdict {
	switch {
	case e.Relevant:
		return verdictWallet
	case e.FalsePositive:
		return verdictFP
	}
	return verdictSeen
}

// applyMatch records one matched transaction. A txid seen before (a
// mempool transaction now mined, a block fetched again, one from a
// reorged block) is updated in place: its height always, its verdict,
// amount and match explanation only when the event carries a verdict.
func (s *state) applyMatch(e spv.MatchedTx, hideFP bool) int {
	v := verdictOf(e)
	e.Peer = clean(e.Peer)
	s.rowsGen++
	if r, ok := s.byTxid[e.Txid]; ok {
		r.height = e.Height
		r.rev++
		if r.tx == nil && e.Tx != nil {
			r.tx, r.hay = e.Tx, ""
		}
		if v == verdictSeen {
			return 0
		}
		r.amount = e.Amount
		r.setWhy(e)
		if v == r.verdict {
			return 0
		}
		s.count(r.verdict, -1)
		s.count(v, 1)
		if v == verdictWallet {
			s.own.push(r)
		}
		r.verdict = v
		return 0
	}
	s.arrivals++
	r := &matchRow{txid: e.Txid, height: e.Height, amount: e.Amount, verdict: v, n: s.arrivals, tx: e.Tx}
	r.setWhy(e)
	if old, evicted := s.all.push(r); evicted && s.byTxid[old.txid] == old {
		delete(s.byTxid, old.txid)
	}
	s.byTxid[e.Txid] = r
	s.count(v, 1)
	switch {
	case v == verdictWallet:
		s.own.push(r)
		return 1
	case hideFP:
		return 0
	}
	return 1
}

// setWhy records an event's match explanation on its row.
func (r *matchRow) setWhy(e spv.MatchedTx) {
	if e.Why == nil && e.Peer == "" {
		return
	}
	r.peer, r.seq, r.why, r.fpRate = e.Peer, e.FilterSeq, nil, e.FilterFPRate
	if e.Why != nil {
		w := *e.Why // the kind is drawn: a copy with it cleaned
		w.Kind = bip37.MatchKind(clean(string(w.Kind)))
		r.why = &w
	}
}

// count adds d to the counter of a verdict.
func (s *state) count(v verdict, d int) {
	switch v {
	case verdictWallet:
		s.nOwn += d
	case verdictFP:
		s.nFP += d
	}
}

// applyBlock records one processed block.
func (s *state) applyBlock(e spv.BlockProcessed) {
	if !s.started {
		s.startHeight, s.started = e.Height-1, true
	}
	s.blockHeight = e.Height
	s.headerHeight = max(s.headerHeight, e.Height)
	s.notePeerHeight(e.PeerHeight)
	s.observedFP, s.theoryFP, s.haveBlockFP = e.ObservedFPRate, e.TheoreticalFPRate, true
	if e.Checks&(spv.CheckSecondPeer|spv.CheckFullBlock) != 0 {
		s.uncheckedRun = false
	}
	if !e.Time.IsZero() {
		s.samples.push(heightSample{at: e.Time, height: e.Height})
		s.lastBlock = e.Time
	}
}

// applyReorg marks the rows of disconnected blocks and rewinds the tip.
func (s *state) applyReorg(e spv.Reorg) {
	s.reorgs++
	s.rowsGen++
	for i := 0; i < s.all.len(); i++ {
		if r := s.all.at(i); r.height > e.ForkHeight {
			r.height = heightReorged
			r.rev++
		}
	}
	s.blockHeight = min(s.blockHeight, e.ForkHeight)
	s.samples.reset()
	s.logf(e.Time, "REORG at fork %d: %d -> %d (old tip %s)", e.ForkHeight, e.OldHeight, e.NewHeight, shortHash(e.OldTip))
}

// rate returns blocks per second over the last rateWindow of processed
// blocks, and false when it cannot be measured.
func (s *state) rate() (float64, bool) {
	n := s.samples.len()
	if n < 2 {
		return 0, false
	}
	last := s.samples.last(0)
	first := last
	for i := 1; i < n; i++ {
		p := s.samples.last(i)
		if last.at.Sub(p.at) > rateWindow {
			break
		}
		first = p
	}
	dt := last.at.Sub(first.at).Seconds()
	if dt <= 0 || last.height <= first.height {
		return 0, false
	}
	return float64(last.height-first.height) / dt, true
}

// progress returns the block sync fraction in [0, 1].
func (s *state) progress() float64 {
	if s.synced && s.blockHeight >= s.bestHeight() {
		return 1
	}
	span := s.bestHeight() - s.startHeight
	if !s.started || span <= 0 {
		return 0
	}
	return min(max(float64(s.blockHeight-s.startHeight)/float64(span), 0), 1)
}

// addReading records one privacy reading. A reading for the same record
// as the last one (the universe grew with a block) replaces it, and one
// before any record is not plotted: the chart has one point per record
// sent.
func (s *state) addReading(r privacy.Reading) {
	r.Peer, r.Reason, r.Kind = clean(r.Peer), clean(r.Reason), transcript.Kind(clean(string(r.Kind)))
	if r.CF != nil {
		// A copy: the sender may hold the same CFReading.
		cf := *r.CF
		cf.PerPeer = make([]privacy.PeerBlocks, len(r.CF.PerPeer))
		for i, p := range r.CF.PerPeer {
			cf.PerPeer[i] = privacy.PeerBlocks{Peer: clean(p.Peer), Blocks: p.Blocks}
		}
		r.CF = &cf
	}
	switch {
	case r.Kind == "":
		// no record yet (the universe was set first): nothing to plot
	case s.readings.len() > 0 && r.Seq == s.reading.Seq && r.Kind == s.reading.Kind:
		s.readings.setLast(r)
	default:
		s.readings.push(r)
		s.readingsSeen++
	}
	s.reading, s.haveReading = r, true
	s.readingsGen++
}

// shortHash returns the first 12 hex digits of a hash.
func shortHash(h chainhash.Hash) string {
	return h.String()[:12]
}

// maxFieldLen caps a string from the network (a user agent, a reason).
const maxFieldLen = 120

// clean makes a string that may come from a peer safe to draw: control
// characters (escape sequences included) become spaces, invalid UTF-8
// becomes U+FFFD, and it is capped at maxFieldLen runes.
func clean(s string) string { return cleanUpTo(s, maxFieldLen) }

// cleanUpTo is clean with a cap of n runes: a sentence written to be read
// whole (the universe's source in the help view) gets more room than a
// field from the network.
func cleanUpTo(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = sanitize(s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// cleanPeer cleans a peer's strings.
func cleanPeer(p spv.PeerInfo) spv.PeerInfo {
	p.Addr, p.UserAgent = clean(p.Addr), clean(p.UserAgent)
	return p
}
