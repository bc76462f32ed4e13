package spv

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// onHeaders connects a headers message to the store. A reply to our
// getheaders that does not connect, or any invalid header, scores
// misbehaviour; an unsolicited announcement that does not connect makes
// us ask for the missing headers, up to maxUnconnectingHeaders in a row.
func (m *manager) onHeaders(ps *peerState, msg *wire.MsgHeaders) {
	solicited := !ps.headersReq.IsZero()
	ps.headersReq = timeZero
	if len(msg.Headers) == 0 {
		// Nothing after our locator (Core and btcd send an empty
		// reply; Core also while below its minimum chain work): the
		// same as the fence's pong with no headers before it.
		m.noHeaders(ps, emptyHeaders)
		return
	}
	hdrs := make([]wire.BlockHeader, len(msg.Headers))
	for i, h := range msg.Headers {
		hdrs[i] = *h
	}
	res, err := m.n.store.Connect(hdrs)
	if res.Reorg != nil {
		m.onReorg(res.Reorg)
	}
	m.reconcile()
	if res.Accepted > 0 || res.NewTip {
		hash, height := m.n.store.Tip()
		m.n.publish(HeadersProgress{At: m.n.at(), Height: height, Hash: hash, PeerHeight: m.st.PeerHeight})
	}
	if m.noteSideBranch(ps, hdrs, res); !ps.ready {
		return // banned for its side branches
	}
	last := hdrs[len(hdrs)-1].BlockHash()
	lastHeight, herr := m.n.store.HeightByHash(last)
	if herr == nil && !m.n.store.IsBest(last) {
		// The peer's chain is a side branch: it can serve our chain
		// only up to the fork.
		lastHeight = m.forkPoint(last, lastHeight)
		ps.lastBlock = min(ps.lastBlock, lastHeight)
	}
	if herr == nil && lastHeight > ps.lastBlock {
		ps.lastBlock = lastHeight
		ps.p.UpdateLastBlockHeight(lastHeight)
	}
	if err != nil {
		var ve *headers.ValidationError
		switch {
		case !errors.As(err, &ve):
			m.fail(fmt.Errorf("%w: connect: %w", ErrHeaderStore, err))
		case errors.Is(ve.Err, headers.ErrLowWorkBranch):
			// Valid but useless: not stored, the peer scored, the
			// sync goes on.
			m.misbehave(ps, misbehaviorLowWorkHeaders, ve.Error())
		case errors.Is(ve.Err, headers.ErrNotConnecting) && !solicited:
			// An announcement we cannot place: ask for the headers in
			// between, as Core does, but not forever (a peer that only
			// ever announces what does not connect is useless, and each
			// announcement costs us a getheaders).
			ps.unconnecting++
			if ps.unconnecting > maxUnconnectingHeaders {
				m.misbehave(ps, misbehaviorOrphanHeaders, fmt.Sprintf("%d announcements that do not connect", ps.unconnecting))
				if ps.ready {
					m.dropPeer(ps, "headers do not connect")
					ps.p.Disconnect()
				}
				return
			}
			m.sendGetHeaders(ps)
		case errors.Is(ve.Err, headers.ErrNotConnecting):
			// An answer to our locator that does not connect: the peer
			// is useless for headers; score it and drop it.
			m.misbehave(ps, misbehaviorOrphanHeaders, ve.Error())
			if ps.ready {
				m.dropPeer(ps, "headers do not connect")
				ps.p.Disconnect()
			}
		default:
			m.misbehave(ps, misbehaviorBadHeader, ve.Error())
		}
		return
	}
	ps.unconnecting = 0
	// Headers came: whatever the peer claimed, it serves them.
	ps.lagSince, ps.lagRetry = timeZero, timeZero
	if len(msg.Headers) == wire.MaxBlockHeadersPerMsg {
		// More follow: ask from the last one, as Core does. A locator
		// from our best tip would get the same batch again when it is a
		// side branch longer than one message (a deep reorg).
		m.sendGetHeadersFrom(ps, last)
		return
	}
	// A short reply ends the peer's chain: its height is now known, not
	// claimed (a version message may announce any height).
	ps.headersDone = true
	if herr == nil {
		ps.lastBlock = lastHeight
		ps.claimed, ps.claimSet = lastHeight, true
	}
}

