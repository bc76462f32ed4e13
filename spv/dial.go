package spv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
)

// dialer opens every outbound connection of a node: to peers and, with a
// proxy, to the nodes reached at DNS seed names. Without a proxy it dials
// directly, resolving host names with the configured Resolver; with one,
// it connects through it by SOCKS5 and resolves nothing itself.
type dialer struct {
	proxy    string // SOCKS5 proxy host:port; "" dials directly
	isolate  bool   // a fresh username/password per proxied connection
	resolver Resolver
	log      *slog.Logger
	// prefix starts every isolation id of this node; it is random so a
	// restarted node never reuses an earlier run's streams (Tor keeps a
	// circuit for a credential about ten minutes).
	prefix string
	count  atomic.Uint64
	// ignored is set once the proxy chose no authentication although
	// credentials were offered (logged once).
	ignored sync.Once
}

// newDialer returns the dialer cfg (with defaults) describes.
func newDialer(cfg Config) *dialer {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return &dialer{
		proxy:    cfg.Proxy,
		isolate:  cfg.Proxy != "" && !cfg.NoProxyIsolation,
		resolver: cfg.Resolver,
		log:      cfg.Log,
		prefix:   "bw" + hex.EncodeToString(b[:]),
	}
}

// proxied reports whether connections go through the proxy.
func (d *dialer) proxied() bool { return d.proxy != "" }

// nextID returns a fresh stream isolation id: the node's random prefix
// and a counter.
func (d *dialer) nextID() string {
	return d.prefix + "-" + strconv.FormatUint(d.count.Add(1), 10)
}

// dial connects to addr (host:port) and returns the connection and its
// path for the transcript (Record.Via). ctx bounds the connect and, with a
// proxy, the SOCKS5 handshake.
func (d *dialer) dial(ctx context.Context, addr string) (net.Conn, string, error) {
	if !d.proxied() {
		conn, err := d.dialDirect(ctx, addr)
		return conn, transcript.ViaDirect, err
	}
	var nd net.Dialer
	conn, err := nd.DialContext(ctx, "tcp", d.proxy)
	if err != nil {
		return nil, "", fmt.Errorf("%w: connect to proxy %s: %w", ErrProxy, d.proxy, err)
	}
	var user string
	if d.isolate {
		user = d.nextID()
	}
	authed, err := socksConnect(ctx, conn, addr, user, user)
	if err != nil {
		_ = conn.Close()
		return nil, "", fmt.Errorf("via proxy %s to %s: %w", d.proxy, addr, err)
	}
	if !authed {
		if user != "" {
			d.ignored.Do(func() {
				d.log.Warn("proxy accepts no credentials: connections share one stream (no stream isolation)", "proxy", d.proxy)
			})
		}
		return conn, transcript.ViaProxy, nil
	}
	return conn, transcript.ViaIsolated(user), nil
}

// dialDirect connects to addr without a proxy. A host name is resolved
// with the Resolver and its addresses are tried in turn.
func (d *dialer) dialDirect(ctx context.Context, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("peer address %q: %w", addr, err)
	}
	var nd net.Dialer
	if _, err := netip.ParseAddr(host); err == nil {
		return nd.DialContext(ctx, "tcp", addr)
	}
	ips, err := d.resolver.LookupHost(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var errs []error
	for _, ip := range ips {
		conn, err := nd.DialContext(ctx, "tcp", net.JoinHostPort(ip, port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	return nil, errors.Join(errs...)
}

// hostToNetAddress is the btcd peer's HostToNetAddress: the peer's address
// for the version message, without any name lookup. An IP literal gives
// its address; a host name (reached through the proxy, or resolved by
// dialDirect) gives the unspecified address 0.0.0.0, as btcd's own
// NewOutboundPeer cannot represent a name.
func hostToNetAddress(host string, port uint16, services wire.ServiceFlag) (*wire.NetAddressV2, error) {
	ip := []byte{0, 0, 0, 0}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		ip = a.AsSlice()
	}
	return wire.NetAddressV2FromBytes(time.Now(), services, ip, port), nil
}
