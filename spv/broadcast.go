package spv

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bloomwatch/bloomwatch/internal/peertext"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// Broadcasting a transaction without naming the wallet.
//
// The first node that receives a transaction from a client learns that
// the transaction is the client's: a spy connected to many nodes that
// sees where a transaction appears first links it to an address
// (Biryukov et al., 2014), and a peer that holds the wallet's filter
// would link the transaction to every address of that filter at once. So
// Broadcast sends it over a fresh, short-lived connection: a new
// connection (through the proxy with a SOCKS username of its own, so Tor
// builds it a circuit of its own) that never loads a filter, announces
// nothing of the wallet, and is never the download peer's; it sends an
// inv, answers the getdata for that transaction alone, and hangs up once
// the transaction is confirmed. The peers that hold the wallet's filter
// see the transaction only as every other peer does, by relay: their inv
// is the confirmation that the transaction reached a mempool other than
// the one it was sent to (btcd and Core announce a transaction only once
// it is in their mempool), and the node then fetches it as any relayed
// match, so the watcher shows it pending. The connection follows the
// node's transport policy (Config.Transport): BIP324's encrypted v2 when
// the filter connections would use it, so an on-path observer does not
// read the transaction leaving, with auto's fallback to v1 for a peer
// that speaks only v1.
//
// Without a proxy, a target that is also a filter peer sees both
// connections come from one IP address: give a target that is not
// (BroadcastOptions.To) or use the proxy.
//
// The target must hold the blocks of the transaction's inputs, or it
// takes the transaction for an orphan and relays nothing: Broadcast sends
// only to a peer whose height (the one its version message gives, or a
// filter peer's best block) reaches BroadcastOptions.MinHeight (the
// node's tip by default), and tries the next candidate when the one it
// connected to is below it, before announcing anything to it.
//
// A target that already holds the transaction (an earlier broadcast, or
// another wallet sent it) never asks for it: the broadcast asks it back
// with a getdata after the inv, and a tx in answer, like a reject saying
// it is already known, counts as sent, as Bitcoin Core's
// sendrawtransaction counts a transaction already in its mempool.
//
// What the target sends back is untrusted and budgeted: the whole
// exchange is bounded by BroadcastOptions.Timeout, the bytes read from
// the target by MaxBroadcastBytes, the getdata messages answered by
// maxBroadcastGetData; anything else it sends is ignored.

// Broadcast errors.
var (
	// ErrBroadcastTarget is returned when no peer address other than
	// the download peer's is known to broadcast to.
	ErrBroadcastTarget = errors.New("spv: no peer to broadcast to other than the download peer")
	// ErrBroadcastNotSynced is returned when the node has not synced
	// (its filter peers are not ready to relay the transaction back).
	ErrBroadcastNotSynced = errors.New("spv: node not synced: the filter peers cannot confirm a broadcast yet")
	// ErrTxRejected is returned when the target rejects the transaction
	// (btcd sends a reject message; Core sends none).
	ErrTxRejected = errors.New("spv: transaction rejected")
	// ErrBroadcastUnconfirmed is returned when no peer other than the
	// target relayed the transaction back within the timeout. It was
	// sent (BroadcastResult says to whom when the target asked for it).
	ErrBroadcastUnconfirmed = errors.New("spv: transaction not relayed back by another peer")
	// ErrBroadcastBudget is returned when the target sent more than
	// MaxBroadcastBytes.
	ErrBroadcastBudget = errors.New("spv: broadcast peer over its byte budget")
	// ErrInvalidTx is returned for a transaction btcd's sanity check
	// refuses.
	ErrInvalidTx = errors.New("spv: invalid transaction")
)