// Side branches a peer serves. A valid side-branch header is stored (a
// reorg may need it) and costs its sender nothing at first: an honest peer
// still on a competing tip serves one now and then. What is judged is
// whether a peer's branches ever become the best chain: each peer's side
// tips are kept (the last header of each batch it got stored off the best
// chain; a batch that extends one replaces it) until they become best
// (never scored) or are evicted by the store's bound (spv/headers
// evict.go: the branches with the least work go first). The peer is
// scored misbehaviorLowWorkHeaders for every branch of its evicted,
// later or at once, and for every batch that leaves it holding more than
// a quarter of the bound in side-branch headers: one peer cannot fill the
// bound for free, and no peer is scored for the branch that wins.
const (
	// maxSideTips bounds the side tips remembered per peer (the oldest
	// is forgotten, unscored).
	maxSideTips = 64
)

// noteSideBranch records the side branch a headers batch from ps left in
// the store and scores what the bound evicted.
func (m *manager) noteSideBranch(ps *peerState, hdrs []wire.BlockHeader, res headers.ConnectResult) {
	if res.Dropped > 0 {
		m.misbehave(ps, misbehaviorLowWorkHeaders, fmt.Sprintf("side branch of %d headers evicted at once: less work than every stored side branch", res.Dropped))
	}
	if res.Accepted > 0 && ps.ready {
		// The last stored header of the batch: a side tip unless on the
		// best chain.
		var tip chainhash.Hash
		for i := len(hdrs) - 1; i >= 0; i-- {
			if h := hdrs[i].BlockHash(); m.n.store.IsBest(h) {
				break
			} else if _, err := m.n.store.HeightByHash(h); err == nil {
				tip = h
				break
			}
		}
		if tip != (chainhash.Hash{}) {
			m.addSideTip(ps, tip, hdrs)
		}
	}
	if res.Evicted > 0 || res.NewTip {
		m.reviewSideTips()
	}
}

// addSideTip records tip as one of ps's side tips, replacing those the
// batch hdrs extends, and scores ps when its side tips hold more than a
// quarter of the bound.
func (m *manager) addSideTip(ps *peerState, tip chainhash.Hash, hdrs []wire.BlockHeader) {
	inBatch := make(map[chainhash.Hash]bool, len(hdrs))
	for i := range hdrs {
		inBatch[hdrs[i].BlockHash()] = true
	}
	ps.sideTips = slices.DeleteFunc(ps.sideTips, func(h chainhash.Hash) bool { return inBatch[h] })
	if len(ps.sideTips) == maxSideTips {
		ps.sideTips = slices.Delete(ps.sideTips, 0, 1)
	}
	ps.sideTips = append(ps.sideTips, tip)
	held := 0
	for _, h := range ps.sideTips {
		height, err := m.n.store.HeightByHash(h)
		if err != nil {
			continue
		}
		if fork, _, err := m.n.store.ForkPoint(h); err == nil {
			held += int(height - fork)
		}
	}
	if share := m.sideShare(); held > share {
		m.misbehave(ps, misbehaviorLowWorkHeaders, fmt.Sprintf("%d side-branch headers in %d branches, none the best chain (share %d)", held, len(ps.sideTips), share))
	}
}

// sideShare is how many side-branch headers one peer's branches may hold
// before each further batch scores it: a quarter of the store's bound.
func (m *manager) sideShare() int {
	return cmp.Or(m.n.cfg.Tuning.MaxSideHeaders, headers.DefaultMaxSideHeaders) / 4
}

// reviewSideTips forgets the peers' side tips that became best (unscored)
// and scores the peers whose tips the store evicted.
func (m *manager) reviewSideTips() {
	for ps := range m.peers {
		evicted := 0
		ps.sideTips = slices.DeleteFunc(ps.sideTips, func(h chainhash.Hash) bool {
			if m.n.store.IsBest(h) {
				return true
			}
			if _, err := m.n.store.HeightByHash(h); err != nil {
				evicted++
				return true
			}
			return false
		})
		for range evicted {
			if !ps.ready {
				break
			}
			m.misbehave(ps, misbehaviorLowWorkHeaders, "side branch evicted for want of work: it never became the best chain")
		}
	}
}

