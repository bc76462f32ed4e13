package spv

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// MinPeerProtocol is the oldest protocol version accepted: BIP111
// (70011), from which a peer must advertise NODE_BLOOM to serve BIP37.
const MinPeerProtocol = wire.BIP0111Version

// stableConnection is how long a connection must last for the reconnect
// backoff to start again from its minimum.
const stableConnection = time.Minute

// peerState is one connection. addr, via and p are set before the peer starts
// and never change; the fields below the line belong to the manager
// goroutine alone.
type peerState struct {
	addr string
	slot int // connection slot: its order in Config.Connect
	// via is the path the connection took, for the transcript's
	// Record.Via: transcript.ViaDirect, ViaProxy or ViaIsolated(id).
	via string
	p   *peer.Peer
	// refused holds the handshake refusal (ErrPeerNoBloom, ErrPeerTooOld).
	refused atomic.Value // error

	// --- manager only ---
	ready     bool
	lastBlock int32
	mirror    *bip37.Filter // the server's filter as far as we know
	filterSeq uint64        // transcript sequence number of its filterload
	loadRate  float64       // its filter's rate at capacity when loaded
	// unknown holds txids the server may have matched under its current
	// filter without the mirror replaying them (drift.go).
	unknown  map[chainhash.Hash]struct{}
	fullReqs map[chainhash.Hash]*fullReq // full-block checks in flight
	// unconnecting counts unsolicited headers messages in a row that did
	// not connect.
	unconnecting int
	filterGen    uint64        // increments with every filterload to this peer
	headersReq   time.Time     // outstanding getheaders (zero: none)
	headersDone  bool          // last headers reply was short: caught up
	reqs         []*blockReq   // outstanding filtered-block requests, in send order
	cur          *pendingBlock // merkle block whose txs are arriving
	after        *pendingBlock // the last merkle block, complete, until the next message that ends its stream
	batch        uint64        // batch counter; a ping nonce names a batch
	pings        map[uint64]uint64
	txReqs       map[chainhash.Hash]*txReq
	lastAnswer   time.Time // last message that answered a request
	mempoolSent  bool
	misbehaved   bool
	// sendHook, when set (tests of the manager), receives the messages
	// instead of the connection.
	sendHook func(wire.Message)
}

// send queues a message to the peer (dropped once it disconnected).
func (ps *peerState) send(msg wire.Message) {
	if ps.sendHook != nil {
		ps.sendHook(msg)
		return
	}
	ps.p.QueueMessage(msg, nil)
}

// busy reports whether the peer owes us an answer.
func (ps *peerState) busy() bool {
	return len(ps.reqs) > 0 || !ps.headersReq.IsZero() || len(ps.txReqs) > 0 || len(ps.pings) > 0 || len(ps.fullReqs) > 0
}

// info returns the peer's public description.
func (ps *peerState) info(n *Node, download bool) PeerInfo {
	p := ps.p
	var ping time.Duration
	if us := p.LastPingMicros(); us > 0 {
		ping = time.Duration(us) * time.Microsecond
	}
	return PeerInfo{
		Addr:          ps.addr,
		UserAgent:     p.UserAgent(),
		Services:      p.Services(),
		Version:       int32(p.ProtocolVersion()),
		StartHeight:   p.StartingHeight(),
		LastBlock:     p.LastBlock(),
		PingTime:      ping,
		BanScore:      n.bans.Score(ps.addr),
		Download:      download,
		BytesReceived: p.BytesReceived(),
	}
}

// peer lifecycle messages for the manager.
type (
	peerReadyMsg struct{ ps *peerState }
	peerDoneMsg  struct{ ps *peerState }
	peerWireMsg  struct {
		ps  *peerState
		msg wire.Message
	}
)