// Broadcast budgets and defaults.
const (
	// DefaultBroadcastTimeout bounds a broadcast: connecting, the
	// handshake, the getdata and the relay back from another peer, which
	// btcd trickles every 10 s per hop and Core every 5 s on average to
	// inbound peers.
	DefaultBroadcastTimeout = 90 * time.Second
	// MaxBroadcastBytes bounds what the broadcast target may send:
	// a version, a verack, feefilter, sendheaders, a getdata, pings, an
	// addr of 1,000 addresses (31 kB), rejects: a few tens of kB.
	MaxBroadcastBytes = 256 << 10
	// maxBroadcastGetData is how many getdata for the transaction are
	// answered.
	maxBroadcastGetData = 3
	// maxBroadcastTargets is how many targets one broadcast connects to
	// when the first ones are below MinHeight or cannot be reached.
	maxBroadcastTargets = 4
)

// BroadcastOptions adjusts Broadcast.
type BroadcastOptions struct {
	// To is the peer (host:port) to send to; empty chooses a peer of the
	// node's addresses that is not the download peer, one without a
	// filter connection first.
	To string
	// Timeout bounds the whole broadcast (DefaultBroadcastTimeout).
	Timeout time.Duration
	// MinHeight is the least height a target must have: the height of
	// the newest block holding one of the transaction's inputs. Zero
	// means the node's tip.
	MinHeight int32
	// NoRebroadcast sends the transaction once: the node does not hold
	// it for rebroadcast (rebroadcast.go). A node that stops once the
	// transaction is sent (a standalone broadcast) sets it.
	NoRebroadcast bool
}

// BroadcastResult is what a broadcast did.
type BroadcastResult struct {
	Txid chainhash.Hash `json:"txid"`
	// SentTo is the target; Via the connection's path (transcript's
	// Via values: direct, proxy, or the SOCKS username of its circuit).
	SentTo string `json:"sent_to"`
	Via    string `json:"via"`
	// Transport is the connection's: "v1" or "v2" (BIP324).
	Transport string `json:"transport"`
	// AlsoFilterPeer is set when the target is also one of the node's
	// filter peers (on another connection).
	AlsoFilterPeer bool `json:"also_filter_peer"`
	// ConfirmedBy is the filter peer whose relay (or a block) confirmed
	// the transaction; Mined is set when a block did.
	ConfirmedBy string `json:"confirmed_by"`
	Mined       bool   `json:"mined"`
	// AlreadyKnown is set when the target already held the
	// transaction (it answered the getdata for it, or rejected it as
	// known): sent, as sendrawtransaction counts it.
	AlreadyKnown bool `json:"already_known"`
	// Rebroadcast is set when the node holds the transaction and sends
	// it again on each block that does not confirm it, until its first
	// confirmation (rebroadcast.go); a standalone broadcast, whose node
	// stops once it is sent, never does.
	Rebroadcast bool `json:"rebroadcast"`
	// Skipped lists the targets tried before SentTo and why each was
	// left ("127.0.0.1:18444: at height 5, below 6").
	Skipped []string `json:"skipped,omitempty"`
	// BytesReceived counts what the target sent on the broadcast
	// connection; Elapsed is the whole broadcast.
	BytesReceived uint64        `json:"bytes_received"`
	Elapsed       time.Duration `json:"elapsed_ns"`
}