// onReorg follows a best-chain switch: blocks above the fork are dropped
// from the window and, when the watcher had applied any, it rolls back to
// the fork and the new branch is fetched.
func (m *manager) onReorg(r *headers.Reorg) {
	fork := r.ForkHeight
	ev := Reorg{
		At: m.n.at(), ForkHeight: fork,
		OldHeight: fork + int32(len(r.Detached)), NewHeight: fork + int32(len(r.Attached)),
	}
	if len(r.Detached) > 0 {
		ev.OldTip = r.Detached[0]
	}
	if len(r.Attached) > 0 {
		ev.NewTip = r.Attached[len(r.Attached)-1]
	}
	m.n.log.Info("reorg", "fork", fork, "detached", len(r.Detached), "attached", len(r.Attached))
	m.st.Reorgs++
	m.dropFrom(fork + 1)
	if m.synced.Height > fork {
		d, err := m.w.Rollback(fork)
		if err != nil {
			m.fail(fmt.Errorf("%w: rollback to %d: %w", ErrWatcher, fork, err))
			return
		}
		m.synced = watch.SyncPoint{Height: fork, Hash: r.ForkHash}
		m.next = m.firstWanted(fork + 1)
		m.reqHigh = m.next - 1
		// A rollback changes the watcher's elements (its transactions
		// of the removed blocks are pending again, and a wallet then
		// watches their inputs for double spends): the new branch must
		// be filtered with them.
		m.elementsChanged(-1, d, deltaRollback)
	}
	m.st.Synced, m.st.AtTip = false, false
	m.n.publish(ev)
}

// dropFrom forgets every slot at or above h; their outstanding requests
// turn stale.
func (m *manager) dropFrom(h int32) {
	for height, s := range m.slots {
		if height < h {
			continue
		}
		if s.req != nil {
			s.req.stale = true
		}
		delete(m.slots, height)
	}
	if m.reqHigh >= h {
		m.reqHigh = h - 1
	}
	if m.cf != nil {
		m.cf.dropFrom(h)
	}
}

// reconcile makes sure the watcher's sync point is on the best chain once
// the headers reach it (a restart after a reorg the node did not see): it
// rolls the watcher back to the last common block.
func (m *manager) reconcile() {
	sp := m.synced
	if sp.Height < 0 {
		return
	}
	_, tip := m.n.store.Tip()
	if sp.Height > tip {
		return // headers not there yet
	}
	hash, err := m.n.store.HashByHeight(sp.Height)
	if err != nil || hash == sp.Hash {
		return
	}
	fork := m.birthday - 1
	if _, h, err := m.n.store.HeaderByHash(sp.Hash); err == nil {
		fork = m.forkPoint(sp.Hash, h)
	}
	m.n.log.Info("watcher on a stale branch", "height", sp.Height, "hash", sp.Hash, "fork", fork)
	d, err := m.w.Rollback(fork)
	if err != nil {
		m.fail(fmt.Errorf("%w: rollback to %d: %w", ErrWatcher, fork, err))
		return
	}
	forkHash, _ := m.n.store.HashByHeight(fork)
	m.synced = watch.SyncPoint{Height: fork, Hash: forkHash}
	m.dropFrom(0)
	m.next = m.firstWanted(fork + 1)
	m.reqHigh = m.next - 1
	m.elementsChanged(-1, d, deltaRollback)
}

// forkPoint walks a side branch down from hash (at height h) to the best
// chain and returns the fork height.
func (m *manager) forkPoint(hash chainhash.Hash, h int32) int32 {
	for h >= 0 && !m.n.store.IsBest(hash) {
		hdr, _, err := m.n.store.HeaderByHash(hash)
		if err != nil {
			return m.birthday - 1
		}
		hash = hdr.PrevBlock
		h--
	}
	return h
}

