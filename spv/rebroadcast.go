package spv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Rebroadcasting a transaction until its first confirmation.
//
// A target that takes a transaction may still let it go: it may hold it
// without relaying it (no peer of its own, or it evicts it), or the peers
// it relays to may drop it. A running node keeps what it broadcast in a
// bounded pending set (maxRebroadcastTxs, maxRebroadcastBytes) and, on
// each block the watcher applies at the tip that does not confirm it,
// sends it again the way Broadcast does: a fresh connection to a peer
// that is not the download peer, one without a filter connection first,
// a different one than last time when there is one (the one To named,
// when the broadcast named one). It sends each at most once per block and
// no more often than minRebroadcastInterval.
//
// A transaction leaves the set when a block the watcher applies holds it
// (the first confirmation), when a block holds another transaction that
// spends one of its inputs (conflicted: the filter shows such a spend of
// the wallet's coins, which the filter holds), after maxRebroadcastBlocks
// blocks without either, or when the node stops: the set is not saved.
//
// The privacy cost: each rebroadcast is one more fresh connection from
// this IP announcing the same transaction, so each target learns again
// that this IP originated it, and the rebroadcasts of several pending
// transactions after one block come together, which links them to one
// sender. Through a proxy each rebroadcast has a circuit of its own, as
// the first broadcast has.

// PendingRebroadcast is one transaction the node rebroadcasts until its
// first confirmation (Status.Rebroadcasts).
type PendingRebroadcast struct {
	Txid chainhash.Hash `json:"txid"`
	// Attempts counts the rebroadcasts so far (the first broadcast
	// excluded); LastHeight is the block of the last send (the header
	// chain's tip at the first broadcast until a rebroadcast), and
	// LastPeer its target.
	Attempts   int    `json:"attempts"`
	LastHeight int32  `json:"last_height"`
	LastPeer   string `json:"last_peer"`
}

// errRebroadcastFull is reserve's error when the set is at its bounds.
var errRebroadcastFull = errors.New("the pending-rebroadcast set is full")

// pendingTx is one transaction of the set.
type pendingTx struct {
	tx   *wire.MsgTx
	txid chainhash.Hash
	size int
	seq  uint64
	// need is the least height of a target (BroadcastOptions.MinHeight
	// as Broadcast settled it); to the target the broadcast named.
	need int32
	to   string
	ins  map[wire.OutPoint]struct{}
	// held is set once the first broadcast sent it; until then a
	// confirmation or a conflict seen is kept in done, for settle.
	held bool
	done string

	firstHeight int32
	lastHeight  int32
	lastPeer    string
	lastAt      time.Time
	attempts    int
}

// rebroadcastSet is the bounded pending-rebroadcast set. Its methods
// take the time from the caller (the node's clock).
type rebroadcastSet struct {
	mu      sync.Mutex
	pending map[chainhash.Hash]*pendingTx
	bytes   int
	seq     uint64
	// minInterval is minRebroadcastInterval; the tests of a node on
	// regtest, whose blocks come within a second, set it lower.
	minInterval time.Duration
}

// newRebroadcastSet returns an empty set.
func newRebroadcastSet() *rebroadcastSet {
	return &rebroadcastSet{pending: make(map[chainhash.Hash]*pendingTx), minInterval: minRebroadcastInterval}
}

// reserve holds tx, not yet sent, before its broadcast: a block that
// confirms it while the broadcast waits is then seen. created is false
// when the set holds it already (an earlier broadcast of it), which then
// stays as it is. It returns errRebroadcastFull past the bounds.
func (s *rebroadcastSet) reserve(tx *wire.MsgTx, need int32, to string) (created bool, err error) {
	txid := tx.TxHash()
	size := tx.SerializeSize()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[txid]; ok {
		return false, nil
	}
	if len(s.pending) >= maxRebroadcastTxs || s.bytes+size > maxRebroadcastBytes {
		return false, fmt.Errorf("%w (%d transactions, %d bytes; at most %d, %d bytes)", errRebroadcastFull,
			len(s.pending), s.bytes, maxRebroadcastTxs, maxRebroadcastBytes)
	}
	e := &pendingTx{tx: tx, txid: txid, size: size, seq: s.seq, need: need, to: to, ins: make(map[wire.OutPoint]struct{}, len(tx.TxIn))}
	s.seq++
	for _, in := range tx.TxIn {
		e.ins[in.PreviousOutPoint] = struct{}{}
	}
	s.pending[txid] = e
	s.bytes += size
	return true, nil
}