// Broadcast sends tx to the network without naming the wallet (see the
// comment above) and waits until a peer other than the target relays it
// back or a block confirms it, or the target says it already holds it.
// The node must be synced. On failure the error names every target tried
// and what became of it.
//
// Unless opts.NoRebroadcast, a transaction a target took (it asked for
// it or held it) is held for rebroadcast until its first confirmation
// (rebroadcast.go), a broadcast that timed out waiting for the relay back
// (ErrBroadcastUnconfirmed) included: that target may be the one that
// keeps it to itself. A rejected one, one a block confirmed already and
// one the bounded set has no room for are not (BroadcastResult.Rebroadcast
// says which).
func (n *Node) Broadcast(ctx context.Context, tx *wire.MsgTx, opts BroadcastOptions) (*BroadcastResult, error) {
	if tx == nil {
		return nil, fmt.Errorf("%w: nil", ErrInvalidTx)
	}
	if err := blockchain.CheckTransactionSanity(btcutil.NewTx(tx)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidTx, err)
	}
	st := n.Status()
	if st.Stopped {
		return nil, ErrStopped
	}
	if !st.AtTip || len(st.Peers) == 0 {
		return nil, ErrBroadcastNotSynced
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultBroadcastTimeout
	}
	need := opts.MinHeight
	if need <= 0 {
		_, need = n.store.Tip()
	}
	targets, skipped, err := n.broadcastTargets(st, opts.To, need)
	if err != nil {
		return nil, err
	}
	txid := tx.TxHash()
	keep, created := !opts.NoRebroadcast, false
	if keep {
		if created, err = n.rebc.reserve(tx, need, opts.To); err != nil {
			keep = false
			n.log.Warn("broadcast: sent once, not held for rebroadcast", "txid", txid, "err", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	res, sent, err := n.send(ctx, tx, targets, skipped, need, st.Peers, false)
	if keep {
		// Held from the chain's tip on: the next block sends it again.
		_, tipHeight := n.store.Tip()
		res.Rebroadcast = n.rebc.settle(txid, created, sent && !res.Mined, res.SentTo, tipHeight, n.clock.Now())
	}
	if err != nil {
		n.log.Warn("broadcast failed", "txid", res.Txid, "peer", res.SentTo, "err", err, "rebroadcast", res.Rebroadcast)
		return res, err
	}
	n.log.Info("broadcast confirmed", "txid", res.Txid, "by", res.ConfirmedBy, "mined", res.Mined, "already_known", res.AlreadyKnown,
		"elapsed", res.Elapsed, "rebroadcast", res.Rebroadcast)
	return res, nil
}

// send announces tx over a fresh connection to the first of targets
// that takes it (at most maxBroadcastTargets tried) and waits for the
// relay back from a filter peer of peers until ctx ends. sent reports
// that a target took the transaction (it asked for it) or holds it,
// whatever the error: a wait that ends without a relay
// (ErrBroadcastUnconfirmed) after it was sent. Broadcast and each
// rebroadcast go through it; a rebroadcast (again) logs its steps at
// debug level, its caller logs one line for it.
func (n *Node) send(ctx context.Context, tx *wire.MsgTx, targets []broadcastCandidate, skipped []string, need int32, peers []PeerInfo, again bool) (_ *BroadcastResult, sent bool, _ error) {
	logf := n.log.Info
	if again {
		logf = n.log.Debug
	}
	start := n.clock.Now()
	res := &BroadcastResult{Txid: tx.TxHash(), Skipped: skipped}
	// Subscribe before anything is sent: the relay may come quickly.
	sub := n.Subscribe()
	defer sub.Cancel()

	var bc *broadcastConn
	for i, t := range targets {
		if i == maxBroadcastTargets {
			break
		}
		c, err := n.openBroadcast(ctx, t.addr, tx, need)
		if err == nil {
			bc, res.SentTo, res.AlsoFilterPeer = c, t.addr, t.filter
			break
		}
		res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", t.addr, err))
		logf("broadcast: target left", "peer", t.addr, "err", err)
		if ctx.Err() != nil {
			break
		}
	}
	if bc == nil {
		res.Elapsed = n.clock.Now().Sub(start)
		return res, false, fmt.Errorf("%w at height %d or more: tried %s", ErrBroadcastTarget, need, strings.Join(res.Skipped, "; "))
	}
	defer bc.close()
	res.Via, res.Transport = bc.via, bc.transport
	logf("broadcast: sent inv over a fresh connection", "txid", res.Txid, "peer", res.SentTo, "via", bc.via, "transport", bc.transport, "filter_peer_too", res.AlsoFilterPeer)
	err := bc.await(ctx, sub, res, peers)
	res.BytesReceived = bc.p.BytesReceived()
	res.Elapsed = n.clock.Now().Sub(start)
	bc.mu.Lock()
	sent = (bc.served || bc.known) && bc.rejected == ""
	bc.mu.Unlock()
	if err != nil && len(res.Skipped) > 0 {
		err = fmt.Errorf("%w (before it: %s)", err, strings.Join(res.Skipped, "; "))
	}
	return res, sent, err
}

// broadcastCandidate is one peer Broadcast may send to.
type broadcastCandidate struct {
	addr string
	// filter: a filter connection uses it too.
	filter bool
}

// broadcastTargets lists the peers to send to, in the order to try them:
// opts' To alone, else the node's addresses (Connect, or the seeds' pool)
// other than the download peer's and the banned, those no filter
// connection uses first (in random order; their height shows only in
// their version message, which openBroadcast checks), then the filter
// peers whose best block reaches need. It returns why the other filter
// peers were left out.
func (n *Node) broadcastTargets(st Status, to string, need int32) ([]broadcastCandidate, []string, error) {
	download := ""
	filter := map[string]PeerInfo{}
	for _, p := range st.Peers {
		filter[p.Addr] = p
		if p.Download {
			download = p.Addr
		}
	}
	if to != "" {
		if err := CheckPeerAddr(to); err != nil {
			return nil, nil, err
		}
		if to == download {
			return nil, nil, fmt.Errorf("%w: %s is the download peer", ErrBroadcastTarget, to)
		}
		_, f := filter[to]
		return []broadcastCandidate{{to, f}}, nil, nil
	}
	cands := slices.Clone(n.cfg.Connect)
	if len(cands) == 0 {
		n.addrs.mu.Lock()
		cands = slices.Clone(n.addrs.pool)
		n.addrs.mu.Unlock()
	}
	var fresh, shared []broadcastCandidate
	var skipped []string
	for _, a := range cands {
		if _, banned := n.bans.IsBanned(a); banned || a == download {
			continue
		}
		p, isFilter := filter[a]
		switch {
		case !isFilter:
			fresh = append(fresh, broadcastCandidate{a, false})
		case max(p.LastBlock, p.StartHeight) < need:
			skipped = append(skipped, fmt.Sprintf("%s: filter peer at height %d, below %d", a, max(p.LastBlock, p.StartHeight), need))
		default:
			shared = append(shared, broadcastCandidate{a, true})
		}
	}
	mrand.Shuffle(len(fresh), func(i, j int) { fresh[i], fresh[j] = fresh[j], fresh[i] })
	mrand.Shuffle(len(shared), func(i, j int) { shared[i], shared[j] = shared[j], shared[i] })
	out := append(fresh, shared...)
	if len(out) == 0 {
		if len(skipped) > 0 {
			return nil, nil, fmt.Errorf("%w at height %d or more: %s", ErrBroadcastTarget, need, strings.Join(skipped, "; "))
		}
		return nil, nil, ErrBroadcastTarget
	}
	return out, skipped, nil
}

// errTargetBehind is returned by openBroadcast for a target below the
// height the broadcast needs; nothing was announced to it.
var errTargetBehind = errors.New("below the inputs' blocks")

// broadcastConn is the short-lived connection of one broadcast.
type broadcastConn struct {
	p         *peer.Peer
	wc        *wireConn
	via       string
	transport wireTransport
	gone      chan struct{}

	mu       sync.Mutex
	getdata  int
	served   bool
	rejected string
	// known: the target already held the transaction (it sent it in
	// answer to our getdata, or rejected it as a duplicate).
	known bool
	over  bool
	wake  chan struct{}

	// txid is the transaction announced; clock paces its announcements
	// again (announceAgain).
	txid  chainhash.Hash
	clock timeSource
}

// announceAgain re-sends the inv while the target has neither asked for
// the transaction nor holds it, waiting these intervals in turn: btcd
// registers a new peer with its sync manager through its server's peer
// handler while the peer's messages go to the sync manager at once, so
// an inv sent right after the handshake can reach it first and be
// dropped ("inv message from unknown peer"). Announcing a transaction
// again to the same peer tells it nothing new.
var announceAgain = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// announce sends the inv of the transaction.
func (bc *broadcastConn) announce() {
	inv := wire.NewMsgInv()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &bc.txid))
	bc.p.QueueMessage(inv, nil)
}

