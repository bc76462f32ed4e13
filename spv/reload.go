package spv

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Reloads. A peer that sees a filterload right after it relayed or served
// a transaction learns that the transaction was the wallet's. So no match
// ever makes the node send a filter:
//
//   - The watcher keeps a lookahead reserve of keys beyond its gap limit
//     (watch.ElementDelta.Reserve) that every filter holds, so a payment never
//     needs a new filter to stay safe. The elements a top-up of the
//     reserve adds wait for the next scheduled reload point.
//   - Reload points fall every Config.ReloadEvery delivered blocks or
//     Tuning.ReloadInterval, whichever comes first, each interval drawn
//     uniformly from half to one and a half times its mean. At a point
//     the filters of every peer are reloaded together, with one filter,
//     when something is pending: elements the last filter lacks (new
//     keys), a peer's filter past Tuning.ReloadFPRatio times its rate
//     (fp-drift), a decoy to retire, an outpoint of the set a peer's
//     filter lacks (outpoints); otherwise nothing is sent.
//   - A filter that drifts during a catch-up is reloaded at once, to
//     every peer (catchUpDrift).
//   - While the node follows the live chain a pending reload also waits
//     for the quiet window (Tuning.QuietBlocks delivered blocks and
//     Tuning.QuietTime since the last wallet transaction), at most
//     maxDeferFactor QuietTimes past the point. During a catch-up the peers see a stream
//     of hundreds of blocks and the filterload comes after all the
//     blocks asked before it were answered (the drain below), at a
//     batch boundary: its place says nothing about any one block.
//   - A reload first drains: no new block or check is asked until every
//     peer answered what it was asked, so the blocks in flight are
//     neither thrown away nor filtered with two filters.
//   - A new peer gets the filter the others got at the last reload, not
//     a newer one.
//
// The gap-limit race stays closed: when a delivered block (or a mempool
// transaction) makes the watcher need an element the download peer's
// filter lacks (its reserve ran out between two reload points: a deep
// first sync of a busy wallet, an import), delivery stops before the
// blocks that filter may have missed, every peer is reloaded (at once
// while catching up and after a rollback; on the live chain after the
// quiet window, the blocks still being fetched as usual meanwhile) and the blocks are
// fetched again from the start of the aligned window of
// Config.RefetchWindow blocks that holds the first of them: the first
// block of the re-fetch is a multiple of the window, not the paying
// block. The blocks before the paying one are fetched in the same
// getdata as cover and discarded.

// liveDepth is how close to the header tip the watcher must be for the
// node to count as following the live chain (the quiet window applies).
const liveDepth = 6

// maxDeferFactor bounds how long the quiet window may hold a due reload:
// this many Tuning.QuietTime past the reload point (a wallet paid every
// few minutes would otherwise never reload).
const maxDeferFactor = 3

// newRand returns a generator seeded from the system's randomness: the
// schedule's jitter must not be predictable by a peer.
func newRand() *rand.Rand {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		// crypto/rand does not fail on the platforms Go supports.
		binary.LittleEndian.PutUint64(seed[:], uint64(time.Now().UnixNano()))
	}
	return rand.New(rand.NewChaCha8(seed))
}

// reloadState is the manager's reload schedule and what is pending.
type reloadState struct {
	// sent is the filter every peer got at the last reload (a new peer
	// gets it too); sentEls the elements it holds.
	sent    *bip37.Filter
	sentEls int
	// pendingKeys counts elements added since that sent lacks.
	pendingKeys int
	// decoyBusy is set when a busy decoy waits to leave the filters.
	decoyBusy bool
	// delivered counts the blocks delivered in this run; atBlocks and
	// atTime are the next reload point.
	delivered int
	atBlocks  int
	atTime    time.Time
	// dueSince is when a reload point was reached with something
	// pending (zero: none reached).
	dueSince time.Time
	// draining is the reason of a reload waiting for the peers to
	// answer what they were asked ("" none).
	draining string
	// walletAt and walletBlocks are when the last wallet transaction
	// was seen and the delivered count at the last block holding one
	// (walletBlocks -1: none yet).
	walletAt     time.Time
	walletBlocks int
	// race is the first height to deliver again after a gap-race
	// reload (-1: none); raceSince when it was found and raceAt the
	// earliest time of its reload on the live chain.
	race      int32
	raceSince time.Time
	raceAt    time.Time
	// raceNow skips the quiet window: the race came from a rollback,
	// whose new elements (the inputs of the payments it made pending
	// again) name those payments whenever they are sent.
	raceNow bool
	// carried are the outpoints the servers inserted into their filters
	// for the outputs they matched (BLOOM_UPDATE_ALL), false positives'
	// included, not spent by a transaction the node saw since: every
	// reload carries them (see carry).
	carried map[wire.OutPoint]struct{}
	// coverFrom, when not -1, is the aligned start of the next re-fetch:
	// blocks from it up to next are asked as cover first, in the same
	// getdata. refetchTo is the highest height asked before the last
	// gap-race reload: blocks up to it are recorded as re-fetched.
	coverFrom int32
	refetchTo int32
}

