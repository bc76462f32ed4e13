package spv

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/internal/peertext"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// minPeerProtocol is the oldest protocol version accepted: BIP111
// (70011), from which a peer must advertise NODE_BLOOM to serve BIP37.
const minPeerProtocol = wire.BIP0111Version

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
	// transport is the connection's transport (transcript.TransportV1 or
	// TransportV2); wc its wire (byte counts, the v2 handshake's garbage
	// held back, writes gathered per message).
	transport wireTransport
	wc        *wireConn
	// acct is the peer's account at the connection (account.go): nil
	// without a connection (tests of the manager).
	acct *peerAccount
	// refused holds the handshake refusal (ErrPeerNoBloom, ErrPeerTooOld).
	refused atomic.Value // error
	// handshook is set at the verack: the handshake completed.
	handshook atomic.Bool
	// upgrade is set when a v1 peer's version advertised NODE_P2P_V2
	// under TransportAuto: the connection ends at the verack, before any
	// filter, and the peer is reached again over v2.
	upgrade atomic.Bool

	// --- manager only ---
	ready     bool
	lastBlock int32
	mirror    *bip37.Filter // the server's filter as far as we know
	// rules are the server's relevance rules, which the mirror applies
	// (bip37.RulesFor its user agent: btcd tests empty pushes, Core and
	// bcoin do not).
	rules     bip37.Rules
	filterSeq uint64  // transcript sequence number of its filterload
	loadRate  float64 // its filter's rate at capacity when loaded
	// unmatchedRelays counts announced txs its filter did not match.
	unmatchedRelays int
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
	// lastAnswer is when the peer last made progress on the data it owes
	// (owesData): a merkleblock, tx, block or notfound answering a
	// request, or the pong closing a batch; or when it began to owe
	// some. Other messages (an unsolicited headers or inv, a notfound
	// for nothing asked) never move it. A getheaders is timed from
	// headersReq.
	lastAnswer  time.Time
	mempoolSent bool
	// mempoolScore is the ban score the server's mempool requests
	// gave us as of mempoolAt (see mempoolAllowed).
	mempoolScore float64
	mempoolAt    time.Time
	misbehaved   bool
	// fence is the nonce of the ping sent right after the outstanding
	// getheaders (0: none): its pong with no headers before it means
	// the peer gave nothing (headersync.go, onFencePong).
	fence uint64
	// claimed is the height the peer claims to have once claimSet (the
	// end of its chain in its last short headers reply); before that,
	// its version's start height (p.LastBlock()).
	claimed  int32
	claimSet bool
	// announced is the last block the peer announced by inv while the
	// header store did not know it (zero: none).
	announced chainhash.Hash
	// sideTips are the tips of the side branches the peer got stored
	// that have not become best (headersync.go, noteSideBranch).
	sideTips []chainhash.Hash
	// opsHeld is how many outpoints of the element set's log its filter
	// is known to hold (checkers.go, holdsOutpoints).
	opsHeld int
	// lagSince is when the peer, claiming more than our tip, gave no
	// headers (zero: not lagging); lagRetry is when it is asked again.
	lagSince, lagRetry time.Time
	// sendHook, when set (tests of the manager), receives the messages
	// instead of the connection.
	sendHook func(wire.Message)
	// cf is the peer's compact-filter state (cfsync.go); nil over BIP37.
	cf *cfPeer
}

// send queues a message to the peer (dropped once it disconnected).
func (ps *peerState) send(msg wire.Message) {
	if ps.sendHook != nil {
		ps.sendHook(msg)
		return
	}
	ps.acct.queue(msg)
	ps.p.QueueMessage(msg, nil)
}

// busy reports whether the peer owes us an answer.
func (ps *peerState) busy() bool {
	return ps.owesData() || !ps.headersReq.IsZero()
}

// owesData reports whether the peer owes us blocks, transactions or a
// batch's pong.
func (ps *peerState) owesData() bool {
	return len(ps.reqs) > 0 || len(ps.txReqs) > 0 || len(ps.pings) > 0 || len(ps.fullReqs) > 0 || ps.cf.owes()
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
		LastBlock:     max(p.LastBlock(), ps.lastBlock),
		PingTime:      ping,
		BanScore:      n.bans.Score(ps.addr),
		Download:      download,
		Lagging:       !ps.lagSince.IsZero(),
		BytesReceived: p.BytesReceived(),
		Transport:     ps.transport,
		WireSent:      ps.wireSent(),
		WireReceived:  ps.wireReceived(),
	}
}

