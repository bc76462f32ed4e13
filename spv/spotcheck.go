package spv

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Omission checks. A peer can hide a matched transaction behind a valid
// proof by clearing its match flag, or hide every match of a block by
// understating its transaction count (the merkle root does not commit to
// it). Two checks catch it, each on a share of the delivered blocks drawn
// at random (a fixed period would tell the peer which blocks it can
// tamper with unseen):
//
//   - cross-peer (Config.SpotCheckEvery): the block is asked again, as a
//     filtered block, from Tuning.CheckPeers other peers (checkers.go:
//     drawn afresh for every block with a cryptographic generator, peers
//     in other network groups than the download peer's first);
//   - full block (Config.FullBlockEvery): the whole block is asked from
//     the same peer, which has already committed to its filtered answer.
//
// Every answer is proven to be in the block (each transaction is a match
// of a verified partial merkle tree, or of a full block whose merkle root
// was checked); the node keeps the union of all of them. Each peer that
// answered, the primary and every second peer, is judged by replaying that
// union, in block order, through its own filter as it was when it
// filtered the block (a copy of its mirror taken then: a lower bound of
// the server's real filter, so an honest peer is never blamed for an
// insertion that came later or that the node never saw). A transaction
// that filter matches and the peer did not send is an omission: the peer
// is banned; when it is the primary, the watcher is rolled back to
// re-fetch the block from the others. A full block whose transaction count
// differs from the one the primary claimed is an omission too. A second
// peer that lies along with the primary is thus caught by any honest one
// asked about the same block.

// A due second-peer check of a block no second peer has yet (a new block
// the download peer announced first) waits for one, in height order, up
// to Tuning.CheckWait; a check whose second peers all go away or answer notfound
// before any answered waits again, up to maxCheckAttempts rounds of sends.
// A block no check covers in the end is unchecked (Status.Unchecked,
// BlockUnchecked).
const (
	maxCheckAttempts = 3
	// checkWaitDepth: only blocks this close to the header tip wait for
	// a second peer to get them; older ones it lacks it will not get.
	checkWaitDepth = 6
)

// checkPlan is a check decided when a block completed: the primary's
// filter before the block and what the primary sent.
type checkPlan struct {
	height  int32
	hash    chainhash.Hash
	primary *peerState
	// snap is the primary's mirror as it was before the block's
	// transactions were replayed into it.
	snap *bip37.Filter
	// sent are the primary's delivered transactions with their indexes.
	sent    []*wire.MsgTx
	indexes []uint32
	total   uint32
	cross   bool // ask second peers
	full    bool // ask the primary for the full block
	// noSecond marks a block whose second-peer check was due while no
	// peer could answer it or wait for it: it goes unchecked unless full
	// is set.
	noSecond bool
	// resumed marks the check of an earlier run's unfinished check
	// (pendingchecks.go).
	resumed bool
	// waitSince is when the cross check started waiting for a second
	// peer; attempts counts its rounds of sends.
	waitSince time.Time
	attempts  int
	// asked are the second peers asked; outstanding counts their
	// requests not answered yet, answered those answered.
	asked       map[*peerState]bool
	outstanding int
	answered    int
	// refused are the second peers that said notfound for the block:
	// the check does not wait for them (mayWait).
	refused map[*peerState]bool
	// txs is every transaction an answer proved to be in the block, by
	// index; answers are the peers judged against it, the primary's
	// first (both built at the first answer).
	txs     map[uint32]*wire.MsgTx
	answers []*checkAnswer
}

// checkAnswer is one peer's answer about a checked block: its filter
// before the block and the indexes of the transactions it sent.
type checkAnswer struct {
	peer   *peerState
	snap   *bip37.Filter
	sent   map[uint32]bool
	caught bool // already found omitting
}

// spotCheck is one check in flight: a plan and the peer asked.
type spotCheck struct {
	plan *checkPlan
	full bool
	// settled: answered, or given up on (requeueCheck); it counts once.
	settled bool
}