// jitter draws an interval uniformly from mean/2 to 3*mean/2.
func (m *manager) jitter(mean int64) int64 {
	if mean <= 1 {
		return max(mean, 1)
	}
	return mean/2 + m.n.rng.Int64N(mean+1)
}

// drawSchedule places the next reload point.
func (m *manager) drawSchedule(now time.Time) {
	r := &m.rl
	r.atBlocks = r.delivered + int(m.jitter(int64(m.n.cfg.ReloadEvery)))
	r.atTime = now.Add(time.Duration(m.jitter(int64(m.n.cfg.Tuning.ReloadInterval))))
	r.dueSince = time.Time{}
}

// live reports whether the node follows the live chain: it has been
// synced in this run and the watcher is within liveDepth of the header
// tip.
func (m *manager) live() bool {
	_, tip := m.n.store.Tip()
	return m.liveFrom > 0 && tip-m.synced.Height <= liveDepth
}

// noteWalletTx records a wallet transaction seen now, in a delivered
// block when inBlock.
func (m *manager) noteWalletTx(inBlock bool) {
	m.rl.walletAt = m.n.clock.Now()
	if inBlock {
		m.rl.walletBlocks = m.rl.delivered
	}
}

// quiet reports whether the quiet window after the last wallet
// transaction has passed; blocks says whether the block half counts.
func (m *manager) quiet(now time.Time, blocks bool) bool {
	r := &m.rl
	if blocks && r.walletBlocks >= 0 && r.delivered-r.walletBlocks < m.n.cfg.Tuning.QuietBlocks {
		return false
	}
	return r.walletAt.IsZero() || !now.Before(r.walletAt.Add(m.n.cfg.Tuning.QuietTime))
}

// pendingReason names what a scheduled reload would be for ("" nothing).
func (m *manager) pendingReason() string {
	switch {
	case m.rl.pendingKeys > 0:
		return transcript.ReasonNewKey
	case m.rl.decoyBusy:
		return transcript.ReasonDecoyBusy
	case m.drifted():
		return transcript.ReasonFPDrift
	case m.outpointsLacking():
		return transcript.ReasonOutPoints
	}
	return ""
}

// outpointsLacking reports whether a peer's filter lacks an outpoint of
// the set: a coin created in a block that peer did not filter (a block
// its omission check skipped), a pending payment's guard (no server
// inserts those). Until the next reload that peer matches no spend of it:
// it cannot relay one from its mempool, and an omission check on it
// cannot show one the download peer left out.
func (m *manager) outpointsLacking() bool {
	for ps := range m.peers {
		if ps.mirror != nil && !m.outpointsHeld(ps.mirror) {
			return true
		}
	}
	return false
}

// catchUpDrift reloads every peer at once when a filter drifted during a
// catch-up (reviewed after every delivered block there): waiting for the
// next point and the drain would let hundreds more blocks through a
// filter whose false positives feed its own growth (measured: 1,699 false
// positives instead of 238 in TestCheckingPeerDoesNotSaturate's one-peer
// sync at 0.005). It says nothing about which match is the wallet's: every
// match, false or not, fills the server's filter, which the server counts
// itself, and during a catch-up the filterload comes while the peer still
// serves the blocks asked before it, up to a window past the block that
// crossed the threshold. The blocks in flight are asked again from the
// first one not received, the front of the window. On the live chain a
// drifted filter waits for the next point and the quiet window.
func (m *manager) catchUpDrift() {
	if m.live() || m.rl.race >= 0 || !m.drifted() {
		return
	}
	m.reloadAll(transcript.ReasonFPDrift)
}