// peerConfig returns the btcd peer configuration whose listeners forward
// every message to the manager.
func (n *Node) peerConfig(ps *peerState) *peer.Config {
	fwd := func(p *peer.Peer, msg wire.Message) { n.post(peerWireMsg{ps: ps, msg: msg}) }
	return &peer.Config{
		NewestBlock: func() (*chainhash.Hash, int32, error) {
			h, height := n.store.Tip()
			return &h, height, nil
		},
		UserAgentName:    n.cfg.UserAgent,
		UserAgentVersion: "0.1",
		ChainParams:      n.cfg.Network.Params,
		Services:         0,
		DisableRelayTx:   true, // BIP37: no tx invs before filterload
		TrickleInterval:  peer.DefaultTrickleInterval,
		Listeners: peer.MessageListeners{
			OnVersion: func(p *peer.Peer, msg *wire.MsgVersion) *wire.MsgReject {
				if err := checkVersion(msg); err != nil {
					ps.refused.Store(err)
					return wire.NewMsgReject(msg.Command(), wire.RejectObsolete, err.Error())
				}
				return nil
			},
			OnVerAck:      func(p *peer.Peer, msg *wire.MsgVerAck) { n.post(peerReadyMsg{ps: ps}) },
			OnHeaders:     func(p *peer.Peer, msg *wire.MsgHeaders) { fwd(p, msg) },
			OnMerkleBlock: func(p *peer.Peer, msg *wire.MsgMerkleBlock) { fwd(p, msg) },
			OnTx:          func(p *peer.Peer, msg *wire.MsgTx) { fwd(p, msg) },
			OnBlock:       func(p *peer.Peer, msg *wire.MsgBlock, _ []byte) { fwd(p, msg) },
			OnInv:         func(p *peer.Peer, msg *wire.MsgInv) { fwd(p, msg) },
			OnNotFound:    func(p *peer.Peer, msg *wire.MsgNotFound) { fwd(p, msg) },
			OnPong:        func(p *peer.Peer, msg *wire.MsgPong) { fwd(p, msg) },
			OnReject:      func(p *peer.Peer, msg *wire.MsgReject) { fwd(p, msg) },
		},
	}
}

// checkVersion refuses peers that cannot serve BIP37.
func checkVersion(msg *wire.MsgVersion) error {
	if uint32(msg.ProtocolVersion) < MinPeerProtocol {
		return fmt.Errorf("%w: version %d < %d", ErrPeerTooOld, msg.ProtocolVersion, MinPeerProtocol)
	}
	if msg.Services&wire.SFNodeBloom == 0 {
		return fmt.Errorf("%w: services %v", ErrPeerNoBloom, msg.Services)
	}
	return nil
}

// connLoop keeps one outbound connection slot filled: it takes an address
// from the address source, connects, waits for the disconnect and retries
// with exponential backoff. It ends with quit.
func (n *Node) connLoop(ctx context.Context, slot int) {
	defer n.wg.Done()
	backoff := n.cfg.RetryMin
	attempt := 0
	for {
		addr, err := n.addrs.next(ctx, slot, attempt)
		attempt++
		if err != nil {
			return // quit
		}
		start := n.clock.Now()
		refused := n.connectOnce(ctx, addr, slot)
		n.addrs.release(addr)
		if ctx.Err() != nil {
			return
		}
		wait := backoff
		switch {
		case refused:
			wait = n.cfg.RetryMax
		case n.clock.Now().Sub(start) >= stableConnection:
			backoff = n.cfg.RetryMin
			wait = backoff
		default:
			backoff = min(backoff*2, n.cfg.RetryMax)
		}
		select {
		case <-ctx.Done():
			return
		case <-n.clock.TickAfter(wait):
		}
	}
}

// connectOnce dials addr, runs the peer until it disconnects and reports
// whether the peer was refused at the handshake.
func (n *Node) connectOnce(ctx context.Context, addr string, slot int) (refused bool) {
	if ban, ok := n.bans.IsBanned(addr); ok {
		n.log.Debug("skip banned peer", "addr", addr, "until", ban.Until)
		return true
	}
	dctx, cancel := context.WithTimeout(ctx, n.cfg.DialTimeout)
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", addr)
	cancel()
	if err != nil {
		n.log.Debug("dial failed", "addr", addr, "err", err)
		return false
	}
	ps := &peerState{addr: addr, slot: slot}
	p, err := peer.NewOutboundPeer(n.peerConfig(ps), addr)
	if err != nil {
		_ = conn.Close()
		n.log.Warn("bad peer address", "addr", addr, "err", err)
		return true
	}
	ps.p = p
	if !n.trackPeer(ps) {
		_ = conn.Close()
		return false
	}
	p.AssociateConnection(conn)
	p.WaitForDisconnect()
	n.untrackPeer(ps)
	n.post(peerDoneMsg{ps: ps})
	if v := ps.refused.Load(); v != nil {
		n.log.Info("peer refused", "addr", addr, "err", v)
		n.publish(PeerDisconnected{At: n.at(), Addr: addr, Reason: fmt.Sprint(v)})
		return true
	}
	return false
}