// settle ends the reservation of txid when its broadcast is over: sent
// (the target took it or held it) and not confirmed, the transaction is
// held from height on, last sent to peer at now; otherwise a reservation
// this broadcast created is let go. It reports whether the set holds the
// transaction.
func (s *rebroadcastSet) settle(txid chainhash.Hash, created, sent bool, peer string, height int32, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.pending[txid]
	if !ok {
		return false
	}
	if !created {
		return e.held
	}
	if !sent || e.done != "" {
		s.remove(e)
		return false
	}
	e.held = true
	e.firstHeight, e.lastHeight, e.lastPeer, e.lastAt = height, height, peer, now
	return true
}

// remove takes e out of the set (s.mu held).
func (s *rebroadcastSet) remove(e *pendingTx) {
	delete(s.pending, e.txid)
	s.bytes -= e.size
}

// observe takes a transaction a block holds (a MatchedTx at a height):
// a pending transaction it is leaves the set as confirmed, one it
// conflicts with (it spends one of its inputs) as conflicted. It returns
// what left the set.
func (s *rebroadcastSet) observe(m MatchedTx) []RebroadcastDrop {
	if m.Height < 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var drops []RebroadcastDrop
	drop := func(e *pendingTx, reason string) {
		if !e.held {
			e.done = reason
			return
		}
		s.remove(e)
		drops = append(drops, RebroadcastDrop{Txid: e.txid, Reason: reason})
	}
	if e, ok := s.pending[m.Txid]; ok {
		drop(e, fmt.Sprintf("confirmed at height %d", m.Height))
	}
	if m.Tx == nil {
		return drops
	}
	for _, e := range s.ordered() {
		if e.txid == m.Txid {
			continue
		}
		for _, in := range m.Tx.TxIn {
			if _, ok := e.ins[in.PreviousOutPoint]; ok {
				drop(e, fmt.Sprintf("conflicted: %s at height %d spends its input %v", m.Txid, m.Height, in.PreviousOutPoint))
				break
			}
		}
	}
	return drops
}

// ordered returns the set's transactions in the order they came (s.mu
// held).
func (s *rebroadcastSet) ordered() []*pendingTx {
	out := make([]*pendingTx, 0, len(s.pending))
	for _, e := range s.pending {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *pendingTx) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// rebroadcastJob is a copy of what one rebroadcast needs.
type rebroadcastJob struct {
	tx       *wire.MsgTx
	txid     chainhash.Hash
	need     int32
	to       string
	lastPeer string
}

// due returns the held transactions to send again at a block at height
// applied at the tip at now: those last sent below height at least
// minInterval ago. Those held for maxRebroadcastBlocks blocks leave the
// set (the drops returned).
func (s *rebroadcastSet) due(height int32, now time.Time) ([]rebroadcastJob, []RebroadcastDrop) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var jobs []rebroadcastJob
	var drops []RebroadcastDrop
	for _, e := range s.ordered() {
		switch {
		case !e.held:
		case height-e.firstHeight > maxRebroadcastBlocks:
			s.remove(e)
			drops = append(drops, RebroadcastDrop{Txid: e.txid,
				Reason: fmt.Sprintf("no confirmation in %d blocks", maxRebroadcastBlocks)})
		case height > e.lastHeight && now.Sub(e.lastAt) >= s.minInterval:
			jobs = append(jobs, rebroadcastJob{tx: e.tx, txid: e.txid, need: e.need, to: e.to, lastPeer: e.lastPeer})
		}
	}
	return jobs, drops
}

// sent records a rebroadcast of txid at height and now (peer "" when no
// target took it) and returns its attempt number (0: the transaction
// left the set meanwhile).
func (s *rebroadcastSet) sent(txid chainhash.Hash, peer string, height int32, now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.pending[txid]
	if !ok {
		return 0
	}
	e.attempts++
	e.lastHeight, e.lastAt = height, now
	if peer != "" {
		e.lastPeer = peer
	}
	return e.attempts
}