// onInv handles announcements: unknown blocks make us fetch headers,
// transactions (relayed because they match the peer's filter) are fetched
// once the initial sync is done.
func (m *manager) onInv(ps *peerState, msg *wire.MsgInv) {
	needHeaders := false
	var gd *wire.MsgGetData
	for _, iv := range msg.InvList {
		switch iv.Type {
		case wire.InvTypeBlock, wire.InvTypeWitnessBlock:
			ps.p.UpdateLastAnnouncedBlock(&iv.Hash)
			h, err := m.n.store.HeightByHash(iv.Hash)
			if err != nil {
				// The peer claims a block we lack: until its headers
				// come, it is not at our tip (noHeaders).
				ps.announced = iv.Hash
				needHeaders = true
			} else if m.n.store.IsBest(iv.Hash) && h > ps.lastBlock {
				ps.lastBlock = h
			}
		case wire.InvTypeTx, wire.InvTypeWitnessTx:
			if ps.mirror == nil || ps.unmatchedRelays >= maxUnmatchedRelays {
				continue
			}
			// The server inserted the outpoints of this tx into its
			// filter when it decided to relay it: fetch it to replay
			// that in the mirror, and offer it to the watcher once
			// synced (onMempoolTx).
			ps.noteUnknown(iv.Hash)
			if _, seen := m.mempoolSeen[iv.Hash]; seen && ps.mempoolSent {
				// Fetched from another announcer: replay this one's
				// insertions from the body kept, and say that this
				// peer holds it too (a broadcast waits for that when
				// the first announcer was its own target).
				if tx, ok := m.recent.get(iv.Hash); ok && ps.mirror.MatchTxAndUpdate(tx) {
					ps.replayed(iv.Hash)
					m.carry(ps, tx, iv.Hash)
				}
				m.n.publish(TxRelayed{At: m.n.at(), Txid: iv.Hash, Peer: ps.addr})
				continue
			}
			if _, asked := ps.txReqs[iv.Hash]; asked || len(ps.txReqs) >= maxTxReqs {
				continue
			}
			if gd == nil {
				gd = wire.NewMsgGetData()
			}
			_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &iv.Hash))
			ps.txReqs[iv.Hash] = &txReq{}
		}
	}
	if gd != nil {
		if !ps.owesData() {
			ps.lastAnswer = m.n.clock.Now()
		}
		ps.send(gd)
	}
	if needHeaders {
		ps.headersDone = false
		// A lagging peer that announces a new block may have caught
		// up: ask it now rather than at its next retry.
		ps.lagRetry = timeZero
		if ps.headersReq.IsZero() {
			m.sendGetHeaders(ps)
		}
	}
}

// sendGetHeaders asks ps for headers after our locator, followed by a
// ping: the fence. Peers answer messages in order, so the pong comes after
// the headers if there are any; a pong with none before it means the peer
// gave nothing (onFencePong), which bcoin does when nothing follows the
// locator and bcoin, btcd and old Core do while not synced. Core and btcd
// answer an empty headers message instead when synced; either way the
// request ends without waiting for the stall timeout. The getheaders is
// queued directly: btcd's PushGetHeadersMsg silently drops a getheaders
// with the same first locator hash as the previous one, which would leave
// a request outstanding that was never sent (a synced node asking again
// after an announcement). A lagging peer is asked again only from its
// lagRetry on (reviewLagging).
func (m *manager) sendGetHeaders(ps *peerState) {
	m.sendGetHeadersFrom(ps, chainhash.Hash{})
}

// sendGetHeadersFrom is sendGetHeaders with a locator from the stored
// header from (of any branch) instead of the best tip; a zero or unknown
// hash means the best tip.
func (m *manager) sendGetHeadersFrom(ps *peerState, from chainhash.Hash) {
	now := m.n.clock.Now()
	if !ps.lagSince.IsZero() && now.Before(ps.lagRetry) {
		return
	}
	loc := m.n.store.Locator()
	if from != (chainhash.Hash{}) {
		if l, err := m.n.store.LocatorFrom(from); err == nil {
			loc = l
		}
	}
	msg := wire.NewMsgGetHeaders()
	for _, h := range loc {
		if err := msg.AddBlockLocatorHash(h); err != nil {
			break // the locator is bounded well below the limit
		}
	}
	ps.send(msg)
	ps.headersReq = now
	// The fence's nonce is unique within the node, so it never names a
	// batch of ps.pings (sendPing) and a stale fence's pong is ignored.
	ps.fence = m.nonce()
	ps.send(wire.NewMsgPing(ps.fence))
}

// onFencePong handles the pong of a getheaders fence and reports whether
// nonce was the fence's (the pong is then consumed; any other pong is
// onPong's). When the getheaders is still outstanding, the peer answered
// it with nothing (noHeaders). Like a batch's pong, it also proves every
// earlier answer complete, so it ends a merkle block's stream.
func (m *manager) onFencePong(ps *peerState, nonce uint64) bool {
	if ps.fence == 0 || nonce != ps.fence {
		return false
	}
	ps.fence = 0
	m.endStream(ps)
	if !ps.headersReq.IsZero() {
		m.noHeaders(ps, "no headers before the fence's pong")
	}
	return true
}

// Lagging peers: a peer that claims more than our tip and gives no
// headers.
const (
	// lagRetryInterval is how long a lagging peer is left alone before
	// it is asked for headers again (an announcement of a block we
	// lack asks it at once).
	lagRetryInterval = 30 * time.Second
	// emptyHeaders names an explicit empty headers reply (noHeaders).
	emptyHeaders = "empty headers"
	// lagDropAfter is how long a peer may stay lagging before it is
	// disconnected, without a score: being behind is no misbehaviour,
	// and a new connection brings a new version message (a new start
	// height).
	lagDropAfter = 5 * time.Minute
	// noBlocks is the lastBlock of a lagging peer: it is asked for no
	// filtered block and never preferred as the download peer.
	noBlocks int32 = -1
)