// notify wakes the broadcast's wait.
func (bc *broadcastConn) notify() {
	select {
	case bc.wake <- struct{}{}:
	default:
	}
}

// close disconnects and waits for the peer to end.
func (bc *broadcastConn) close() {
	bc.p.Disconnect()
	<-bc.gone
}

// openBroadcast connects to target over the transport the node's policy
// gives it (falling back from v2 to v1 under TransportAuto when the peer
// speaks only v1, as the filter connections do), completes the handshake
// (no filter, no relay), checks that the target's height reaches need
// (errTargetBehind, with nothing announced, when it does not), announces
// tx and asks the target for it (it answers only if it already holds it).
// On error the connection is closed.
func (n *Node) openBroadcast(ctx context.Context, target string, tx *wire.MsgTx, need int32) (*broadcastConn, error) {
	bc, err := n.openBroadcastTransport(ctx, target, tx, need)
	if err != nil && bc != nil {
		bc.close()
	}
	return bc, err
}

// openBroadcastTransport is openBroadcast before the closing on error.
func (n *Node) openBroadcastTransport(ctx context.Context, target string, tx *wire.MsgTx, need int32) (*broadcastConn, error) {
	t := n.transports.first(n.cfg.Transport, target)
	bc, err := n.openBroadcastRekeyed(ctx, target, tx, t, need)
	if err == nil || errors.Is(err, errTargetBehind) || t != transcript.TransportV2 || bc == nil || bc.wc.received() > 0 && !bc.wc.answeredV1() {
		return bc, err
	}
	// A v2 attempt the peer answered with nothing or in v1: it speaks
	// only v1.
	n.transports.plaintext(target)
	if n.cfg.Transport == TransportV2 {
		return nil, fmt.Errorf("broadcast to %s: %w", target, ErrPeerPlaintext)
	}
	return n.openBroadcastVia(ctx, target, tx, transcript.TransportV1, false, need)
}