// planCheck decides, when a block from ps completes, whether it will be
// checked, and keeps what the check needs. It must run before the block's
// transactions are replayed into ps's mirror.
//
// The block of an earlier run's unfinished check is always checked
// against a second peer.
func (m *manager) planCheck(ps *peerState, req *blockReq, total uint32) *checkPlan {
	crossDue := due(m.n.cfg.SpotCheckEvery)
	resumed := false
	if h, ok := m.recheck[req.height]; ok {
		// Another block there now is checked as any other.
		delete(m.recheck, req.height)
		resumed = h == req.hash
		crossDue = crossDue || resumed
	}
	cross := crossDue && (len(m.checkCandidates(ps, req.height, nil)) > 0 || m.mayWait(&checkPlan{height: req.height, primary: ps}))
	full := due(m.n.cfg.FullBlockEvery)
	if !cross && !full {
		if crossDue {
			return &checkPlan{height: req.height, hash: req.hash, noSecond: true, resumed: resumed}
		}
		return nil
	}
	return &checkPlan{height: req.height, hash: req.hash, primary: ps, snap: ps.mirror.Clone(),
		total: total, cross: cross, full: full, resumed: resumed}
}

// due draws whether a check with period every (1/every of the blocks;
// negative: never) is due.
func due(every int) bool {
	switch {
	case every < 0 || every == 0:
		return false
	case every == 1:
		return true
	}
	return rand.IntN(every) == 0
}

// mayWait reports whether a check of a block at height may wait for a
// second peer: the block is near the header tip and a peer other than ps
// with a filter is connected (it will likely announce the block soon).
// A lagging peer counts: it claimed a chain longer than ours and has not
// given it yet, which is what a peer in the middle of a reorg looks like
// (the demo's follower btcd after a reorg gave 3 blocks unchecked at
// once); if it does not catch up the check ends unchecked after
// checkWait, as for any peer.
//
// A peer whose chain, as far as the node knows, ends more than
// checkWaitDepth blocks below the block (its side branch forks lower, or
// it said notfound for lower blocks) is not waited for, nor one that said
// notfound for this very block (pl.refused): neither is about to get it.
func (m *manager) mayWait(pl *checkPlan) bool {
	if _, tip := m.n.store.Tip(); pl.height < tip-checkWaitDepth {
		return false
	}
	for p := range m.peers {
		if p == pl.primary || p.mirror == nil || pl.asked[p] || pl.refused[p] {
			continue
		}
		if p.lagSince.IsZero() && p.lastBlock < pl.height-checkWaitDepth {
			continue
		}
		return true
	}
	return false
}

// startCheck sends a delivered block's planned checks. It runs at
// delivery, in height order, so the second peer filters the checked
// blocks in chain order; a cross check no second peer can answer yet
// queues behind those already waiting.
//
// It returns the checks sent or queued.
func (m *manager) startCheck(p *checkPlan, fb *watch.FilteredBlock) (sent BlockChecks) {
	if p == nil {
		return 0
	}
	p.sent, p.indexes = fb.Txs, fb.TxIndexes
	if p.full && p.primary.ready {
		m.st.FullBlockChecks++
		m.sendFullBlockReq(p.primary, &spotCheck{plan: p, full: true})
		sent |= CheckFullBlock
	} else {
		p.full = false
	}
	if p.cross {
		p.waitSince = m.n.clock.Now()
		m.waiting = append(m.waiting, p)
		m.runWaitingChecks()
		if p.attempts > 0 {
			sent |= CheckSecondPeer
		} else if slices.Contains(m.waiting, p) {
			sent |= CheckWaiting
		}
	}
	if p.noSecond && !p.full {
		m.unchecked(p, "no second peer has the block", p.resumed)
		sent = CheckNoSecondPeer
	}
	return sent
}

