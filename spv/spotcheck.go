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
//     filtered block, from a second peer;
//   - full block (Config.FullBlockEvery): the whole block is asked from
//     the same peer, which has already committed to its filtered answer.
//
// Either answer is replayed, in block order, through the primary's filter
// as it was when the primary filtered the block (a copy of the mirror
// taken then: a lower bound of the server's real filter, so an honest
// primary is never blamed for an insertion that came later or that the
// node never saw). A transaction that filter matches and the primary did
// not send is an omission: the primary is banned and the watcher rolled
// back to re-fetch the block from the others. A full block whose
// transaction count differs from the one the primary claimed is an
// omission too.

// A due second-peer check of a block no second peer has yet (a new block
// the download peer announced first) waits for one, in height order, up
// to checkWait; a check whose second peer goes away or answers notfound
// waits again, up to maxCheckAttempts sends. A block no check covers in
// the end is unchecked (Status.Unchecked, BlockUnchecked).
const (
	checkWait        = 30 * time.Second
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
	cross   bool // ask a second peer
	full    bool // ask the primary for the full block
	// noSecond marks a block whose second-peer check was due while no
	// peer could answer it or wait for it: it goes unchecked unless full
	// is set.
	noSecond bool
	// waitSince is when the cross check started waiting for a second
	// peer; attempts counts its sends.
	waitSince time.Time
	attempts  int
}

// spotCheck is one check in flight: a plan and the peer asked.
type spotCheck struct {
	plan *checkPlan
	full bool
}

// planCheck decides, when a block from ps completes, whether it will be
// checked, and keeps what the check needs. It must run before the block's
// transactions are replayed into ps's mirror.
func (m *manager) planCheck(ps *peerState, req *blockReq, total uint32) *checkPlan {
	crossDue := due(m.n.cfg.SpotCheckEvery)
	cross := crossDue && (m.secondPeer(ps, req.height) != nil || m.mayWait(ps, req.height))
	full := due(m.n.cfg.FullBlockEvery)
	if !cross && !full {
		if crossDue {
			return &checkPlan{height: req.height, hash: req.hash, noSecond: true}
		}
		return nil
	}
	return &checkPlan{height: req.height, hash: req.hash, primary: ps, snap: ps.mirror.Clone(),
		total: total, cross: cross, full: full}
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

// secondPeer returns the peer that answers cross-peer checks for blocks of
// ps: the ready peer with a filter other than ps, not lagging and with the
// chain up to height, the lowest address first (always the same one, so
// its filter follows every checked block, as the server's UPDATE_ALL
// insertions require to match spends).
func (m *manager) secondPeer(ps *peerState, height int32) *peerState {
	var other *peerState
	for p := range m.peers {
		if p == ps || p.mirror == nil || !p.lagSince.IsZero() || p.lastBlock < height {
			continue
		}
		if other == nil || p.addr < other.addr {
			other = p
		}
	}
	return other
}

// mayWait reports whether a check of a block at height may wait for a
// second peer: the block is near the header tip and a peer other than ps
// with a filter is connected (it will likely announce the block soon).
// A lagging peer counts: it claimed a chain longer than ours and has not
// given it yet, which is what a peer in the middle of a reorg looks like
// (the demo's follower btcd after a reorg gave 3 blocks unchecked at
// once); if it does not catch up the check ends unchecked after
// checkWait, as for any peer.
func (m *manager) mayWait(ps *peerState, height int32) bool {
	if _, tip := m.n.store.Tip(); height < tip-checkWaitDepth {
		return false
	}
	for p := range m.peers {
		if p != ps && p.mirror != nil {
			return true
		}
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
		m.unchecked(p, "no second peer has the block")
		sent = CheckNoSecondPeer
	}
	return sent
}

// runWaitingChecks sends the waiting cross checks a second peer can
// answer now, in height order, and gives up on those that waited
// checkWait or can no longer wait.
func (m *manager) runWaitingChecks() {
	if len(m.waiting) == 0 {
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
			if other := m.secondPeer(p.primary, p.height); other != nil {
				p.attempts++
				m.st.SpotChecks++
				m.sendBatch(other, []*blockReq{{hash: p.hash, height: p.height, gen: other.filterGen, check: &spotCheck{plan: p}}})
				m.uncheckedRun = false
				continue
			}
		}
		if now.Sub(p.waitSince) < checkWait && m.mayWait(p.primary, p.height) {
			blocked = true // later blocks wait behind it
			keep = append(keep, p)
			continue
		}
		p.cross = false
		if !p.full {
			m.unchecked(p, "no second peer got the block in time")
		}
	}
	clear(m.waiting[len(keep):])
	m.waiting = keep
}