// openBroadcastRekeyed is openBroadcastVia, made again at once with a new
// key while the v2 key would stall a btcd v1 peer (v1Stalls), up to
// maxRekeys times, as connectOnce does.
func (n *Node) openBroadcastRekeyed(ctx context.Context, target string, tx *wire.MsgTx, t wireTransport, need int32) (*broadcastConn, error) {
	for rekeys := 0; ; rekeys++ {
		bc, err := n.openBroadcastVia(ctx, target, tx, t, rekeys < maxRekeys, need)
		if err == nil || bc == nil || !bc.wc.keyRefused() || ctx.Err() != nil {
			return bc, err
		}
		n.log.Debug("v2 key would stall a btcd v1 peer: connecting again with a new key", "addr", target)
	}
}

// openBroadcastVia makes the broadcast connection over transport t. On a
// failed handshake it returns the connection too (closed), for its byte
// counts. With rekey, a v2 key that would stall a btcd v1 peer is not
// sent (wireConn.rekey).
func (n *Node) openBroadcastVia(ctx context.Context, target string, tx *wire.MsgTx, t wireTransport, rekey bool, need int32) (*broadcastConn, error) {
	dctx, cancel := context.WithTimeout(ctx, n.cfg.Tuning.DialTimeout)
	conn, via, err := n.dial.dial(dctx, target)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("broadcast to %s: %w", target, err)
	}
	txid := tx.TxHash()
	v2 := t == transcript.TransportV2
	bc := &broadcastConn{via: via, transport: t, wc: newWireConn(conn, n.cfg.Network.Params.Net, v2),
		gone: make(chan struct{}), wake: make(chan struct{}, 1)}
	bc.wc.rekey = rekey
	verack := make(chan struct{})
	var ackOnce sync.Once
	var read uint64
	cfg := &peer.Config{
		NewestBlock: func() (*chainhash.Hash, int32, error) {
			h, height := n.store.Tip()
			return &h, height, nil
		},
		HostToNetAddress: hostToNetAddress,
		UserAgentName:    n.cfg.UserAgent,
		UserAgentVersion: "0.1",
		ChainParams:      n.cfg.Network.Params,
		// NODE_WITNESS: a peer asks a client without it for the
		// transaction without its witness (MSG_TX), which for a segwit
		// spend is an invalid one.
		Services: wire.SFNodeWitness,
		// No relay: the target has no reason to send us anything.
		DisableRelayTx:      true,
		DisableStallHandler: true,
		Listeners: peer.MessageListeners{
			OnRead: func(p *peer.Peer, bytes int, _ wire.Message, err error) {
				bc.mu.Lock()
				read += uint64(bytes)
				over := read > MaxBroadcastBytes
				bc.over = bc.over || over
				bc.mu.Unlock()
				if over {
					p.Disconnect()
				}
			},
			OnVerAck: func(*peer.Peer, *wire.MsgVerAck) { ackOnce.Do(func() { close(verack) }) },
			// wireConn holds each message until it is flushed, so a
			// message leaves in one write.
			OnWrite: func(p *peer.Peer, _ int, msg wire.Message, _ error) {
				if err := bc.wc.flush(msg.Command()); err != nil {
					p.Disconnect()
				}
			},
			OnGetData: func(p *peer.Peer, msg *wire.MsgGetData) {
				for _, iv := range msg.InvList {
					if iv.Hash != txid || (iv.Type != wire.InvTypeTx && iv.Type != wire.InvTypeWitnessTx) {
						continue
					}
					bc.mu.Lock()
					answer := bc.getdata < maxBroadcastGetData
					bc.getdata++
					bc.served = bc.served || answer
					bc.mu.Unlock()
					if answer {
						// MSG_WITNESS_TX asks for the witness (BIP144),
						// MSG_TX for the transaction without it.
						enc := wire.BaseEncoding
						if iv.Type == wire.InvTypeWitnessTx {
							enc = wire.WitnessEncoding
						}
						p.QueueMessageWithEncoding(tx, nil, enc)
					}
				}
				bc.notify()
			},
			OnReject: func(_ *peer.Peer, msg *wire.MsgReject) {
				if msg.Cmd == wire.CmdTx && msg.Hash == txid {
					bc.mu.Lock()
					if alreadyKnown(msg) {
						bc.known = true
					} else {
						bc.rejected = fmt.Sprintf("%v: %s", msg.Code, peertext.Clean(msg.Reason, peertext.FieldMax))
					}
					bc.mu.Unlock()
					bc.notify()
				}
			},
			// The answer to our getdata: the target held the
			// transaction before our inv.
			OnTx: func(_ *peer.Peer, msg *wire.MsgTx) {
				if msg.TxHash() == txid {
					bc.mu.Lock()
					bc.known = true
					bc.mu.Unlock()
					bc.notify()
				}
			},
		},
	}
	if v2 {
		// btcd's peer speaks v2 only when its own services say so.
		cfg.UsingV2Conn = true
		cfg.Services |= wire.SFNodeP2PV2
	}
	p, err := peer.NewOutboundPeer(cfg, target)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("broadcast to %s: %w", target, err)
	}
	bc.p = p
	go func() {
		p.WaitForDisconnect()
		close(bc.gone)
	}()
	// The handshake (v2 key exchange, version, verack) must end within
	// HandshakeTimeout.
	_ = bc.wc.SetDeadline(time.Now().Add(n.cfg.Tuning.HandshakeTimeout))
	p.AssociateConnection(bc.wc)
	select {
	case <-verack:
		_ = bc.wc.SetDeadline(time.Time{})
	case <-bc.gone:
		return bc, fmt.Errorf("broadcast to %s (%s): handshake: %w", target, t, errFetchDisconnected)
	case <-ctx.Done():
		bc.close()
		return bc, fmt.Errorf("broadcast to %s (%s): handshake: %w", target, t, ctx.Err())
	}
	if h := p.StartingHeight(); h < need {
		return bc, fmt.Errorf("at height %d, %w (%d)", h, errTargetBehind, need)
	}
	bc.txid, bc.clock = txid, n.clock
	bc.announce()
	// A peer that holds the transaction already does not ask for it:
	// asked, it sends it (after the inv, which it handles first, so a
	// peer that lacked it answers notfound and asks for it instead).
	gd := wire.NewMsgGetData()
	_ = gd.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &txid))
	p.QueueMessage(gd, nil)
	return bc, nil
}