// snapshot lists the held transactions in the order they came.
func (s *rebroadcastSet) snapshot() []PendingRebroadcast {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PendingRebroadcast
	for _, e := range s.ordered() {
		if e.held {
			out = append(out, PendingRebroadcast{Txid: e.txid, Attempts: e.attempts, LastHeight: e.lastHeight, LastPeer: e.lastPeer})
		}
	}
	return out
}

// len counts the transactions of the set, reservations included.
func (s *rebroadcastSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// rebroadcastLoop follows the node's events until it stops: a block's
// transactions confirm or conflict pending ones, and each block applied
// at the tip makes a pass (rebroadcastPass). sub is subscribed before
// the manager starts, so no block is missed.
func (n *Node) rebroadcastLoop(ctx context.Context, sub *Subscription) {
	defer sub.Cancel()
	var dropped []RebroadcastDrop
	for {
		select {
		case <-n.quit:
			return
		case ev, ok := <-sub.Events():
			if !ok {
				return
			}
			switch e := ev.(type) {
			case MatchedTx:
				for _, d := range n.rebc.observe(e) {
					n.log.Info("rebroadcast: dropped", "txid", d.Txid, "reason", d.Reason)
					dropped = append(dropped, d)
				}
			case BlockProcessed:
				if e.Again || e.Height < e.PeerHeight {
					continue
				}
				n.rebroadcastPass(ctx, e, dropped)
				dropped = nil
			}
		}
	}
}

// rebroadcastPass sends again, one after the other, the transactions due
// at block b, and publishes the pass.
func (n *Node) rebroadcastPass(ctx context.Context, b BlockProcessed, dropped []RebroadcastDrop) {
	jobs, stale := n.rebc.due(b.Height, n.clock.Now())
	for _, d := range stale {
		n.log.Info("rebroadcast: dropped", "txid", d.Txid, "reason", d.Reason)
	}
	pass := RebroadcastPass{Height: b.Height, Hash: b.Hash, Dropped: append(dropped, stale...)}
	for _, j := range jobs {
		if ctx.Err() != nil {
			return
		}
		peer, err := n.rebroadcast(ctx, j)
		attempt := n.rebc.sent(j.txid, peer, b.Height, n.clock.Now())
		rs := RebroadcastSend{Txid: j.txid, Peer: peer, Attempt: attempt}
		if err != nil {
			rs.Err = err.Error()
			n.log.Info("rebroadcast: not sent", "txid", j.txid, "height", b.Height, "attempt", attempt, "err", err)
		} else {
			n.log.Info("rebroadcast: sent again over a fresh connection", "txid", j.txid, "peer", peer, "height", b.Height, "attempt", attempt)
		}
		pass.Sent = append(pass.Sent, rs)
	}
	pass.At = n.at()
	pass.Pending = len(n.rebc.snapshot())
	n.publish(pass)
}

// rebroadcast sends j's transaction once more, as Broadcast does, to a
// target other than the last one when there is one; it returns the
// target that took it. A target that asked for it and relays nothing
// back within rebroadcastTimeout counts as sent.
func (n *Node) rebroadcast(ctx context.Context, j rebroadcastJob) (string, error) {
	st := n.Status()
	if st.Stopped {
		return "", ErrStopped
	}
	targets, skipped, err := n.broadcastTargets(st, j.to, j.need)
	if err != nil {
		return "", err
	}
	// The last target goes last: it may be the one that dropped it.
	slices.SortStableFunc(targets, func(a, b broadcastCandidate) int {
		return boolCmp(a.addr == j.lastPeer, b.addr == j.lastPeer)
	})
	ctx, cancel := context.WithTimeout(ctx, rebroadcastTimeout)
	defer cancel()
	res, sent, err := n.send(ctx, j.tx, targets, skipped, j.need, st.Peers, true)
	if sent && errors.Is(err, ErrBroadcastUnconfirmed) {
		err = nil
	}
	if !sent {
		return "", err
	}
	return res.SentTo, err
}

// boolCmp orders false before true.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
