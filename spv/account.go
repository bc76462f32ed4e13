package spv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/btcsuite/btcd/wire"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// peerAccount is one peer's account at the connection: every message the
// peer sends passes onRead, every message queued for it passes queue and
// written, and what it makes the node hold is counted against the bounds
// of budgets.go:
//
//   - each message type's rate budget (msgBudgets): a message over it is
//     dropped unhandled and scored (MisbehaviorExcessMessages);
//   - a reject's size (maxRejectPayload): scored MisbehaviorOversizedMessage;
//   - the bytes queued for write (maxWriteQueueBytes), the pongs btcd's
//     peer queues for each ping included: past the bound the peer is
//     disconnected and scored (MisbehaviorWriteQueue);
//   - the bytes read and not yet handled by the manager (maxInboxBytes):
//     past the bound the peer's reader waits for the manager.
//
// A nil account (the manager's tests, which have no connection) accounts
// nothing. onRead and hold run on btcd's input handler only; queue and
// written on any goroutine.
type peerAccount struct {
	n  *Node
	ps *peerState

	// --- input handler only ---
	buckets map[string]*rate.Limiter
	drop    bool  // the message just read is over its budget
	last    int64 // wire bytes of the message just read

	mu      sync.Mutex
	queued  int64          // bytes queued for write, not yet written
	pending map[string]int // messages counted in queued, per command
	peak    int64          // the most queued at once
	over    atomic.Bool    // disconnected for its write queue

	inbox     *semaphore.Weighted
	inboxHeld atomic.Int64
	inboxPeak atomic.Int64
	ctx       context.Context
	cancel    context.CancelFunc
}

// newPeerAccount opens ps's account; ctx ends the waits of its reader
// (close ends them too).
func newPeerAccount(ctx context.Context, n *Node, ps *peerState) *peerAccount {
	a := &peerAccount{
		n: n, ps: ps,
		buckets: make(map[string]*rate.Limiter),
		pending: make(map[string]int),
		inbox:   semaphore.NewWeighted(maxInboxBytes),
	}
	a.ctx, a.cancel = context.WithCancel(ctx)
	return a
}

// close ends the account: a reader waiting for the manager gives up.
func (a *peerAccount) close() {
	if a != nil {
		a.cancel()
	}
}

// unknownCmd names, for the budgets, a message whose command wire does not
// know: it is read and discarded without being held.
const unknownCmd = "(unknown)"

// pongWire is the wire size of a pong: a header and its nonce.
const pongWire = wire.MessageHeaderSize + 8

// onRead accounts one message read from the peer (btcd's OnRead, before
// the message is handled): bytes on the wire, msg nil with err set for a
// message that could not be read. It decides whether the message is
// handled (dropped, below) and counts the pong btcd queues for a ping.
func (a *peerAccount) onRead(bytes int, msg wire.Message, err error) {
	if a == nil {
		return
	}
	a.drop, a.last = false, int64(bytes)
	cmd := unknownCmd
	switch {
	case msg != nil:
		cmd = msg.Command()
	case !errors.Is(err, wire.ErrUnknownMessage):
		return // a read error ends the connection
	}
	if limit, ok := payloadCap(cmd); ok && bytes > int(limit)+wire.MessageHeaderSize {
		a.drop = true
		a.score(MisbehaviorOversizedMessage, fmt.Sprintf("%s of %d bytes (budget %d)", cmd, bytes, limit))
		a.ps.p.Disconnect()
		return
	}
	if !a.allow(cmd) {
		a.drop = true
		a.score(MisbehaviorExcessMessages, fmt.Sprintf("%s over its budget (%g a second, burst %d)", cmd, budgetFor(cmd).Rate, budgetFor(cmd).Burst))
	}
	if cmd == wire.CmdPing && a.ps.p.ProtocolVersion() > wire.BIP0031Version {
		a.queueBytes(wire.CmdPong, pongWire) // btcd queues it whatever we do
	}
}

// allow takes a token from cmd's bucket.
func (a *peerAccount) allow(cmd string) bool {
	l := a.buckets[cmd]
	if l == nil {
		b := budgetFor(cmd)
		lim := rate.Limit(b.Rate)
		if math.IsInf(b.Rate, 1) {
			lim = rate.Inf
		}
		l = rate.NewLimiter(lim, b.Burst)
		a.buckets[cmd] = l
	}
	return l.AllowN(a.n.clock.Now(), 1)
}

// dropped reports whether the message just read is to be dropped
// unhandled (its listener asks).
func (a *peerAccount) dropped() bool { return a != nil && a.drop }