// requeueCheck puts the cross check of an abandoned request (its second
// peer went away, or said it lacks the block) back in line, up to
// maxCheckAttempts sends.
func (m *manager) requeueCheck(r *blockReq) {
	if r == nil || r.check == nil || r.check.full {
		return
	}
	p := r.check.plan
	if p.attempts >= maxCheckAttempts || slices.Contains(m.waiting, p) {
		if !p.full && p.attempts >= maxCheckAttempts {
			m.unchecked(p, fmt.Sprintf("%d second peers did not answer", p.attempts))
		}
		return
	}
	p.waitSince = m.n.clock.Now()
	i, _ := slices.BinarySearchFunc(m.waiting, p.height, func(q *checkPlan, h int32) int { return int(q.height - h) })
	m.waiting = slices.Insert(m.waiting, i, p)
}

// unchecked counts a block no omission check covers, publishes it and
// logs the first of a run.
func (m *manager) unchecked(p *checkPlan, why string) {
	m.st.Unchecked++
	m.n.publish(BlockUnchecked{At: m.n.at(), Height: p.height, Hash: p.hash, Reason: why})
	if !m.uncheckedRun {
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

// checksSent counts the omission checks sent and not answered yet. They
// hold "synced" back; waiting ones do not (a second peer that never gets
// the block would hold it for checkWait).
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
		m.misbehave(ps, MisbehaviorUnrequestedBlock, "full block "+hash.String())
		return
	}
	delete(ps.fullReqs, hash)
	ps.lastAnswer = m.n.clock.Now()
	if err := checkFullBlock(b); err != nil {
		m.misbehave(ps, MisbehaviorInvalidMerkleTree, fmt.Sprintf("full block %v: %v", hash, err))
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
	m.finishCheck(p, b.Transactions, idx)
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

// finishCheck replays the other answer (txs at their block indexes) with
// what the primary sent, in block order, through the primary's filter as
// it was before the block, and reports the transactions that filter
// matches and the primary did not send.
func (m *manager) finishCheck(p *checkPlan, txs []*wire.MsgTx, indexes []uint32) {
	if !m.n.store.IsBest(p.hash) {
		return
	}
	type item struct {
		idx  uint32
		tx   *wire.MsgTx
		sent bool
	}
	byIdx := make(map[uint32]item, len(txs)+len(p.sent))
	for i, tx := range txs {
		byIdx[indexes[i]] = item{idx: indexes[i], tx: tx}
	}
	for i, tx := range p.sent {
		byIdx[p.indexes[i]] = item{idx: p.indexes[i], tx: tx, sent: true}
	}
	order := make([]uint32, 0, len(byIdx))
	for k := range byIdx {
		order = append(order, k)
	}
	slices.Sort(order)
	f := p.snap.Clone()
	var omitted []chainhash.Hash
	for _, k := range order {
		it := byIdx[k]
		if f.MatchTxAndUpdate(it.tx) && !it.sent {
			omitted = append(omitted, it.tx.TxHash())
		}
	}
	if len(omitted) > 0 {
		m.omission(p, fmt.Sprintf("%d matched txs of block %d %v, first %v", len(omitted), p.height, p.hash, omitted[0]))
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
		m.misbehave(ps, MisbehaviorOmittedTx, detail)
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
	m.isSynced = false
	m.elementsChanged(-1, d) // coins the removed blocks spent are watched again
}