// drifted reports whether a peer's filter, with the insertions its server
// made, predicts more than its reload threshold of false positives.
func (m *manager) drifted() bool {
	for ps := range m.peers {
		if ps.mirror != nil && ps.mirror.CurrentFPRate() > m.reloadThreshold(ps) {
			return true
		}
	}
	return false
}

// reviewReload runs before every scheduling pass: it sends the reload of
// a gap-limit race when its time has come, otherwise a scheduled reload
// when a point was reached with something pending and the peers have
// answered what they were asked.
func (m *manager) reviewReload() {
	if m.st.Err != nil {
		return
	}
	r := &m.rl
	now := m.n.clock.Now()
	if r.race >= 0 {
		if !m.live() || r.raceNow || (!now.Before(r.raceAt) && (m.quiet(now, false) ||
			now.Sub(r.raceSince) >= maxDeferFactor*m.n.cfg.Tuning.QuietTime)) {
			m.raceReload()
		}
		return
	}
	if r.draining == "" {
		if r.delivered < r.atBlocks && now.Before(r.atTime) {
			return
		}
		reason := m.pendingReason()
		if reason == "" {
			m.drawSchedule(now)
			return
		}
		if r.dueSince.IsZero() {
			r.dueSince = now
		}
		m.st.ReloadPending = reason
		if m.live() && !m.quiet(now, true) && now.Sub(r.dueSince) < maxDeferFactor*m.n.cfg.Tuning.QuietTime {
			return
		}
		r.draining = reason
	}
	if m.drained() {
		m.reloadAll(r.draining)
	}
}

// drained reports whether no peer owes an answer to a filtered-block,
// full-block or matched-tx request: a filterload now applies to nothing
// asked before it.
func (m *manager) drained() bool {
	for ps := range m.peers {
		if len(ps.reqs) > 0 || ps.cur != nil || len(ps.fullReqs) > 0 {
			return false
		}
		for _, tr := range ps.txReqs {
			if tr.block != nil {
				return false
			}
		}
	}
	return true
}

// holding reports whether no new block or check may be asked: a reload
// waits for the peers to drain.
func (m *manager) holding() bool { return m.rl.draining != "" }

// maxCarried bounds the outpoints carried from one filter to the next
// (see carry): at BIP37's 36,000-byte cap a filter tells about 60,000
// elements apart at most.
const maxCarried = 50_000

// carry records the outpoints ps's server inserted for tx's outputs (the
// mirror, which replays the insertions, now matches them) and forgets the
// outpoints tx spends. A filter built from the watcher's elements alone
// would hold the wallet's unspent outputs and not the false positives'
// the server had inserted: every peer could tell which outputs it matched
// were the wallet's by testing them against the reloaded filter
// (TestCheckingPeerDoesNotSaturate measured all 169 of the wallet's and
// none of 123 false positives' in the last filter). Carrying them makes
// a reload hold both, as the server's own filter did; a spent one leaves,
// as a spent wallet coin does. A reload for a drifted filter drops them
// (the fill they cause is what it resets), and so still shows the split
// of the outputs matched since the previous drift reload; so does a
// reload whose filter has no room for all of them (currentFilter: they
// never move it to a larger capacity, which past BIP37's cap means fewer
// hash functions, more false positives and more to carry: a 10,000-address
// xpub sync reached 34,474 elements and k = 1 in the bench).
func (m *manager) carry(ps *peerState, tx *wire.MsgTx, txid chainhash.Hash) {
	r := &m.rl
	for _, in := range tx.TxIn {
		delete(r.carried, in.PreviousOutPoint)
	}
	for i := range tx.TxOut {
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		if len(r.carried) >= maxCarried || !ps.mirror.MatchesOutPoint(&op) {
			continue
		}
		if r.carried == nil {
			r.carried = make(map[wire.OutPoint]struct{})
		}
		r.carried[op] = struct{}{}
	}
}