// noHeaders handles a getheaders that ps answered with no header, by an
// empty headers message or by the fence's pong alone. Either means the
// peer's tip is on our chain (ours or below it), or that the peer does
// not serve headers now: bcoin and btcd while not synced (btcd: a tip
// older than 24 hours), old Core in initial block download, current Core
// below its minimum chain work. Only the peer's claims tell them apart:
// a peer whose announced height (its version's start height, later what
// its headers showed) is not above our tip and that announced no block
// we lack is caught up with us, and may make the node synced; any other
// is lagging (lagging) and never does.
//
// An explicit empty headers message is stronger than the pong alone: Core
// and btcd send it only when synced, and it says that nothing on the
// peer's best chain follows our locator. A block the peer announced that
// we lack is then not on its best chain any more (it reorganized away
// from it, as the demo's follower btcd does after a reorg, whose stale
// announcement made it lagging and left blocks unchecked): the
// announcement is forgotten, and the peer is lagging only if its claimed
// height is above our tip.
func (m *manager) noHeaders(ps *peerState, how string) {
	ps.headersReq = timeZero
	_, tip := m.n.store.Tip()
	claim := ps.claim()
	if how == emptyHeaders && claim <= tip && m.announcedUnknown(ps) {
		m.n.log.Info("stale announcement: the peer's best chain has nothing after our tip", "peer", ps.addr,
			"announced", ps.announced, "tip", tip)
		ps.announced = chainhash.Hash{}
	}
	if claim > tip || m.announcedUnknown(ps) {
		m.lagging(ps, claim, tip, how)
		return
	}
	if !ps.lagSince.IsZero() {
		m.n.log.Info("lagging peer caught up", "peer", ps.addr, "tip", tip,
			"after", m.n.clock.Now().Sub(ps.lagSince).Round(time.Second))
	}
	ps.lagSince, ps.lagRetry = timeZero, timeZero
	// Take it to have our chain; a notfound lowers that (without
	// penalty) if it is behind.
	ps.headersDone = true
	if ps.lastBlock != tip {
		ps.lastBlock = tip
		m.refreshPeers()
	}
}

// claim returns the height ps claims to have: its version's start height
// until a short headers reply showed where its chain ends.
func (ps *peerState) claim() int32 {
	if ps.claimSet {
		return ps.claimed
	}
	return ps.p.LastBlock()
}

// announcedUnknown reports whether the last block ps announced by inv is
// still unknown to the header store (forgetting it once known).
func (m *manager) announcedUnknown(ps *peerState) bool {
	if ps.announced == (chainhash.Hash{}) {
		return false
	}
	if _, err := m.n.store.HeightByHash(ps.announced); err == nil {
		ps.announced = chainhash.Hash{}
		return false
	}
	return true
}

// lagging marks ps as lagging: it claims more than our tip (claim above
// tip, or a block announced that we lack) and gave no headers. It serves
// no filtered block, is asked for headers again after lagRetryInterval,
// stops being the download peer when another peer can take over
// (replaceDownloadPeer) and never makes the node synced (checkSynced).
func (m *manager) lagging(ps *peerState, claim, tip int32, how string) {
	now := m.n.clock.Now()
	if ps.lagSince.IsZero() {
		ps.lagSince = now
		m.n.log.Warn("peer claims a longer chain but gives no headers (lagging or in initial block download): its word is not taken for synced",
			"peer", ps.addr, "claims", claim, "announced", ps.announced, "tip", tip, "answer", how)
	}
	ps.lagRetry = now.Add(lagRetryInterval)
	ps.headersDone = false
	ps.lastBlock = noBlocks
	m.replaceDownloadPeer(ps)
	m.refreshPeers()
}

// replaceDownloadPeer gives the download role of a lagging ps to the best
// other ready peer that is not lagging (highest height, then the first
// listed), as pickDownloadPeer would; with none, ps keeps it and the node
// waits (it is never synced on a lagging peer's word).
func (m *manager) replaceDownloadPeer(ps *peerState) {
	if m.dl != ps {
		return
	}
	var best *peerState
	for other := range m.peers {
		if other == ps || !other.lagSince.IsZero() {
			continue
		}
		if best == nil || other.lastBlock > best.lastBlock || (other.lastBlock == best.lastBlock && other.slot < best.slot) {
			best = other
		}
	}
	if best == nil {
		return
	}
	m.dl = best
	if m.switchNeedsReload(best) {
		m.reloadAll(transcript.ReasonOutPoints)
	}
	m.n.log.Info("download peer", "addr", best.addr, "height", best.lastBlock, "replaces", ps.addr, "why", "lagging")
	m.refreshPeers()
}

