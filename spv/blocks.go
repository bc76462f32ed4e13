package spv

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// timeZero is the zero time (no request outstanding).
var timeZero time.Time

// maxMatchAttempts is how often one block is requested before the peers
// that failed it are scored.
const maxMatchAttempts = 3

// onMerkleBlock matches a merkleblock to the oldest outstanding request
// for its hash, verifies its partial merkle tree against the header and
// starts collecting the transactions that follow it.
func (m *manager) onMerkleBlock(ps *peerState, mb *wire.MsgMerkleBlock) {
	m.endStream(ps)
	hash := mb.Header.BlockHash()
	i := -1
	for j, r := range ps.reqs {
		if r.hash == hash {
			i = j
			break
		}
	}
	if i < 0 {
		m.misbehave(ps, misbehaviorUnrequestedBlock, "merkleblock "+hash.String())
		return
	}
	req := ps.reqs[i]
	ps.reqs = append(ps.reqs[:i], ps.reqs[i+1:]...)
	ps.lastAnswer = m.n.clock.Now()
	matches, indexes, err := bip37.VerifyMerkleBlock(mb)
	if err != nil {
		m.abandon(req)
		m.misbehave(ps, misbehaviorInvalidMerkleTree, fmt.Sprintf("block %v: %v", hash, err))
		return
	}
	if len(matches) > 0 {
		m.n.publish(BlockMatches{At: m.n.at(), Peer: ps.addr, Height: req.height, Hash: hash, Matched: matches})
	}
	pb := &pendingBlock{
		req: req, ps: ps, header: mb.Header, matches: matches, indexes: indexes,
		total: mb.Transactions, txs: make(map[chainhash.Hash]*wire.MsgTx, len(matches)),
	}
	if len(matches) == 0 {
		ps.after = pb
		m.completeBlock(pb)
		return
	}
	ps.cur = pb
}

// endStream closes the transaction stream of the peer's current merkle
// block: the next merkleblock, a pong or a notfound came.
func (m *manager) endStream(ps *peerState) {
	ps.after = nil
	if pb := ps.cur; pb != nil {
		ps.cur = nil
		m.completeBlock(pb)
	}
}

// onTx files a transaction: a match of the current merkle block, a tx we
// asked for, or a violation.
func (m *manager) onTx(ps *peerState, tx *wire.MsgTx) {
	txid := tx.TxHash()
	if pb := ps.cur; pb != nil && pb.want(txid) {
		ps.lastAnswer = m.n.clock.Now()
		pb.txs[txid] = tx
		if len(pb.txs) == len(pb.matches) {
			ps.cur, ps.after = nil, pb
			m.completeBlock(pb)
		}
		return
	}
	if tr, ok := ps.txReqs[txid]; ok {
		ps.lastAnswer = m.n.clock.Now()
		delete(ps.txReqs, txid)
		if tr.block == nil {
			m.onMempoolTx(ps, tx)
			return
		}
		pb := tr.block
		if pb.want(txid) {
			pb.txs[txid] = tx
			if len(pb.txs) == len(pb.matches) {
				m.completeBlock(pb)
			}
		}
		return
	}
	if last := cmp.Or(ps.cur, ps.after); last != nil {
		m.misbehave(ps, misbehaviorTxNotInBlock, fmt.Sprintf("tx %v after merkleblock %v", txid, last.req.hash))
		return
	}
	m.misbehave(ps, misbehaviorUnrequestedTx, "tx "+txid.String())
}