// wireSent and wireReceived are the bytes sent and received on the
// network (what an on-path observer counts), 0 without a connection.
func (ps *peerState) wireSent() uint64 {
	if ps.wc == nil {
		return 0
	}
	return ps.wc.sent()
}

// wireReceived: see wireSent.
func (ps *peerState) wireReceived() uint64 {
	if ps.wc == nil {
		return 0
	}
	return ps.wc.received()
}

// peer lifecycle messages for the manager.
type (
	peerReadyMsg struct{ ps *peerState }
	peerDoneMsg  struct{ ps *peerState }
	peerWireMsg  struct {
		ps  *peerState
		msg wire.Message
		// held is what the peer's account holds for the message until
		// the manager handled it (peerAccount.release).
		held int64
	}
)

// peerConfig returns the btcd peer configuration whose listeners forward
// every message to the manager.
func (n *Node) peerConfig(ps *peerState) *peer.Config {
	fwd := func(p *peer.Peer, msg wire.Message) {
		if ps.acct.dropped() {
			return // over its budget: scored by the account
		}
		held, ok := ps.acct.hold()
		if !ok {
			return // the peer or the node ended while it waited
		}
		n.post(peerWireMsg{ps: ps, msg: msg, held: held})
	}
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
		// btcd's stall handler expects an inv within 30 s of a mempool
		// request and headers within 90 s of a getheaders, and
		// disconnects otherwise: a synced node was dropped every 45 s
		// by btcd and bcoin. The manager's own stall detection covers
		// every request it makes (onTick, busy).
		DisableStallHandler: true,
		Listeners: peer.MessageListeners{
			OnVersion: func(p *peer.Peer, msg *wire.MsgVersion) *wire.MsgReject {
				if err := n.checkPeerVersion(msg); err != nil {
					ps.refused.Store(err)
					return wire.NewMsgReject(msg.Command(), wire.RejectObsolete, err.Error())
				}
				n.transports.learn(ps.addr, msg.Services)
				if ps.transport == transcript.TransportV1 && msg.Services&wire.SFNodeP2PV2 != 0 &&
					n.transports.upgradable(n.cfg.Transport, ps.addr) {
					ps.upgrade.Store(true)
				}
				return nil
			},
			OnVerAck: func(p *peer.Peer, msg *wire.MsgVerAck) {
				if ps.wc != nil {
					_ = ps.wc.SetDeadline(time.Time{})
				}
				if ps.upgrade.Load() {
					p.Disconnect() // before any filter: reached again over v2
					return
				}
				ps.handshook.Store(true)
				n.post(peerReadyMsg{ps: ps})
			},
			OnWrite: func(p *peer.Peer, bytes int, msg wire.Message, err error) {
				ps.acct.written(msg)
				n.onWrite(ps, p, bytes, msg, err)
			},
			OnRead: func(p *peer.Peer, bytes int, msg wire.Message, err error) {
				ps.acct.onRead(bytes, msg, err)
				// A malformed message ends the connection on every
				// network: btcd's peer package forgives it from
				// 127.0.0.1 on regtest (isAllowedReadError), which
				// would make a local test peer unlike a real one.
				var me *wire.MessageError
				if errors.As(err, &me) {
					n.log.Warn("malformed message: disconnecting", "peer", ps.addr, "err", err)
					p.Disconnect()
				}
				n.onRead(ps, bytes, msg, err)
				// btcd's peer package (v0.25.0) declares OnCFCheckpt
				// but never calls it: a cfcheckpt reaches the manager
				// from here, through the same account as every other
				// message.
				if cp, ok := msg.(*wire.MsgCFCheckpt); ok && err == nil {
					fwd(p, cp)
				}
			},
			OnHeaders:     func(p *peer.Peer, msg *wire.MsgHeaders) { fwd(p, msg) },
			OnMerkleBlock: func(p *peer.Peer, msg *wire.MsgMerkleBlock) { fwd(p, msg) },
			OnTx:          func(p *peer.Peer, msg *wire.MsgTx) { fwd(p, msg) },
			OnBlock:       func(p *peer.Peer, msg *wire.MsgBlock, _ []byte) { fwd(p, msg) },
			OnInv:         func(p *peer.Peer, msg *wire.MsgInv) { fwd(p, msg) },
			OnNotFound:    func(p *peer.Peer, msg *wire.MsgNotFound) { fwd(p, msg) },
			OnPong:        func(p *peer.Peer, msg *wire.MsgPong) { fwd(p, msg) },
			OnReject:      func(p *peer.Peer, msg *wire.MsgReject) { fwd(p, msg) },
			OnCFHeaders:   func(p *peer.Peer, msg *wire.MsgCFHeaders) { fwd(p, msg) },
			OnCFilter:     func(p *peer.Peer, msg *wire.MsgCFilter) { fwd(p, msg) },
		},
	}
}

