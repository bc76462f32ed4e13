package spv

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"time"

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
)

// BroadcastOptions adjusts Broadcast.
type BroadcastOptions struct {
	// To is the peer (host:port) to send to; empty chooses a peer of the
	// node's addresses that is not the download peer, one without a
	// filter connection first.
	To string
	// Timeout bounds the whole broadcast (DefaultBroadcastTimeout).
	Timeout time.Duration
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
	// BytesReceived counts what the target sent on the broadcast
	// connection; Elapsed is the whole broadcast.
	BytesReceived uint64        `json:"bytes_received"`
	Elapsed       time.Duration `json:"elapsed_ns"`
}

// Broadcast sends tx to the network without naming the wallet (see the
// comment above) and waits until a peer other than the target relays it
// back or a block confirms it. The node must be synced.
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
	target, alsoFilter, err := n.broadcastTarget(st, opts.To)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	start := n.clock.Now()
	res := &BroadcastResult{Txid: tx.TxHash(), SentTo: target, AlsoFilterPeer: alsoFilter}
	// Subscribe before anything is sent: the relay may come quickly.
	sub := n.Subscribe()
	defer sub.Cancel()

	bc, err := n.openBroadcast(ctx, target, tx)
	if err != nil {
		return nil, err
	}
	defer bc.close()
	res.Via, res.Transport = bc.via, bc.transport
	n.log.Info("broadcast: sent inv over a fresh connection", "txid", res.Txid, "peer", target, "via", bc.via, "transport", bc.transport, "filter_peer_too", alsoFilter)
	err = bc.await(ctx, sub, res)
	res.BytesReceived = bc.p.BytesReceived()
	res.Elapsed = n.clock.Now().Sub(start)
	if err != nil {
		n.log.Warn("broadcast failed", "txid", res.Txid, "peer", target, "err", err)
		return res, err
	}
	n.log.Info("broadcast confirmed", "txid", res.Txid, "by", res.ConfirmedBy, "mined", res.Mined, "elapsed", res.Elapsed)
	return res, nil
}

// broadcastTarget picks the peer to send to: opts' To, else an address of
// the node's (Connect, or the seeds' pool) that is not the download
// peer's, preferring one no filter connection uses. It reports whether
// the target is also a filter peer.
func (n *Node) broadcastTarget(st Status, to string) (string, bool, error) {
	download := ""
	filter := map[string]bool{}
	for _, p := range st.Peers {
		filter[p.Addr] = true
		if p.Download {
			download = p.Addr
		}
	}
	if to != "" {
		if err := CheckPeerAddr(to); err != nil {
			return "", false, err
		}
		if to == download {
			return "", false, fmt.Errorf("%w: %s is the download peer", ErrBroadcastTarget, to)
		}
		return to, filter[to], nil
	}
	cands := slices.Clone(n.cfg.Connect)
	if len(cands) == 0 {
		n.addrs.mu.Lock()
		cands = slices.Clone(n.addrs.pool)
		n.addrs.mu.Unlock()
	}
	var fresh, shared []string
	for _, a := range cands {
		if _, banned := n.bans.IsBanned(a); banned || a == download {
			continue
		}
		if filter[a] {
			shared = append(shared, a)
		} else {
			fresh = append(fresh, a)
		}
	}
	switch {
	case len(fresh) > 0:
		return fresh[mrand.IntN(len(fresh))], false, nil
	case len(shared) > 0:
		return shared[mrand.IntN(len(shared))], true, nil
	}
	return "", false, ErrBroadcastTarget
}

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
	over     bool
	wake     chan struct{}
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
// (no filter, no relay) and announces tx.
func (n *Node) openBroadcast(ctx context.Context, target string, tx *wire.MsgTx) (*broadcastConn, error) {
	t := n.transports.first(n.cfg.Transport, target)
	bc, err := n.openBroadcastRekeyed(ctx, target, tx, t)
	if err == nil || t != transcript.TransportV2 || bc == nil || bc.wc.received() > 0 && !bc.wc.answeredV1() {
		return bc, err
	}
	// A v2 attempt the peer answered with nothing or in v1: it speaks
	// only v1.
	n.transports.plaintext(target)
	if n.cfg.Transport == TransportV2 {
		return nil, fmt.Errorf("broadcast to %s: %w", target, ErrPeerPlaintext)
	}
	return n.openBroadcastVia(ctx, target, tx, transcript.TransportV1, false)
}

// openBroadcastRekeyed is openBroadcastVia, made again at once with a new
// key while the v2 key would stall a btcd v1 peer (v1Stalls), up to
// maxRekeys times, as connectOnce does.
func (n *Node) openBroadcastRekeyed(ctx context.Context, target string, tx *wire.MsgTx, t wireTransport) (*broadcastConn, error) {
	for rekeys := 0; ; rekeys++ {
		bc, err := n.openBroadcastVia(ctx, target, tx, t, rekeys < maxRekeys)
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
func (n *Node) openBroadcastVia(ctx context.Context, target string, tx *wire.MsgTx, t wireTransport, rekey bool) (*broadcastConn, error) {
	dctx, cancel := context.WithTimeout(ctx, n.cfg.DialTimeout)
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
					bc.rejected = fmt.Sprintf("%v: %s", msg.Code, msg.Reason)
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
	_ = bc.wc.SetDeadline(time.Now().Add(n.cfg.HandshakeTimeout))
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
	inv := wire.NewMsgInv()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &txid))
	p.QueueMessage(inv, nil)
	return bc, nil
}

// await waits until a peer other than the target relays the transaction
// back (or a block confirms it), the target rejects it, goes over its
// budget or hangs up before it was asked for, or ctx ends.
func (bc *broadcastConn) await(ctx context.Context, sub *Subscription, res *BroadcastResult) error {
	for {
		bc.mu.Lock()
		rejected, over, served := bc.rejected, bc.over, bc.served
		bc.mu.Unlock()
		switch {
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
			m, isTx := ev.(MatchedTx)
			if !isTx || m.Txid != res.Txid {
				continue
			}
			if m.Height >= 0 || m.Peer != res.SentTo {
				res.ConfirmedBy, res.Mined = m.Peer, m.Height >= 0
				return nil
			}
		case <-bc.wake:
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
			if !served {
				return fmt.Errorf("%w: %s never asked for it (%v)", ErrBroadcastUnconfirmed, res.SentTo, ctx.Err())
			}
			return fmt.Errorf("%w: sent to %s, no other peer relayed it back (%v)", ErrBroadcastUnconfirmed, res.SentTo, ctx.Err())
		}
	}
}