// completeBlock finishes a merkle block whose stream ended. Missing
// matched txs are asked for once with MSG_TX; a block still incomplete
// then is fetched again. A complete block is re-tested against the local
// mirror of the peer's filter (the proof does not protect the match flags)
// and queued for delivery.
func (m *manager) completeBlock(pb *pendingBlock) {
	req, ps := pb.req, pb.ps
	if miss := pb.missing(); len(miss) > 0 {
		// The server matched them under this filter, and its insertions
		// for them are not in the mirror until they come.
		if req.gen == ps.filterGen {
			ps.noteUnknown(miss...)
		}
		if (req.stale || req.cover) && req.check == nil {
			return
		}
		if pb.asked || !ps.ready {
			m.retryBlock(pb, fmt.Sprintf("%d matched txs of %v not sent", len(miss), req.hash))
			return
		}
		pb.asked = true
		gd := wire.NewMsgGetDataSizeHint(uint(len(miss)))
		for i := range miss {
			_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &miss[i]))
			ps.txReqs[miss[i]] = &txReq{block: pb}
		}
		ps.send(gd)
		m.sendPing(ps)
		return
	}
	if req.stale && req.gen != ps.filterGen {
		m.requeueCheck(req) // a check answered with an old filter: ask again
		return              // filtered with a filter the peer no longer holds
	}
	var plan *checkPlan
	if req.check == nil && !req.stale && !req.cover {
		plan = m.planCheck(ps, req, pb.total)
	}
	// Replay the server's UPDATE_ALL insertions in block order and drop
	// what does not match: a peer cannot inflate our false positives.
	var snap *bip37.Filter // a second peer's filter before the block
	if req.check != nil {
		snap = ps.mirror.Clone()
	}
	fb := &watch.FilteredBlock{Height: req.height, Hash: req.hash, Header: pb.header, TotalTxs: pb.total}
	why := make(map[chainhash.Hash]txWhy, len(pb.matches))
	for i, txid := range pb.matches {
		tx := pb.txs[txid]
		if tx.SerializeSizeStripped() == 64 {
			m.abandon(req)
			m.misbehave(ps, misbehaviorSixtyFourByteTx, txid.String())
			return
		}
		if err := checkTx(tx); err != nil {
			m.abandon(req)
			m.misbehave(ps, misbehaviorInvalidTx, fmt.Sprintf("tx %v in block %v: %v", txid, req.hash, err))
			return
		}
		match, matched := ps.mirror.Explain(tx)
		if matched {
			why[txid] = txWhy{peer: ps.addr, seq: ps.filterSeq, match: match, fpRate: ps.mirror.CurrentFPRate()}
		}
		if !ps.mirror.MatchTxAndUpdate(tx) {
			m.unmatched(ps, tx, fmt.Sprintf("tx %v in block %v", txid, req.hash))
			continue
		}
		ps.replayed(txid)
		m.carry(ps, tx, txid)
		fb.Txs = append(fb.Txs, tx)
		fb.TxIndexes = append(fb.TxIndexes, pb.indexes[i])
	}
	if !ps.ready {
		m.abandon(req) // banned while we re-tested: ask someone else
		return
	}
	if c := req.check; c != nil {
		if !c.settled {
			c.settled = true
			c.plan.outstanding--
			c.plan.answered++
			m.finishCheck(c.plan, ps, snap, fb.Txs, fb.TxIndexes)
		}
		return
	}
	if req.stale || req.cover {
		return // a cover block: replayed into the mirror, not delivered
	}
	s := m.slots[req.height]
	if s == nil || s.req != req {
		return
	}
	s.req, s.block, s.why, s.plan = nil, fb, why, plan
	m.deliver()
}

// unmatched handles a transaction a peer sent that its mirror does not
// match: it is dropped, and the peer is scored unless mirror drift
// explains it (drift.go).
func (m *manager) unmatched(ps *peerState, tx *wire.MsgTx, detail string) {
	m.st.Dropped++
	if ps.driftExplains(tx) {
		m.st.DriftDropped++
		m.n.log.Debug("unmatched tx explained by filter drift", "peer", ps.addr, "tx", detail)
		return
	}
	m.misbehave(ps, misbehaviorUnmatchedTx, detail)
}

// retryBlock gives up on one answer for a block and asks again; a block
// that keeps failing scores the peer.
func (m *manager) retryBlock(pb *pendingBlock, why string) {
	req, ps := pb.req, pb.ps
	for id, tr := range ps.txReqs {
		if tr.block == pb {
			delete(ps.txReqs, id)
		}
	}
	if req.check != nil {
		m.requeueCheck(req) // a second peer that did not send its matches
		return
	}
	if req.stale {
		return
	}
	s := m.slots[req.height]
	if s != nil && s.attempts >= maxMatchAttempts && ps.ready {
		m.misbehave(ps, misbehaviorNotServed, why)
	}
	m.abandon(req)
	if s == nil || s.req != nil {
		return
	}
	// Ask another peer when there is one: the same peer would most
	// likely leave the same transactions out again.
	for other := range m.peers {
		if other == ps || other.mirror == nil || other.lastBlock < req.height {
			continue
		}
		if !m.outpointsHeld(other.mirror) {
			// Or it misses spends.
			f, err := m.currentFilter()
			if err != nil {
				m.fail(err)
				return
			}
			m.loadFilter(other, transcript.ReasonOutPoints, f)
		}
		r := &blockReq{hash: s.hash, height: req.height, gen: other.filterGen, refetch: true}
		s.req = r
		s.attempts++
		m.st.Rerequested++
		m.sendBatch(other, []*blockReq{r})
		return
	}
}