// checkVersion refuses peers that cannot serve BIP37.
func checkVersion(msg *wire.MsgVersion) error {
	if uint32(msg.ProtocolVersion) < minPeerProtocol {
		return fmt.Errorf("%w: version %d < %d", ErrPeerTooOld, msg.ProtocolVersion, minPeerProtocol)
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
	backoff := n.cfg.Tuning.RetryMin
	attempt := 0
	for {
		addr, err := n.addrs.next(ctx, slot, attempt)
		attempt++
		if err != nil {
			return // quit
		}
		start := n.clock.Now()
		out := n.connectOnce(ctx, addr, slot)
		n.addrs.release(addr, out == connEnded)
		if ctx.Err() != nil {
			return
		}
		wait := backoff
		switch {
		case out == connRefused:
			wait = n.cfg.Tuning.RetryMax
		case n.clock.Now().Sub(start) >= stableConnection:
			backoff = n.cfg.Tuning.RetryMin
			wait = backoff
		default:
			backoff = min(backoff*2, n.cfg.Tuning.RetryMax)
		}
		select {
		case <-ctx.Done():
			return
		case <-n.clock.TickAfter(wait):
		}
	}
}

// connOutcome is how one connection attempt ended.
type connOutcome int

const (
	// connFailed: no connection (dial, proxy or SOCKS5 failure).
	connFailed connOutcome = iota
	// connRefused: the address is banned, or the peer was refused at
	// the handshake (no NODE_BLOOM, too old) or its address is bad.
	connRefused
	// connEnded: the peer connected and later disconnected.
	connEnded
	// connRekey: a v2 connection closed before its key was sent
	// (v1Stalls); connectOnce connects again at once.
	connRekey
)

// connectOnce connects to addr over the transport the policy and what
// the node learned give it (transportMemory.first), runs the peer until it
// disconnects and reports how the attempt ended. A v2 attempt that shows
// a v1 peer is followed at once by a v1 one under TransportAuto, and a v1
// connection left for v2 (its version advertised NODE_P2P_V2) by a v2
// one: at most two connections per attempt. A v2 connection closed
// before its key went out, because the key would stall a btcd v1 peer
// (v1Stalls), is made again at once with a new key, up to maxRekeys
// times, and does not count.
func (n *Node) connectOnce(ctx context.Context, addr string, slot int) connOutcome {
	if ban, ok := n.bans.IsBanned(addr); ok {
		n.log.Debug("skip banned peer", "addr", addr, "until", ban.Until)
		return connRefused
	}
	t := n.transports.first(n.cfg.Transport, addr)
	for try, rekeys := 0, 0; ; {
		out, next := n.connectVia(ctx, addr, slot, t, rekeys < maxRekeys)
		if out == connRekey && ctx.Err() == nil {
			rekeys++
			continue
		}
		if out == connRekey {
			return connFailed // ctx ended
		}
		if next == "" || try > 0 || ctx.Err() != nil {
			return out
		}
		t = next
		try++
	}
}

// maxRekeys bounds the new keys one connection attempt draws for keys that
// would stall a btcd v1 peer (1 in 128 each): the one after is sent as it
// is.
const maxRekeys = 3

// connectVia makes one connection to addr over transport t and reports
// how it ended, and the transport to try at once when the handshake
// showed another one is due ("" for none). With rekey, a v2 key that would stall a btcd v1 peer is not sent
// (wireConn.rekey): the outcome is then connRekey.
func (n *Node) connectVia(ctx context.Context, addr string, slot int, t wireTransport, rekey bool) (connOutcome, wireTransport) {
	dctx, cancel := context.WithTimeout(ctx, n.cfg.Tuning.DialTimeout)
	conn, via, err := n.dial.dial(dctx, addr)
	cancel()
	if err != nil {
		var reply *ProxyReplyError
		if errors.Is(err, ErrProxy) && !(errors.As(err, &reply) && reply.DestinationFault()) && ctx.Err() == nil {
			n.log.Warn("proxy failed", "addr", addr, "proxy", n.cfg.Proxy, "err", err)
		} else {
			n.log.Debug("dial failed", "addr", addr, "err", err)
		}
		return connFailed, ""
	}
	v2 := t == transcript.TransportV2
	wc := newWireConn(conn, n.cfg.Network.Params.Net, v2)
	wc.rekey = rekey
	wc.tap = n.outboundTap(addr, t)
	ps := &peerState{addr: addr, slot: slot, via: via, transport: t, wc: wc}
	ps.acct = newPeerAccount(ctx, n, ps)
	defer ps.acct.close()
	wc.oversize = func(cmd string, length uint32) {
		ps.acct.score(misbehaviorOversizedMessage, fmt.Sprintf("%s of %d bytes announced", peertext.Clean(cmd, 16), length))
	}
	pcfg := n.peerConfig(ps)
	pcfg.HostToNetAddress = hostToNetAddress
	if v2 {
		// btcd's peer speaks v2 only when its own services say so.
		pcfg.UsingV2Conn = true
		pcfg.Services |= wire.SFNodeP2PV2
	}
	p, err := peer.NewOutboundPeer(pcfg, addr)
	if err != nil {
		_ = conn.Close()
		n.log.Warn("bad peer address", "addr", addr, "err", err)
		return connRefused, ""
	}
	ps.p = p
	if !n.trackPeer(ps) {
		_ = conn.Close()
		return connFailed, ""
	}
	n.log.Debug("connected", "addr", addr, "via", via, "transport", t)
	// The whole handshake (v2 key exchange, version, verack) must end
	// within HandshakeTimeout: a peer that stalls it costs no more.
	_ = wc.SetDeadline(time.Now().Add(n.cfg.Tuning.HandshakeTimeout))
	p.AssociateConnection(wc)
	p.WaitForDisconnect()
	n.untrackPeer(ps)
	n.post(peerDoneMsg{ps: ps})
	if v := ps.refused.Load(); v != nil {
		n.log.Info("peer refused", "addr", addr, "err", v)
		n.publish(PeerDisconnected{At: n.at(), Addr: addr, Reason: fmt.Sprint(v)})
		return connRefused, ""
	}
	switch {
	case wc.keyRefused():
		n.log.Debug("v2 key would stall a btcd v1 peer: connecting again with a new key", "addr", addr)
		return connRekey, ""
	case ps.upgrade.Load():
		n.log.Info("peer offers v2 (NODE_P2P_V2): reconnecting over v2 before sending a filter", "addr", addr)
		return connEnded, transcript.TransportV2
	case v2 && !ps.handshook.Load():
		return n.v2Failed(addr, wc)
	}
	return connEnded, ""
}

// v2Failed judges a v2 connection that ended before its handshake did. A
// peer that sent nothing (it hung up or stayed silent after our key) or
// answered in v1 speaks only v1 (Bitcoin Core's ShouldReconnectV1, plus
// the v1 answer): under TransportAuto it is reached again over v1 at
// once, under TransportV2 it is refused. Any other failure (garbage, a
// key that derives other secrets, a packet that does not decrypt) is a
// broken v2 peer, not retried over v1: it costs a failed attempt.
func (n *Node) v2Failed(addr string, wc *wireConn) (connOutcome, wireTransport) {
	if !wc.answeredV1() && wc.received() > 0 {
		n.log.Warn("v2 handshake failed", "addr", addr, "err", ErrV2Handshake, "received", wc.received())
		n.publish(PeerDisconnected{At: n.at(), Addr: addr, Reason: ErrV2Handshake.Error()})
		return connFailed, ""
	}
	n.transports.plaintext(addr)
	how := "sent nothing"
	if wc.answeredV1() {
		how = "answered in v1"
	}
	if n.cfg.Transport == TransportV2 {
		n.log.Warn("peer refused", "addr", addr, "err", ErrPeerPlaintext, "v2_handshake", how)
		n.publish(PeerDisconnected{At: n.at(), Addr: addr, Reason: ErrPeerPlaintext.Error()})
		return connRefused, ""
	}
	n.log.Info("peer speaks only v1: reconnecting over v1", "addr", addr, "v2_handshake", how)
	return connFailed, transcript.TransportV1
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
// addresses learned from DNS seeds (by DNS, or through the proxy from the
// node at each seed's name). An address is used by one slot at a time.
type addrSource struct {
	n     *Node
	slots int // connection slots (for the rotation over fixed)
	// sem is held by the slot asking the seeds: one at a time, the
	// others wait for its answer.
	sem   chan struct{}
	mu    sync.Mutex
	fixed []string
	pool  []string
	inUse map[string]bool
}

// newAddrSource returns the address source of n for slots connection
// slots: n.cfg.Connect, or the seeds when it is empty.
func newAddrSource(n *Node, slots int) *addrSource {
	return &addrSource{n: n, fixed: n.cfg.Connect, slots: slots,
		sem: make(chan struct{}, 1), inUse: make(map[string]bool)}
}

// next returns an address for a slot's attempt-th connection: with
// explicit peers, slot i of k dials Connect[i], Connect[i+k], ... in turn
// (disjoint per slot, so a dead or banned peer is replaced by a spare one
// when there are more addresses than slots); with seeds, any unused,
// unbanned learned address. It blocks (asking the seeds again, with
// backoff) until one is available or ctx ends.
func (a *addrSource) next(ctx context.Context, slot, attempt int) (string, error) {
	if len(a.fixed) > 0 {
		return a.fixed[fixedIndex(len(a.fixed), a.slots, slot, attempt)], ctx.Err()
	}
	wait := a.n.cfg.Tuning.RetryMin
	for {
		if addr, ok := a.pick(); ok {
			return addr, nil
		}
		if err := a.refill(ctx); err != nil {
			return "", err
		}
		if addr, ok := a.pick(); ok {
			return addr, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-a.n.clock.TickAfter(wait):
		}
		wait = min(wait*2, a.n.cfg.Tuning.RetryMax)
	}
}

// pick takes an unused, unbanned address from the pool, at random (the
// pool mixes the answers of several seeds), from a network group no
// address in use has when there is one (Bitcoin Core keeps one outbound
// connection per netgroup: many addresses of one /16 cannot take every
// slot; netGroup in checkers.go).
func (a *addrSource) pick() (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	used := make(map[string]bool, len(a.inUse))
	for addr := range a.inUse {
		used[netGroup(addr)] = true
	}
	var eligible, fresh []int
	for i, addr := range a.pool {
		if _, banned := a.n.bans.IsBanned(addr); !banned && !a.inUse[addr] {
			eligible = append(eligible, i)
			if !used[netGroup(addr)] {
				fresh = append(fresh, i)
			}
		}
	}
	if len(fresh) > 0 {
		eligible = fresh
	}
	if len(eligible) == 0 {
		return "", false
	}
	i := eligible[mrand.IntN(len(eligible))]
	addr := a.pool[i]
	a.inUse[addr] = true
	a.pool = append(a.pool[:i:i], a.pool[i+1:]...)
	return addr, true
}

// available reports whether pick would find an address.
func (a *addrSource) available() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, addr := range a.pool {
		if _, banned := a.n.bans.IsBanned(addr); !banned && !a.inUse[addr] {
			return true
		}
	}
	return false
}

// release ends addr's use by its slot. With seeds, an address whose peer
// connected and later disconnected (keep) goes back to the pool; one that
// could not be reached or was refused is dropped, and the seeds are asked
// again once the pool is empty.
func (a *addrSource) release(addr string, keep bool) {
	if len(a.fixed) > 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.inUse, addr)
	if keep {
		a.pool = append(a.pool, addr)
	}
}