// reviewLagging runs with every checkSynced (after every message and
// every tick): lagging peers hand the download role over when another
// peer can take it, are asked for headers again when their retry time
// has come, and are disconnected, unscored, after lagDropAfter.
func (m *manager) reviewLagging() {
	now := m.n.clock.Now()
	for ps := range m.peers {
		if ps.lagSince.IsZero() {
			continue
		}
		if lag := now.Sub(ps.lagSince); lag >= lagDropAfter {
			m.dropPeer(ps, fmt.Sprintf("lagging for %v: claims height %d and gives no headers", lag.Round(time.Second), ps.claim()))
			ps.p.Disconnect()
			continue
		}
		m.replaceDownloadPeer(ps)
		if ps.headersReq.IsZero() && !now.Before(ps.lagRetry) {
			m.sendGetHeaders(ps)
		}
	}
}

// checkSynced notices when the watcher reaches the download peer's tip
// (flush, mempool) and when it falls behind again, and when the node is
// synced: at the tip with no block awaiting an omission check (SyncDone).
// The download peer must have answered our last getheaders (headers, an
// empty reply or the fence) without claiming more than our tip: a
// lagging peer's word never makes the node synced. A check still waiting
// for a second peer to get its block holds "synced" back, up to
// Tuning.CheckWait: the block was applied as one peer delivered it, and
// until another answers nothing shows whether it hid a payment. At the
// tip with checks awaited the node says so (ChecksAwaited).
func (m *manager) checkSynced() {
	m.reviewLagging()
	dl := m.dl
	hash, tip := m.n.store.Tip()
	atTip := dl != nil && dl.headersDone && dl.headersReq.IsZero() && dl.lagSince.IsZero() &&
		m.next > tip && m.enoughWork() && m.rl.race < 0
	m.pruneRechecks()
	awaiting := m.awaitingChecks()
	wasAtTip, wasAwaiting := m.st.AtTip, m.st.AwaitingCheck
	m.st.AtTip, m.st.AwaitingCheck = atTip, awaiting
	if atTip && !wasAtTip {
		if f, ok := m.w.(watch.Flusher); ok {
			if err := f.Flush(); err != nil {
				m.fail(fmt.Errorf("%w: flush: %w", ErrWatcher, err))
				return
			}
		}
		if m.liveFrom == 0 {
			m.liveFrom = tip
		}
		for ps := range m.peers {
			m.sendMempool(ps)
		}
	}
	if atTip && awaiting > 0 && (!wasAtTip || awaiting != wasAwaiting) {
		if !wasAtTip || awaiting > wasAwaiting {
			m.n.log.Info("at the tip, blocks awaiting an omission check", "height", tip, "blocks", awaiting)
		}
		m.n.publish(ChecksAwaited{At: m.n.at(), Height: tip, Hash: hash, Blocks: awaiting})
	}
	synced := atTip && awaiting == 0
	if synced == m.st.Synced {
		return
	}
	m.st.Synced = synced
	if synced && hash != m.syncDoneAt {
		m.syncDoneAt = hash
		m.n.log.Info("synced", "height", tip, "hash", hash)
		m.n.publish(SyncDone{At: m.n.at(), Height: tip, Hash: hash})
	}
}

// sendMempool asks ps once per filter for the matching txs of its mempool
// (BIP35), when the server's ban score allows it (mempoolAllowed);
// otherwise the housekeeping tick asks later.
func (m *manager) sendMempool(ps *peerState) {
	if ps.mempoolSent || ps.mirror == nil {
		return
	}
	now := m.n.clock.Now()
	if !ps.mempoolAllowed(now) {
		return
	}
	ps.mempoolSent = true
	ps.noteMempool(now)
	ps.send(wire.NewMsgMemPool())
}

// enoughWork reports whether the best header chain has the network's
// minimum chain work: below it the chain cannot be the network's, whatever
// a peer says, and the node never reports synced on it.
func (m *manager) enoughWork() bool {
	min := m.n.cfg.Network.MinChainWork
	return min == nil || m.n.store.TipWork().Cmp(min) >= 0
}
