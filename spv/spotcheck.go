package spv

import (
	"fmt"
	"math/rand/v2"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// spotCheck is an omission check: a block already delivered from one peer
// (primary) asked again from a second peer.
//
// Policy: each delivered block, with probability 1/Config.SpotCheckEvery
// drawn at random (whether or not it had matches, since a peer hiding every
// match of a block, e.g. by understating its transaction count, leaves no
// trace otherwise), is requested from a second peer when one is
// connected. A transaction the second peer sends (inside its verified
// partial merkle tree, matching its filter) that the primary left out and
// that matches the primary's own filter is an omission: the primary is
// banned and the watcher is rolled back to the block before, which is
// fetched again from the remaining peers. The second peer's filter is
// built from the same elements and tweak, so an honest primary's match
// set contains the second's up to false-positive bits of the primary's
// UPDATE_ALL insertions, which the re-test against the primary's filter
// accounts for.
type spotCheck struct {
	height  int32
	hash    chainhash.Hash
	primary *peerState
	// gen is the primary's filter generation that filtered the block: a
	// primary reloaded since holds other elements, and the comparison
	// would blame it for what its old filter rightly did not match.
	gen  uint64
	sent map[chainhash.Hash]bool
}

// maybeSpotCheck starts a spot check of fb (delivered by ps) when it is
// due and a second peer is available.
func (m *manager) maybeSpotCheck(ps *peerState, fb *FilteredBlock) {
	every := m.n.cfg.SpotCheckEvery
	if every < 0 {
		return
	}
	// Each delivered block is checked with probability 1/every, drawn
	// from an unpredictable source: a fixed "every n-th block" would tell
	// a peer which blocks it can tamper with unseen.
	if every > 1 && rand.IntN(every) != 0 {
		return
	}
	var other *peerState
	for p := range m.peers {
		if p != ps && p.mirror != nil && (other == nil || p.addr < other.addr) {
			other = p
		}
	}
	if other == nil {
		return
	}
	c := &spotCheck{height: fb.Height, hash: fb.Hash, primary: ps, gen: ps.filterGen, sent: make(map[chainhash.Hash]bool, len(fb.Txs))}
	for _, tx := range fb.Txs {
		c.sent[tx.TxHash()] = true
	}
	m.st.SpotChecks++
	m.sendBatch(other, []*blockReq{{hash: fb.Hash, height: fb.Height, gen: other.filterGen, check: c}})
}

// finishSpotCheck compares the second peer's answer with the primary's.
func (m *manager) finishSpotCheck(c *spotCheck, fb *FilteredBlock) {
	if !m.n.store.IsBest(c.hash) {
		return
	}
	p := c.primary
	if p.filterGen != c.gen {
		return // inconclusive: the primary's filter changed since
	}
	var omitted []chainhash.Hash
	for _, tx := range fb.Txs {
		id := tx.TxHash()
		if c.sent[id] || p.mirror == nil || !p.mirror.MatchTx(tx) {
			continue
		}
		omitted = append(omitted, id)
	}
	if len(omitted) == 0 {
		return
	}
	m.st.Omissions++
	m.n.log.Warn("omission detected", "peer", p.addr, "block", c.hash, "height", c.height, "omitted", len(omitted))
	if p.ready {
		m.misbehave(p, MisbehaviorOmittedTx, fmt.Sprintf("%d txs of block %d %v, first %v", len(omitted), c.height, c.hash, omitted[0]))
		if p.ready { // not banned (score below threshold): still drop it
			m.dropPeer(p, "omitted matched txs")
			p.p.Disconnect()
		}
	}
	if c.height > m.synced.Height {
		m.dropFrom(c.height)
		m.next = min(m.next, c.height)
		m.reqHigh = m.next - 1
		return
	}
	back := c.height - 1
	d, err := m.w.Rollback(back)
	if err != nil {
		m.fail(fmt.Errorf("%w: rollback to %d: %w", ErrWatcher, back, err))
		return
	}
	hash, _ := m.n.store.HashByHeight(back)
	m.synced = SyncPoint{Height: back, Hash: hash}
	m.st.Rerequested += int(m.next - c.height)
	m.dropFrom(c.height)
	m.next = c.height
	m.reqHigh = m.next - 1
	m.isSynced = false
	m.elementsChanged(-1, d) // coins the removed blocks spent are watched again
}