// reloadAll loads the current filter into every peer, the same filter
// for all, and places the next reload point. The filter is built afresh
// with the outpoints carried since the last reload (none after a drifted
// filter: see carry).
func (m *manager) reloadAll(reason string) {
	if reason == transcript.ReasonFPDrift {
		m.rl.carried = nil
	}
	m.filter = nil
	f, err := m.currentFilter()
	if err != nil {
		m.fail(err)
		return
	}
	r := &m.rl
	r.sent, r.sentEls = f, m.filterEls
	r.pendingKeys, r.decoyBusy, r.draining = 0, false, ""
	m.st.ReloadPending = ""
	for ps := range m.peers {
		m.loadFilter(ps, reason, f)
		if m.liveFrom > 0 {
			// Its mempool is asked again with the new filter (now,
			// or when the node is synced again): transactions the
			// old one did not match, such as spends of outpoints it
			// lacked, are relayed.
			ps.mempoolSent = false
			if m.st.AtTip {
				m.sendMempool(ps)
			}
		}
	}
	m.drawSchedule(m.n.clock.Now())
}

// sentFilter returns the filter a new peer gets: the one the others got
// at the last reload (built from the current elements when there was
// none yet).
func (m *manager) sentFilter() (*bip37.Filter, error) {
	if m.rl.sent != nil {
		return m.rl.sent, nil
	}
	f, err := m.currentFilter()
	if err != nil {
		return nil, err
	}
	m.rl.sent, m.rl.sentEls = f, m.filterEls
	return f, nil
}

// gapRace records that the download peer's filter lacks an element the
// watcher needs from height from on: nothing from there is delivered
// until every peer got a filter with it and the blocks were fetched
// again. now reloads at once on the live chain too (a rollback's race).
func (m *manager) gapRace(from int32, now bool) {
	r := &m.rl
	if now {
		r.raceNow = true
	}
	if r.race >= 0 && r.race <= from {
		return
	}
	first := r.race < 0
	r.race = from
	if !first {
		return
	}
	t := m.n.clock.Now()
	r.raceSince = t
	q := int64(m.n.cfg.Tuning.QuietTime)
	r.raceAt = t.Add(time.Duration(q))
	if q > 0 {
		r.raceAt = r.raceAt.Add(time.Duration(m.n.rng.Int64N(q)))
	}
	m.st.ReloadPending = transcript.ReasonGapRace
	m.n.log.Info("download peer's filter lacks a needed element: reload and re-fetch",
		"from", from, "live", m.live())
}

// raceReload reloads every peer for a gap-limit race and fetches the
// blocks from the race's height again, from the start of its aligned
// window (the blocks before it as cover) when some were asked before.
func (m *manager) raceReload() {
	r := &m.rl
	// A reorg may have taken the watcher below the race's height: every
	// block from the next one on needs the new filter.
	from := min(r.race, m.next)
	r.race, r.raceNow = -1, false
	asked := m.reqHigh
	m.st.GapRaces++
	m.reloadAll(transcript.ReasonGapRace)
	if m.st.Err != nil {
		return
	}
	for height, s := range m.slots {
		if height >= from && s.block != nil {
			m.st.Rerequested++
		}
	}
	if from <= m.synced.Height {
		m.st.Rerequested++ // applied, to be applied again
	}
	m.dropFrom(from)
	m.next = min(m.next, from)
	m.reqHigh = m.next - 1
	if asked >= from {
		r.refetchTo = max(r.refetchTo, asked)
		if c := m.alignDown(from); c < from {
			r.coverFrom = c
		}
	}
}

// alignDown returns the start of the aligned re-fetch window that holds
// h, never below the first block the watcher needs.
func (m *manager) alignDown(h int32) int32 {
	w := int32(m.n.cfg.RefetchWindow)
	if w <= 1 {
		return h
	}
	return m.firstWanted(h - h%w)
}

// coverRequests returns the cover requests of an aligned re-fetch (the
// blocks from its aligned start up to next, fetched and discarded), once.
func (m *manager) coverRequests(ps *peerState) []*blockReq {
	r := &m.rl
	if r.coverFrom < 0 {
		return nil
	}
	from := r.coverFrom
	r.coverFrom = -1
	var out []*blockReq
	for h := from; h < m.next; h++ {
		hash, err := m.n.store.HashByHeight(h)
		if err != nil {
			return out
		}
		out = append(out, &blockReq{hash: hash, height: h, gen: ps.filterGen, refetch: true, cover: true})
		m.st.Rerequested++
	}
	return out
}