// onNotFound handles blocks or txs the peer says it does not have.
func (m *manager) onNotFound(ps *peerState, msg *wire.MsgNotFound) {
	m.endStream(ps)
	for _, iv := range msg.InvList {
		switch iv.Type {
		case wire.InvTypeFilteredBlock, wire.InvTypeFilteredWitnessBlock:
			for j, r := range ps.reqs {
				if r.hash != iv.Hash {
					continue
				}
				ps.lastAnswer = m.n.clock.Now()
				ps.reqs = append(ps.reqs[:j], ps.reqs[j+1:]...)
				wanted := !r.stale && r.check == nil
				liveCheck := r.check != nil
				m.abandon(r)
				if liveCheck {
					// A second peer lacks a block it was asked to check:
					// ask again when one has it.
					ps.lastBlock = min(ps.lastBlock, r.height-1)
					if pl := r.check.plan; !r.check.full {
						if pl.refused == nil {
							pl.refused = make(map[*peerState]bool)
						}
						pl.refused[ps] = true
					}
					m.requeueCheck(r)
				}
				if wanted {
					// The peer lacks it (behind, on another branch, or
					// lying about its height): ask it nothing at or
					// above it again. Not a violation: it said so.
					ps.lastBlock = min(ps.lastBlock, r.height-1)
				}
				break
			}
		case wire.InvTypeBlock, wire.InvTypeWitnessBlock:
			if _, ok := ps.fullReqs[iv.Hash]; ok {
				ps.lastAnswer = m.n.clock.Now()
				delete(ps.fullReqs, iv.Hash)
				// Inconclusive: a peer that serves filtered blocks
				// but not the block itself is scored as not serving.
				m.misbehave(ps, misbehaviorNotServed, "full block "+iv.Hash.String()+" not found")
			}
		case wire.InvTypeTx, wire.InvTypeWitnessTx:
			tr, ok := ps.txReqs[iv.Hash]
			if !ok {
				continue
			}
			ps.lastAnswer = m.n.clock.Now()
			delete(ps.txReqs, iv.Hash)
			if tr.block != nil {
				m.retryBlock(tr.block, fmt.Sprintf("matched tx %v not found", iv.Hash))
			}
		}
	}
}

// onPong closes a batch: every filtered block of it (and before it) that
// got neither a merkleblock nor a notfound was not served.
func (m *manager) onPong(ps *peerState, msg *wire.MsgPong) {
	if m.onFencePong(ps, msg.Nonce) {
		return
	}
	batch, ok := ps.pings[msg.Nonce]
	if !ok {
		return // the btcd peer's own keep-alive ping
	}
	delete(ps.pings, msg.Nonce)
	ps.lastAnswer = m.n.clock.Now()
	m.endStream(ps)
	keep := ps.reqs[:0]
	var unserved int
	for _, r := range ps.reqs {
		if r.batch > batch {
			keep = append(keep, r)
			continue
		}
		m.abandon(r)
		if r.check != nil {
			m.requeueCheck(r) // unanswered check: ask again
		}
		if r.height > ps.lastBlock {
			// Above the chain the peer showed: like a notfound (Core
			// stays silent for blocks it does not serve), no score.
			continue
		}
		unserved++
	}
	clear(ps.reqs[len(keep):])
	ps.reqs = keep
	if unserved > 0 {
		m.misbehave(ps, misbehaviorNotServed, fmt.Sprintf("%d filtered blocks of batch %d", unserved, batch))
	}
	for h, r := range ps.fullReqs {
		if r.batch <= batch {
			delete(ps.fullReqs, h)
			m.misbehave(ps, misbehaviorNotServed, "full block "+h.String()+" not sent")
		}
	}
	// Matched txs asked for with MSG_TX and not sent before the pong.
	for id, tr := range ps.txReqs {
		if tr.block != nil && tr.block.asked {
			delete(ps.txReqs, id)
			m.retryBlock(tr.block, fmt.Sprintf("matched tx %v not sent", id))
		}
	}
}

