package spv

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// errFetchDisconnected ends an address fetch whose node hung up.
var errFetchDisconnected = errors.New("node disconnected")

// onionCatPrefix is the IPv6 /48 that encodes Tor v2 addresses (dead
// since 2021): never a peer.
var onionCatPrefix = netip.MustParsePrefix("fd87:d87e:eb43::/48")

// addrFetch asks the node at hostport for peer addresses and disconnects:
// Bitcoin Core's ADDR_FETCH connection, which Core makes to each DNS
// seed's name when its proxy resolves names (SOCKS5 has no resolve
// command, so the seed is reached by connecting to its name). It
// connects through the dialer (the proxy resolves the name), completes
// the version handshake, sends getaddr and a ping, and collects the
// usable addresses (usableAnnounced) of addr and addrv2 messages until
// the answer is complete: an addr message with more than one address (a
// getaddr answer; a node announcing itself sends one), or the pong once
// an addr message came (btcd answers getaddr at once and in order; Core
// on its address timer, after the pong). ctx bounds the fetch; what came
// by then is returned. via is the connection's path (Record.Via's
// values).
func (n *Node) addrFetch(ctx context.Context, hostport string) (addrs []string, via string, err error) {
	conn, via, err := n.dial.dial(ctx, hostport)
	if err != nil {
		return nil, via, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var nonceBytes [8]byte
	_, _ = rand.Read(nonceBytes[:])
	nonce := binary.LittleEndian.Uint64(nonceBytes[:])

	var (
		mu       sync.Mutex
		got      []string // the listeners' copy: they may run until the peer is gone
		seen     = make(map[string]bool)
		complete bool // a multi-address message came
		heard    bool // some addr or addrv2 message came
		ponged   bool
		verack   = make(chan struct{})
		ackOnce  sync.Once
		wake     = make(chan struct{}, 1)
	)
	notify := func() {
		select {
		case wake <- struct{}{}:
		case <-ctx.Done():
		default:
		}
	}
	take := func(list []*wire.NetAddressV2) {
		mu.Lock()
		for _, na := range list {
			if a, ok := usableAnnounced(na, n.dial.proxied()); ok && !seen[a] && len(got) < maxSeedAddrs {
				seen[a] = true
				got = append(got, a)
				n.transports.learn(a, na.Services) // NODE_P2P_V2: v2 first
			}
		}
		heard = true
		if len(list) > 1 {
			complete = true
		}
		mu.Unlock()
		notify()
	}
	cfg := &peer.Config{
		NewestBlock: func() (*chainhash.Hash, int32, error) {
			h, height := n.store.Tip()
			return &h, height, nil
		},
		HostToNetAddress: hostToNetAddress,
		UserAgentName:    n.cfg.UserAgent,
		UserAgentVersion: "0.1",
		ChainParams:      n.cfg.Network.Params,
		Services:         0,
		DisableRelayTx:   true,
		Listeners: peer.MessageListeners{
			OnVerAck: func(*peer.Peer, *wire.MsgVerAck) { ackOnce.Do(func() { close(verack) }) },
			OnAddr: func(_ *peer.Peer, msg *wire.MsgAddr) {
				list := make([]*wire.NetAddressV2, 0, len(msg.AddrList))
				for _, na := range msg.AddrList {
					list = append(list, wire.NetAddressV2FromBytes(na.Timestamp, na.Services, na.IP, na.Port))
				}
				take(list)
			},
			OnAddrV2: func(_ *peer.Peer, msg *wire.MsgAddrV2) { take(msg.AddrList) },
			OnPong: func(_ *peer.Peer, msg *wire.MsgPong) {
				if msg.Nonce == nonce {
					mu.Lock()
					ponged = true
					mu.Unlock()
					notify()
				}
			},
		},
	}
	p, err := peer.NewOutboundPeer(cfg, hostport)
	if err != nil {
		_ = conn.Close()
		return nil, via, fmt.Errorf("address fetch from %s: %w", hostport, err)
	}
	gone := make(chan struct{})
	go func() {
		p.WaitForDisconnect()
		close(gone)
	}()
	p.AssociateConnection(conn)
	defer func() {
		p.Disconnect()
		<-gone
	}()

	select {
	case <-verack:
	case <-gone:
		return nil, via, fmt.Errorf("address fetch from %s: handshake: %w", hostport, errFetchDisconnected)
	case <-ctx.Done():
		return nil, via, fmt.Errorf("address fetch from %s: handshake: %w", hostport, ctx.Err())
	}
	p.QueueMessage(wire.NewMsgGetAddr(), nil)
	p.QueueMessage(wire.NewMsgPing(nonce), nil)
	for {
		mu.Lock()
		done := complete || (ponged && heard)
		mu.Unlock()
		if done {
			break
		}
		select {
		case <-wake:
			continue
		case <-gone:
		case <-ctx.Done():
		}
		break
	}
	mu.Lock()
	addrs = append([]string(nil), got...)
	mu.Unlock()
	return addrs, via, nil
}

// usableAnnounced returns the dialable host:port of an address a peer
// announced, if it is one bloomwatch can use: it advertises
// seedServices, has a port, and is an IPv4 or IPv6 address that can be a
// peer (usableIP; not a Tor v2 OnionCat address), or, through a proxy, a
// Tor v3 onion service (which only the proxy can reach).
func usableAnnounced(na *wire.NetAddressV2, proxied bool) (string, bool) {
	if na == nil || na.Addr == nil || !na.HasService(seedServices) || na.Port == 0 {
		return "", false
	}
	port := fmt.Sprint(na.Port)
	if na.IsTorV3() {
		if !proxied {
			return "", false
		}
		return net.JoinHostPort(na.Addr.String(), port), true
	}
	legacy := na.ToLegacy()
	if legacy == nil {
		return "", false
	}
	ip, ok := netip.AddrFromSlice(legacy.IP)
	if !ok || !usableIP(ip) || onionCatPrefix.Contains(ip) {
		return "", false
	}
	return net.JoinHostPort(ip.Unmap().String(), port), true
}