// runWaitingChecks sends the waiting cross checks to the second peers
// that can answer now, in height order, and gives up on those that waited
// Tuning.CheckWait or can no longer wait. A check asked of fewer than
// Tuning.CheckPeers peers keeps waiting, near the tip, for more to get
// the block (a colluder that has a new block first must not be the only
// one asked); it counts as checked once one answers.
func (m *manager) runWaitingChecks() {
	if len(m.waiting) == 0 || m.holding() {
		return
	}
	now := m.n.clock.Now()
	keep := m.waiting[:0]
	blocked := false
	for _, p := range m.waiting {
		if !m.n.store.IsBest(p.hash) {
			continue // reorged away: nothing left to check
		}
		if !blocked {
			if checkers := m.pickCheckers(p); len(checkers) > 0 {
				if len(p.asked) == 0 {
					p.attempts++
					m.st.SpotChecks++
				}
				for _, other := range checkers {
					m.sendCheck(p, other)
				}
				m.uncheckedRun = false
			}
			if len(p.asked) >= m.n.cfg.Tuning.CheckPeers {
				continue
			}
		}
		if now.Sub(p.waitSince) < m.n.cfg.Tuning.CheckWait && m.mayWait(p) {
			blocked = true // later blocks wait behind it
			keep = append(keep, p)
			continue
		}
		if p.answered > 0 || p.outstanding > 0 {
			continue // asked of fewer peers than wanted: no more came
		}
		p.cross = false
		if !p.full {
			m.unchecked(p, fmt.Sprintf("no second peer got the block within %v", m.n.cfg.Tuning.CheckWait), true)
		}
	}
	clear(m.waiting[len(keep):])
	m.waiting = keep
}

// requeueCheck puts the cross check of an abandoned request (its second
// peer went away, or said it lacks the block) back in line, up to
// maxCheckAttempts rounds, unless another second peer answered or may
// still answer.
func (m *manager) requeueCheck(r *blockReq) {
	if r == nil || r.check == nil || r.check.full {
		return
	}
	if r.check.settled {
		return
	}
	r.check.settled = true
	p := r.check.plan
	p.outstanding--
	if p.answered > 0 || p.outstanding > 0 || slices.Contains(m.waiting, p) {
		return
	}
	clear(p.asked) // a new round may ask them again
	if p.attempts >= maxCheckAttempts || slices.Contains(m.waiting, p) {
		if !p.full && p.attempts >= maxCheckAttempts {
			m.unchecked(p, fmt.Sprintf("%d second peers did not answer", p.attempts), true)
		}
		return
	}
	p.waitSince = m.n.clock.Now()
	i, _ := slices.BinarySearchFunc(m.waiting, p.height, func(q *checkPlan, h int32) int { return int(q.height - h) })
	m.waiting = slices.Insert(m.waiting, i, p)
}

// unchecked counts a block no omission check covers, publishes it and
// logs the first of a run; a check begun and abandoned (abandoned: see
// BlockUnchecked) is always logged.
func (m *manager) unchecked(p *checkPlan, why string, abandoned bool) {
	m.st.Unchecked++
	m.n.publish(BlockUnchecked{At: m.n.at(), Height: p.height, Hash: p.hash, Reason: why, Abandoned: abandoned})
	if abandoned {
		m.st.ChecksAbandoned++
		m.n.log.Warn("omission check abandoned: the block stays as its download peer delivered it",
			"height", p.height, "hash", p.hash, "why", why, "peers", len(m.peers))
	} else if !m.uncheckedRun {
		m.uncheckedRun = true
		m.n.log.Warn("omission check not possible: a single peer can hide the wallet's transactions in this block",
			"height", p.height, "why", why, "peers", len(m.peers))
	}
}