// deliver applies the ready blocks to the watcher in height order.
func (m *manager) deliver() {
	for m.st.Err == nil {
		if m.rl.race >= 0 {
			return // the filter may have missed payments: re-fetch first
		}
		s := m.slots[m.next]
		if s == nil || s.block == nil {
			return
		}
		fb := s.block
		if m.synced.Height >= m.birthday && m.synced.Height == fb.Height-1 && fb.Header.PrevBlock != m.synced.Hash {
			// The window was filled from another branch than the
			// watcher's: the reorg handling will sort it out.
			m.dropFrom(m.next)
			m.reconcile()
			return
		}
		res, err := m.w.ApplyBlock(fb)
		if err != nil {
			m.fail(fmt.Errorf("%w: apply block %d %v: %w", ErrWatcher, fb.Height, fb.Hash, err))
			return
		}
		delete(m.slots, m.next)
		m.synced = watch.SyncPoint{Height: fb.Height, Hash: fb.Hash}
		m.next++
		m.rl.delivered++
		m.report(fb, res, s.why, m.startCheck(s.plan, fb), s.cf)
		m.topUpDecoys(fb, res) // first: a reload for new keys carries them
		m.elementsChanged(fb.Height, res.Delta, deltaBlock)
		m.catchUpDrift()
	}
}

// topUpDecoys chooses new decoys (Config.Decoys) from the watcher's
// transactions of a delivered block and persists them. No peer is
// reloaded for them: they join the next filter sent (each reload is one
// more filter for an adversary to intersect, and a decoy's purpose is to
// be in every filter from then on).
func (m *manager) topUpDecoys(fb *watch.FilteredBlock, res watch.BlockResult) {
	d := m.n.decoys
	if d.max == 0 || len(res.Relevant) == 0 || m.st.Err != nil {
		return
	}
	relevant := make(map[chainhash.Hash]bool, len(res.Relevant))
	for _, id := range res.Relevant {
		relevant[id] = true
	}
	var txs []*wire.MsgTx
	for _, tx := range fb.Txs {
		if relevant[tx.TxHash()] {
			txs = append(txs, tx)
		}
	}
	// The watcher's elements, with those this block adds (its delta is
	// applied after).
	added := make(map[string]bool, len(res.Delta.Data))
	for _, e := range res.Delta.Data {
		added[string(e)] = true
	}
	own := func(p []byte) bool {
		_, ok := m.els.seen[string(p)]
		return ok || added[string(p)]
	}
	grew, err := d.topUp(txs, own)
	if err != nil {
		m.fail(fmt.Errorf("decoys of block %d: %w", fb.Height, err))
		return
	}
	if grew {
		m.filter = nil
		m.st.Decoys = len(d.active())
		m.n.log.Info("decoys chosen", "height", fb.Height, "decoys", m.st.Decoys, "max", d.max)
	}
}

// report counts a delivered block and publishes its events.
func (m *manager) report(fb *watch.FilteredBlock, res watch.BlockResult, why map[chainhash.Hash]txWhy, checks BlockChecks, cf *CFBlock) {
	// A block delivered again after a filter change reports only the
	// transactions it did not report the first time.
	again := m.lastHash == fb.Hash && m.lastSeen != nil
	if !again {
		m.lastHash, m.lastSeen = fb.Hash, make(map[chainhash.Hash]bool, len(fb.Txs))
	}
	relevant := make(map[chainhash.Hash]bool, len(res.Relevant))
	for _, id := range res.Relevant {
		relevant[id] = true
	}
	fps := make(map[chainhash.Hash]bool, len(res.FalsePositives))
	for _, id := range res.FalsePositives {
		fps[id] = true
	}
	st := &m.st
	if !again {
		st.Blocks++
		st.Tested += uint64(fb.TotalTxs)
	}
	now := m.n.at()
	var nMatched, nRelevant, nFP int
	var busy []string // decoys that became busy in this block
	for _, tx := range fb.Txs {
		id := tx.TxHash()
		if m.lastSeen[id] {
			continue
		}
		m.lastSeen[id] = true
		nMatched++
		// Relevant transactions are remembered too: the server matched
		// the decoy outputs among theirs, and the spends of those match.
		decoyHit := m.n.decoys.matches(tx, id)
		switch {
		case relevant[id]:
			nRelevant++
		case fps[id]:
			nFP++
			if decoyHit != "" {
				st.DecoyMatches++
				if m.n.decoys.falsePositive(decoyHit) {
					busy = append(busy, decoyHit)
				}
			}
		}
		m.n.publish(matchedTx(now, tx, id, fb.Height, relevant[id], fps[id], res.Amounts[id], why[id]))
	}
	if nRelevant > 0 {
		m.noteWalletTx(true)
	}
	st.Matched += nMatched
	st.Relevant += nRelevant
	st.FalsePositives += nFP
	if neg := st.Tested - uint64(st.Relevant); neg > 0 {
		st.ObservedFPRate = float64(st.FalsePositives) / float64(neg)
	}
	m.n.publish(BlockProcessed{
		At: now, Height: fb.Height, Hash: fb.Hash, Matched: nMatched,
		Relevant: nRelevant, FalsePositives: nFP, Again: again, Checks: checks,
		ObservedFPRate: st.ObservedFPRate, TheoreticalFPRate: st.Filter.FPRate,
		PeerHeight: st.PeerHeight, Tested: st.Tested, CF: cf,
	})
	if len(busy) > 0 {
		m.retireDecoys(fb.Height, busy)
	}
	// A filter past its reload threshold is reloaded at the next reload
	// point (reload.go), not now: the block that pushed it there holds a
	// match.
}