// alreadyKnown reports a reject that says the peer holds the transaction
// already: btcd's duplicate code, Core's txn-already-known and
// txn-already-in-mempool reasons.
func alreadyKnown(msg *wire.MsgReject) bool {
	r := strings.ToLower(msg.Reason)
	if strings.Contains(r, "orphan") {
		return false // held as an orphan: the peer lacks its inputs
	}
	return strings.Contains(r, "already have transaction") || strings.Contains(r, "txn-already-known") ||
		strings.Contains(r, "txn-already-in-mempool")
}

// await waits until a peer other than the target relays the transaction
// back (or a block confirms it), the target says it holds it already,
// rejects it, goes over its budget or hangs up before it was asked for,
// or ctx ends; peers are the filter peers it waits on, named in the
// error at the end of the wait.
func (bc *broadcastConn) await(ctx context.Context, sub *Subscription, res *BroadcastResult, peers []PeerInfo) error {
	again := announceAgain
	var retry <-chan time.Time
	if len(again) > 0 {
		retry = bc.clock.TickAfter(again[0])
	}
	for {
		bc.mu.Lock()
		rejected, over, served, known := bc.rejected, bc.over, bc.served, bc.known
		bc.mu.Unlock()
		switch {
		case known:
			res.ConfirmedBy, res.AlreadyKnown = res.SentTo, true
			return nil
		case rejected != "":
			return fmt.Errorf("%w by %s: %s", ErrTxRejected, res.SentTo, rejected)
		case over:
			return fmt.Errorf("%w: more than %d bytes from %s", ErrBroadcastBudget, MaxBroadcastBytes, res.SentTo)
		}
		gone := bc.gone
		if served {
			gone = nil // once sent, the target may hang up: wait for the relay
		}
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return ErrStopped
			}
			switch m := ev.(type) {
			case MatchedTx:
				if m.Txid == res.Txid && (m.Height >= 0 || m.Peer != res.SentTo) {
					res.ConfirmedBy, res.Mined = m.Peer, m.Height >= 0
					return nil
				}
			case TxRelayed:
				// A peer holds it that the node had fetched it from
				// another (the target, say) before.
				if m.Txid == res.Txid && m.Peer != res.SentTo {
					res.ConfirmedBy = m.Peer
					return nil
				}
			}
		case <-bc.wake:
		case <-retry:
			retry = nil
			if !served {
				bc.announce()
				if again = again[1:]; len(again) > 0 {
					retry = bc.clock.TickAfter(again[0])
				}
			}
		case <-gone:
			bc.mu.Lock()
			over, rejected := bc.over, bc.rejected
			bc.mu.Unlock()
			switch {
			case over:
				return fmt.Errorf("%w: more than %d bytes from %s", ErrBroadcastBudget, MaxBroadcastBytes, res.SentTo)
			case rejected != "":
				return fmt.Errorf("%w by %s: %s", ErrTxRejected, res.SentTo, rejected)
			}
			return fmt.Errorf("broadcast to %s: it hung up before asking for the transaction: %w", res.SentTo, errFetchDisconnected)
		case <-ctx.Done():
			var others []string
			for _, p := range peers {
				if p.Addr != res.SentTo {
					others = append(others, p.Addr)
				}
			}
			waited := "no filter peer other than the target to relay it back"
			if len(others) > 0 {
				waited = "no relay back from the filter peers " + strings.Join(others, ", ")
			}
			if !served {
				return fmt.Errorf("%w: %s neither asked for it nor had it, %s (%v)", ErrBroadcastUnconfirmed, res.SentTo, waited, ctx.Err())
			}
			return fmt.Errorf("%w: sent to %s, %s (%v)", ErrBroadcastUnconfirmed, res.SentTo, waited, ctx.Err())
		}
	}
}