// refill asks the seeds for addresses, unless another slot's request
// filled the pool while this one waited for its turn. It returns ctx's
// error when ctx ended.
func (a *addrSource) refill(ctx context.Context) error {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-a.sem }()
	if !a.available() {
		a.resolve(ctx)
	}
	return ctx.Err()
}

// seedsPerRound is how many DNS seeds that answered end a round of
// questions (Bitcoin Core's DNSSEEDS_TO_QUERY_AT_ONCE): peers from several
// seeds, so no single seed operator picks them all, without telling every
// seed that this client is starting.
const seedsPerRound = 3

// resolve asks the network's DNS seeds, in random order, for NODE_BLOOM
// peers until seedsPerRound of them answered: by DNS (lookupSeed: the x5
// subdomain, then the plain name) or, with a proxy, by an address fetch
// from the node at each seed's name (fetchSeed: no local lookup). A seed
// that gives nothing is logged; so is a round in which none did.
func (a *addrSource) resolve(ctx context.Context) {
	seeds := append([]chaincfg.DNSSeed(nil), a.n.cfg.Network.Seeds...)
	mrand.Shuffle(len(seeds), func(i, j int) { seeds[i], seeds[j] = seeds[j], seeds[i] })
	added, answered := 0, 0
	for _, seed := range seeds {
		var addrs []string
		var err error
		if a.n.dial.proxied() {
			addrs, err = a.fetchSeed(ctx, seed)
		} else {
			addrs, err = a.lookupSeed(ctx, seed)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			a.n.log.Warn("DNS seed gave no peer", "seed", seed.Host, "err", err)
			continue
		}
		added += a.add(addrs)
		if answered++; answered >= seedsPerRound {
			break
		}
	}
	if added == 0 {
		a.n.log.Warn("no new peer address from the DNS seeds; asking again later", "seeds", len(seeds), "proxy", a.n.cfg.Proxy)
	}
}