// retireDecoys takes busy decoys out of the filters (see Config.Decoys):
// persisted as retired, then every peer is reloaded without them at the
// next reload point.
func (m *manager) retireDecoys(h int32, busy []string) {
	d := m.n.decoys
	for _, k := range busy {
		retired, err := d.retire(k)
		if err != nil {
			m.fail(fmt.Errorf("retire decoy at block %d: %w", h, err))
			return
		}
		if !retired {
			continue
		}
		m.st.DecoysRetired++
		m.n.log.Info("busy decoy retired", "height", h, "decoy", hex.EncodeToString([]byte(k)),
			"false_positives", DecoyBusyLimit)
	}
	m.st.Decoys = len(d.active())
	m.filter = nil
	m.rl.decoyBusy = true
}

// elementsChanged applies a watcher's delta from block h (h = -1 for a
// mempool tx or a rollback) to the node's element set. It never sends a
// filter: new elements join the filters at the next reload point
// (reload.go). When the download peer's filter lacks an element the
// watcher needs now (Data or Due: its lookahead reserve ran out; or, for a
// block or a rollback, an outpoint the server did not insert), the blocks
// from h on (from the next one after a mempool tx or a rollback) may lack
// matches: that is the gap-limit race (gapRace), which stops delivery,
// reloads every peer and fetches those blocks again from an aligned
// boundary. Only what the delta adds is tested: the download peer holds
// every earlier element (or a race is pending for it).
//
// Outpoints are tested for a block (its wallet outputs the server matched
// are in its filter; one it did not is a coin whose spends it would
// miss) and for a rollback (the guards of the transactions a reorg made
// pending again: a double spend of their inputs on the new branch must
// match; that race reloads at once on the live chain too: the new filter
// holds those payments' inputs, which name them whatever its timing),
// not for a mempool transaction: its own outputs the server
// inserts when it filters the block that confirms it (BLOOM_UPDATE_ALL),
// before any spend in a later block. What waits for the next reload point
// are the guards of a pending payment (the payer's inputs, which no
// server inserts): a double spend confirmed before then is not matched,
// and the payment stays pending until it expires (wallet.MempoolExpiry).
func (m *manager) elementsChanged(h int32, d watch.ElementDelta, kind deltaKind) {
	if d.Empty() {
		return
	}
	m.els.apply(d, h)
	if d.Added() {
		m.filter = nil
	}
	for _, list := range [][][]byte{d.Data, d.Reserve} {
		for _, e := range list {
			if m.rl.sent == nil || !m.rl.sent.Matches(e) {
				m.rl.pendingKeys++
			}
		}
	}
	dl := m.dl
	if dl == nil || dl.mirror == nil || deltaHeld(dl.mirror, d, kind != deltaMempool) {
		return
	}
	from := m.next
	if h >= 0 {
		from = h
	}
	m.gapRace(from, kind == deltaRollback)
}

// deltaKind says where a watcher's delta came from.
type deltaKind int

const (
	// deltaBlock is a delivered block's.
	deltaBlock deltaKind = iota
	// deltaMempool is an unconfirmed transaction's.
	deltaMempool
	// deltaRollback is a rollback's (a reorg, an omission).
	deltaRollback
)