// sendFullBlockReq asks ps for a whole block, closed by a ping.
func (m *manager) sendFullBlockReq(ps *peerState, c *spotCheck) {
	if !ps.owesData() {
		ps.lastAnswer = m.n.clock.Now()
	}
	ps.batch++
	if ps.fullReqs == nil {
		ps.fullReqs = make(map[chainhash.Hash]*fullReq)
	}
	ps.fullReqs[c.plan.hash] = &fullReq{check: c, batch: ps.batch}
	gd := wire.NewMsgGetData()
	_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &c.plan.hash))
	ps.send(gd)
	m.sendPing(ps)
}

// checksInFlight counts the omission checks sent and not answered yet,
// and those waiting for a second peer.
func (m *manager) checksInFlight() int {
	return m.checksSent() + len(m.waiting)
}

// checksSent counts the omission checks sent and not answered yet.
func (m *manager) checksSent() int {
	n := 0
	for ps := range m.peers {
		n += len(ps.fullReqs)
		for _, r := range ps.reqs {
			if r.check != nil && !r.stale {
				n++
			}
		}
		if ps.cur != nil && ps.cur.req.check != nil {
			n++
		}
	}
	return n
}

// fullReq is an outstanding full-block request.
type fullReq struct {
	check *spotCheck
	batch uint64
}

// onBlock takes a full block: the answer to a full-block check, or a
// violation.
func (m *manager) onBlock(ps *peerState, b *wire.MsgBlock) {
	hash := b.BlockHash()
	r, ok := ps.fullReqs[hash]
	if !ok {
		m.misbehave(ps, misbehaviorUnrequestedBlock, "full block "+hash.String())
		return
	}
	delete(ps.fullReqs, hash)
	ps.lastAnswer = m.n.clock.Now()
	if err := checkFullBlock(b); err != nil {
		m.misbehave(ps, misbehaviorInvalidMerkleTree, fmt.Sprintf("full block %v: %v", hash, err))
		return
	}
	p := r.check.plan
	if uint32(len(b.Transactions)) != p.total {
		m.omission(p, fmt.Sprintf("block %d %v has %d txs, the merkleblock claimed %d", p.height, p.hash, len(b.Transactions), p.total))
		return
	}
	idx := make([]uint32, len(b.Transactions))
	for i := range idx {
		idx[i] = uint32(i)
	}
	m.finishCheck(p, nil, nil, b.Transactions, idx)
}

// checkFullBlock verifies a full block against its own header: the merkle
// root of its transactions, with no duplicated transaction (CVE-2012-2459:
// a block with a duplicated tail has the same root).
func checkFullBlock(b *wire.MsgBlock) error {
	if len(b.Transactions) == 0 {
		return fmt.Errorf("no transactions")
	}
	txs := make([]*btcutil.Tx, len(b.Transactions))
	seen := make(map[chainhash.Hash]struct{}, len(txs))
	for i, tx := range b.Transactions {
		txs[i] = btcutil.NewTx(tx)
		id := *txs[i].Hash()
		if _, dup := seen[id]; dup {
			return fmt.Errorf("duplicate transaction %v", id)
		}
		seen[id] = struct{}{}
	}
	if root := blockchain.CalcMerkleRoot(txs, false); root != b.Header.MerkleRoot {
		return fmt.Errorf("merkle root %v, header says %v", root, b.Header.MerkleRoot)
	}
	return nil
}