// trackPeer registers a live connection so Stop can disconnect it; it
// fails once the node is stopping.
func (n *Node) trackPeer(ps *peerState) bool {
	n.liveMu.Lock()
	defer n.liveMu.Unlock()
	if n.stopping {
		return false
	}
	n.live[ps] = struct{}{}
	return true
}

// untrackPeer forgets a connection that ended, adding its byte count to
// the total.
func (n *Node) untrackPeer(ps *peerState) {
	n.liveMu.Lock()
	defer n.liveMu.Unlock()
	delete(n.live, ps)
	n.bytesGone += ps.p.BytesReceived()
}

// disconnectAll disconnects every live peer (Stop).
func (n *Node) disconnectAll() {
	n.liveMu.Lock()
	n.stopping = true
	peers := make([]*peer.Peer, 0, len(n.live))
	for ps := range n.live {
		peers = append(peers, ps.p)
	}
	n.liveMu.Unlock()
	for _, p := range peers {
		p.Disconnect()
	}
}

// addrSource hands addresses to connection slots: the explicit list, or
// addresses resolved from DNS seeds. An address is used by one slot at a
// time.
type addrSource struct {
	n     *Node
	slots int // connection slots (for the rotation over fixed)
	mu    sync.Mutex
	fixed []string
	pool  []string
	inUse map[string]bool
}

// next returns an address for a slot's attempt-th connection: with
// explicit peers, slot i of k dials Connect[i], Connect[i+k], ... in turn
// (disjoint per slot, so a dead or banned peer is replaced by a spare one
// when there are more addresses than slots); with seeds, any unused,
// unbanned resolved address. It blocks (retrying the seeds) until one is
// available or ctx ends.
func (a *addrSource) next(ctx context.Context, slot, attempt int) (string, error) {
	if len(a.fixed) > 0 {
		return a.fixed[fixedIndex(len(a.fixed), a.slots, slot, attempt)], ctx.Err()
	}
	wait := a.n.cfg.RetryMin
	for {
		if addr, ok := a.pick(); ok {
			return addr, nil
		}
		a.resolve(ctx)
		if addr, ok := a.pick(); ok {
			return addr, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-a.n.clock.TickAfter(wait):
		}
		wait = min(wait*2, a.n.cfg.RetryMax)
	}
}

// pick takes an unused, unbanned address from the pool.
func (a *addrSource) pick() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, addr := range a.pool {
		if a.inUse[addr] {
			continue
		}
		if _, banned := a.n.bans.IsBanned(addr); banned {
			continue
		}
		a.inUse[addr] = true
		a.pool = append(a.pool[:i:i], a.pool[i+1:]...)
		return addr, true
	}
	return "", false
}

// release returns addr to the pool after its connection ended.
func (a *addrSource) release(addr string) {
	if len(a.fixed) > 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.inUse, addr)
	a.pool = append(a.pool, addr)
}

// resolve asks the network's DNS seeds for NODE_BLOOM peers.
func (a *addrSource) resolve(ctx context.Context) {
	net := a.n.cfg.Network
	for _, seed := range net.Seeds {
		host := seedQuery(seed, net)
		rctx, cancel := context.WithTimeout(ctx, a.n.cfg.DialTimeout)
		ips, err := (&netResolver{}).lookup(rctx, host)
		cancel()
		if err != nil {
			a.n.log.Debug("seed lookup failed", "seed", host, "err", err)
			continue
		}
		a.mu.Lock()
		known := make(map[string]bool, len(a.pool))
		for _, addr := range a.pool {
			known[addr] = true
		}
		for _, ip := range ips {
			addr := joinHostPort(ip, net.DefaultPort)
			if !known[addr] && !a.inUse[addr] {
				a.pool = append(a.pool, addr)
				known[addr] = true
			}
		}
		a.mu.Unlock()
	}
}

// fixedIndex returns the index in a list of n explicit addresses that slot
// (of slots) dials at its attempt-th connection: slot, slot+slots, ...
// wrapping within the slot's own share.
func fixedIndex(n, slots, slot, attempt int) int {
	if slots <= 0 || slots >= n {
		return slot % n
	}
	share := (n - slot + slots - 1) / slots // indexes slot, slot+slots, ... < n
	return slot + (attempt%share)*slots
}

// dedupe returns addrs without repeats, in order.
func dedupe(addrs []string) []string {
	seen := make(map[string]bool, len(addrs))
	var out []string
	for _, a := range addrs {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}