// fetchSeed learns peers from seed through the proxy: an address fetch
// (addrFetch) from the node that the proxy reaches at the seed's name
// and the network's port. Nothing is resolved locally.
func (a *addrSource) fetchSeed(ctx context.Context, seed chaincfg.DNSSeed) ([]string, error) {
	hostport := net.JoinHostPort(seed.Host, a.n.cfg.Network.DefaultPort)
	fctx, cancel := context.WithTimeout(ctx, a.n.cfg.Tuning.SeedTimeout)
	defer cancel()
	addrs, via, err := a.n.addrFetch(fctx, hostport)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: address fetch through the proxy: %w", ErrSeedEmpty, seed.Host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: %s: the node at %s (via %s) announced no usable address", ErrSeedEmpty, seed.Host, hostport, via)
	}
	a.n.log.Debug("addresses from a DNS seed's node", "seed", seed.Host, "addrs", len(addrs), "via", via)
	return addrs, nil
}

// add puts new addresses in the pool and returns how many were new.
func (a *addrSource) add(addrs []string) (added int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	known := make(map[string]bool, len(a.pool))
	for _, addr := range a.pool {
		known[addr] = true
	}
	for _, addr := range addrs {
		if !known[addr] && !a.inUse[addr] {
			a.pool = append(a.pool, addr)
			known[addr] = true
			added++
		}
	}
	return added
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

// btcd scores every BIP35 mempool request 33 transient ban points, which
// decay with a half-life of a minute, and bans at 100 (server.go OnMemPool,
// connmgr.DynamicBanScore): four requests in a few seconds (a reorg's
// reloads, each asking the mempool again) got the node banned for a day.
const (
	mempoolRequestScore = 33
	mempoolScoreLimit   = 70
	mempoolHalfLife     = time.Minute
)

// mempoolAllowed reports whether a mempool request now keeps the server's
// transient ban score for our mempool requests, as btcd counts it, at
// mempoolScoreLimit or below: two in a row, then one a minute or so.
func (ps *peerState) mempoolAllowed(now time.Time) bool {
	return ps.mempoolDecayed(now)+mempoolRequestScore <= mempoolScoreLimit
}

// noteMempool counts a mempool request sent now.
func (ps *peerState) noteMempool(now time.Time) {
	ps.mempoolScore = ps.mempoolDecayed(now) + mempoolRequestScore
	ps.mempoolAt = now
}

// mempoolDecayed is the score of our earlier mempool requests now.
func (ps *peerState) mempoolDecayed(now time.Time) float64 {
	if ps.mempoolAt.IsZero() {
		return 0
	}
	return ps.mempoolScore * math.Exp2(-float64(now.Sub(ps.mempoolAt))/float64(mempoolHalfLife))
}