// finishCheck takes an answer about a checked block: txs at their block
// indexes, sent by peer by with its filter snap as it was before the block
// (by nil: the primary's full block, whose sender is already judged). The
// transactions join those every answer proved to be in the block, and
// every peer that answered is judged again against all of them: a
// transaction its filter matches that it did not send is an omission.
func (m *manager) finishCheck(p *checkPlan, by *peerState, snap *bip37.Filter, txs []*wire.MsgTx, indexes []uint32) {
	if !m.n.store.IsBest(p.hash) {
		return
	}
	if p.txs == nil {
		p.txs = make(map[uint32]*wire.MsgTx, len(p.sent)+len(txs))
		primary := &checkAnswer{peer: p.primary, snap: p.snap, sent: make(map[uint32]bool, len(p.sent))}
		for i, tx := range p.sent {
			p.txs[p.indexes[i]] = tx
			primary.sent[p.indexes[i]] = true
		}
		p.answers = append(p.answers, primary)
	}
	var a *checkAnswer
	if by != nil {
		a = &checkAnswer{peer: by, snap: snap, sent: make(map[uint32]bool, len(txs))}
		p.answers = append(p.answers, a)
	}
	for i, tx := range txs {
		if _, ok := p.txs[indexes[i]]; !ok {
			p.txs[indexes[i]] = tx
		}
		if a != nil {
			a.sent[indexes[i]] = true
		}
	}
	order := make([]uint32, 0, len(p.txs))
	for k := range p.txs {
		order = append(order, k)
	}
	slices.Sort(order)
	for _, a := range p.answers {
		if a.caught || a.snap == nil {
			continue
		}
		f := a.snap.Clone()
		var omitted []chainhash.Hash
		for _, k := range order {
			if f.MatchTxAndUpdate(p.txs[k]) && !a.sent[k] {
				omitted = append(omitted, p.txs[k].TxHash())
			}
		}
		if len(omitted) == 0 {
			continue
		}
		a.caught = true
		detail := fmt.Sprintf("%d matched txs of block %d %v, first %v", len(omitted), p.height, p.hash, omitted[0])
		if a.peer == p.primary {
			m.omission(p, detail)
		} else {
			m.checkerOmission(a.peer, p, detail)
		}
	}
}

// checkerOmission bans a second peer whose answer about a checked block
// left out a transaction its own filter matched (another answer proved
// the transaction is in the block). The watcher is not touched: the
// second peer delivered nothing to it.
func (m *manager) checkerOmission(ps *peerState, p *checkPlan, detail string) {
	m.st.Omissions++
	m.n.log.Warn("omission detected in a check answer", "peer", ps.addr, "block", p.hash, "height", p.height, "detail", detail)
	if ps.ready {
		m.misbehave(ps, misbehaviorOmittedTx, detail)
		if ps.ready {
			m.dropPeer(ps, "omitted matched txs")
			ps.p.Disconnect()
		}
	}
}

// omission bans the primary of a check and re-fetches the block from the
// others, rolling the watcher back when it applied the block.
func (m *manager) omission(p *checkPlan, detail string) {
	m.st.Omissions++
	// Blocks from p on are fetched again, and checked again then.
	m.waiting = slices.DeleteFunc(m.waiting, func(q *checkPlan) bool { return q.height >= p.height })
	ps := p.primary
	m.n.log.Warn("omission detected", "peer", ps.addr, "block", p.hash, "height", p.height, "detail", detail)
	if ps.ready {
		m.misbehave(ps, misbehaviorOmittedTx, detail)
		if ps.ready { // not banned (score below threshold): still drop it
			m.dropPeer(ps, "omitted matched txs")
			ps.p.Disconnect()
		}
	}
	if p.height > m.synced.Height {
		m.dropFrom(p.height)
		m.next = min(m.next, p.height)
		m.reqHigh = m.next - 1
		return
	}
	back := p.height - 1
	d, err := m.w.Rollback(back)
	if err != nil {
		m.fail(fmt.Errorf("%w: rollback to %d: %w", ErrWatcher, back, err))
		return
	}
	hash, _ := m.n.store.HashByHeight(back)
	m.synced = watch.SyncPoint{Height: back, Hash: hash}
	m.st.Rerequested += int(m.next - p.height)
	m.dropFrom(p.height)
	m.next = p.height
	m.reqHigh = m.next - 1
	m.st.Synced, m.st.AtTip = false, false
	m.elementsChanged(-1, d, deltaRollback) // coins the removed blocks spent are watched again
}