// deltaHeld reports whether filter f matches every element d needs now
// (Data and Due), and its outpoints too when outpoints is set. Outpoints
// of outputs a BLOOM_UPDATE_ALL server matched are already in its filter
// (and in the mirror, which replays the insertions), so most payments
// need nothing.
func deltaHeld(f *bip37.Filter, d watch.ElementDelta, outpoints bool) bool {
	for _, list := range [][][]byte{d.Data, d.Due} {
		for _, e := range list {
			if !f.Matches(e) {
				return false
			}
		}
	}
	if outpoints {
		for i := range d.OutPoints {
			if !f.MatchesOutPoint(&d.OutPoints[i]) {
				return false
			}
		}
	}
	return true
}

// onMempoolTx replays an unconfirmed tx a peer relayed into its mirror
// (the server inserted its outpoints when it decided to relay it) and,
// once the initial sync is done, offers it to the watcher.
func (m *manager) onMempoolTx(ps *peerState, tx *wire.MsgTx) {
	txid := tx.TxHash()
	if ps.mirror == nil {
		return
	}
	if err := checkTx(tx); err != nil {
		m.misbehave(ps, misbehaviorInvalidTx, fmt.Sprintf("unconfirmed tx %v: %v", txid, err))
		return
	}
	match, matched := ps.mirror.Explain(tx)
	why := txWhy{peer: ps.addr, seq: ps.filterSeq, match: match, fpRate: ps.mirror.CurrentFPRate()}
	if !ps.mirror.MatchTxAndUpdate(tx) {
		// Dropped, never scored: a server may announce its mempool
		// without filtering it (bcoin answers BIP35 mempool with every
		// transaction it has), and drift explains the rest. A peer that
		// keeps announcing what does not match stops being asked.
		m.st.Dropped++
		ps.unmatchedRelays++
		if ps.unmatchedRelays == maxUnmatchedRelays {
			m.n.log.Info("peer announces transactions its filter does not match; no longer fetching its relays",
				"peer", ps.addr, "unmatched", ps.unmatchedRelays)
		}
		return
	}
	ps.replayed(txid)
	m.carry(ps, tx, txid)
	m.recent.add(txid, tx)
	if !ps.mempoolSent {
		return // the mirror needed it; the watcher gets mempool txs once synced
	}
	if len(m.mempoolSeen) > 100000 {
		clear(m.mempoolSeen)
	}
	m.mempoolSeen[txid] = struct{}{}
	res, err := m.w.ApplyMempoolTx(tx)
	var refused *watch.TxRefusal
	if errors.As(err, &refused) {
		m.refusedTx(ps, txid, refused)
		return
	}
	if err != nil {
		m.fail(fmt.Errorf("%w: mempool tx %v: %w", ErrWatcher, txid, err))
		return
	}
	m.st.MempoolTxs++
	if res.Relevant {
		m.noteWalletTx(false)
	}
	if !matched {
		why = txWhy{}
	}
	m.n.publish(matchedTx(m.n.at(), tx, txid, -1, res.Relevant, !res.Relevant, res.Amount, why))
	m.elementsChanged(-1, res.Delta, deltaMempool)
}

// refusedTx reports an unconfirmed transaction the watcher would not keep
// (over one of its budgets, or invalid): one log line naming the peer and
// the reason, and a score when the transaction alone is the reason. A full
// pending set is not the relaying peer's fault: a genuine payment meets it
// too when another peer filled the set, and scoring it would let that
// peer get an honest one banned.
func (m *manager) refusedTx(ps *peerState, txid chainhash.Hash, r *watch.TxRefusal) {
	m.st.MempoolRefused++
	if r.PeerAtFault {
		m.misbehave(ps, misbehaviorRefusedTx, fmt.Sprintf("unconfirmed tx %v: %v", txid, r.Err))
		return
	}
	m.n.log.Warn("unconfirmed transaction not kept: the wallet's pending budget is full",
		"peer", ps.addr, "tx", txid, "reason", r.Err)
}

// checkTx applies the consensus rules a transaction must meet whatever
// the chain holds (btcd's CheckTransactionSanity): at least one input and
// one output, each output value in [0, 21e6 BTC] and their sum too (so no
// sum of them overflows), no input twice, at most 1,000,000 bytes without
// witness, no null previous outpoint outside a coinbase. No honest peer
// sends a transaction that fails them, in a block or unconfirmed.
func checkTx(tx *wire.MsgTx) error {
	return blockchain.CheckTransactionSanity(btcutil.NewTx(tx))
}