// hold counts the message just read as held until the manager handled it
// (release), waiting while the peer holds maxInboxBytes. It returns the
// bytes to release, and false when the peer or the node ended meanwhile.
func (a *peerAccount) hold() (int64, bool) {
	if a == nil {
		return 0, true
	}
	n := min(max(a.last, 1), maxInboxBytes)
	if err := a.inbox.Acquire(a.ctx, n); err != nil {
		return 0, false
	}
	held := a.inboxHeld.Add(n)
	if held > a.inboxPeak.Load() {
		a.inboxPeak.Store(held)
	}
	return n, true
}

// release ends the hold of n bytes (the manager handled the message).
func (a *peerAccount) release(n int64) {
	if a == nil || n == 0 {
		return
	}
	a.inboxHeld.Add(-n)
	a.inbox.Release(n)
}

// queue counts msg as queued for write. Past maxWriteQueueBytes the peer
// is disconnected and scored.
func (a *peerAccount) queue(msg wire.Message) {
	if a != nil {
		a.queueBytes(msg.Command(), msgWire(msg))
	}
}

// queueBytes counts a message of cmd and size bytes as queued.
func (a *peerAccount) queueBytes(cmd string, size int64) {
	a.mu.Lock()
	a.queued += size
	a.pending[cmd]++
	a.peak = max(a.peak, a.queued)
	q := a.queued
	a.mu.Unlock()
	if q > maxWriteQueueBytes && a.over.CompareAndSwap(false, true) {
		a.score(MisbehaviorWriteQueue, fmt.Sprintf("%d bytes queued and unread (budget %d)", q, maxWriteQueueBytes))
		a.ps.p.Disconnect()
	}
}

// written ends the count of msg (btcd's OnWrite), if it was counted.
func (a *peerAccount) written(msg wire.Message) {
	if a == nil || msg == nil {
		return
	}
	cmd := msg.Command()
	a.mu.Lock()
	counted := a.pending[cmd] > 0
	if counted {
		a.pending[cmd]--
	}
	a.mu.Unlock()
	if !counted {
		return // btcd's own (version, verack, its pings)
	}
	size := int64(pongWire)
	if cmd != wire.CmdPong {
		size = msgWire(msg)
	}
	a.mu.Lock()
	a.queued -= size
	a.mu.Unlock()
}

// held returns the bytes the peer makes the node hold at the connection
// now: queued for write and read but not yet handled.
func (a *peerAccount) held() int64 {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	q := a.queued
	a.mu.Unlock()
	return q + a.inboxHeld.Load()
}

// peaks returns the most bytes queued for write, and read but not yet
// handled, at any one time.
func (a *peerAccount) peaks() (queued, inbox int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.peak, a.inboxPeak.Load()
}

// score adds a violation to the peer's ban score from the connection's
// goroutines; at the threshold the peer is banned and disconnected.
func (a *peerAccount) score(kind Misbehavior, detail string) {
	a.n.scorePeer(a.ps, kind, detail)
}

// scorePeer scores a violation found outside the manager (the peer's
// account): the manager's misbehave without its bookkeeping, which the
// disconnect brings (peerDoneMsg).
func (n *Node) scorePeer(ps *peerState, kind Misbehavior, detail string) {
	score, ban, banned, err := n.bans.Misbehaving(ps.addr, kind, detail)
	n.log.Warn("peer misbehaved", "addr", ps.addr, "kind", kind.String(), "detail", detail, "score", score)
	if err != nil {
		n.log.Error("save ban list", "err", err)
	}
	if !banned {
		return
	}
	n.publish(PeerBanned{At: n.at(), Addr: ps.addr, Reason: ban.Reason, Score: ban.Score, Until: ban.Until})
	ps.p.Disconnect()
}

// msgWire returns the v1 wire size of msg: its header and payload.
func msgWire(msg wire.Message) int64 {
	var c countWriter
	_ = msg.BtcEncode(&c, wire.ProtocolVersion, wire.WitnessEncoding)
	return int64(wire.MessageHeaderSize) + int64(c)
}

// countWriter counts the bytes written to it.
type countWriter int64

// Write implements io.Writer.
func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// stateBytes estimates the memory the manager holds on ps's behalf: its
// requests in flight, the merkle block whose transactions are arriving,
// the txids it may have matched unseen (drift.go, maxUnknown) and its side
// tips (maxSideTips). The manager's goroutine only.
func (ps *peerState) stateBytes() int64 {
	const entry = 64 // a map or slice entry with its key: a hash and a pointer
	n := int64(len(ps.reqs)+len(ps.txReqs)+len(ps.pings)+len(ps.fullReqs)+len(ps.unknown)+len(ps.sideTips)) * entry
	for _, pb := range []*pendingBlock{ps.cur, ps.after} {
		if pb == nil {
			continue
		}
		n += int64(len(pb.matches)+len(pb.indexes)) * entry
		for _, tx := range pb.txs {
			n += int64(tx.SerializeSize()) + entry
		}
	}
	return n
}
