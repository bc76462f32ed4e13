package spv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// SOCKS5 protocol constants (RFC 1928, RFC 1929).
const (
	socksVersion       = 5
	socksAuthNone      = 0x00
	socksAuthPassword  = 0x02
	socksAuthNoMethod  = 0xff
	socksPasswordVer   = 1
	socksCmdConnect    = 1
	socksAtypIPv4      = 1
	socksAtypDomain    = 3
	socksAtypIPv6      = 4
	socksReplySuccess  = 0
	socksMaxDomainName = 255
)

// ErrProxy is wrapped by every error of a connection through the SOCKS5
// proxy (Config.Proxy) that the proxy caused or reported: unreachable,
// refusing the credentials, speaking another protocol, or refusing the
// CONNECT (then the error is also a *ProxyReplyError).
var ErrProxy = errors.New("spv: SOCKS5 proxy")

// ProxyReplyError is the proxy's refusal of a CONNECT: the reply code of
// RFC 1928 section 6 (1 general failure, 2 not allowed by ruleset, 3
// network unreachable, 4 host unreachable, 5 connection refused, 6 TTL
// expired, 7 command not supported, 8 address type not supported). It
// wraps ErrProxy. Codes 3 to 6 are the destination's fault, not the
// proxy's.
type ProxyReplyError struct {
	Code byte
}

// socksReplies names the RFC 1928 reply codes.
var socksReplies = map[byte]string{
	1: "general SOCKS server failure",
	2: "connection not allowed by ruleset",
	3: "network unreachable",
	4: "host unreachable",
	5: "connection refused",
	6: "TTL expired",
	7: "command not supported",
	8: "address type not supported",
}

// Error implements error.
func (e *ProxyReplyError) Error() string {
	name, ok := socksReplies[e.Code]
	if !ok {
		name = "unknown reply"
	}
	return fmt.Sprintf("%v: CONNECT refused: %s (%d)", ErrProxy, name, e.Code)
}

// Unwrap returns ErrProxy.
func (e *ProxyReplyError) Unwrap() error { return ErrProxy }

// DestinationFault reports whether the reply blames the destination
// (unreachable, refused, TTL expired) rather than the proxy.
func (e *ProxyReplyError) DestinationFault() bool { return e.Code >= 3 && e.Code <= 6 }

// socksConnect runs the SOCKS5 handshake on conn, a fresh connection to
// the proxy, for a CONNECT to addr (host:port). The host goes to the proxy
// as it is: an IP literal as an address, anything else as a domain name
// that the proxy resolves (nothing is resolved here). With a user, the
// client offers username/password authentication (RFC 1929) first and no
// authentication second, as Bitcoin Core does; authed reports whether the
// proxy took the credentials (false: it chose no authentication, so no
// stream isolation happened). ctx bounds the handshake: its end
// interrupts the exchange.
func socksConnect(ctx context.Context, conn net.Conn, addr, user, pass string) (authed bool, err error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("%w: destination %q: %w", ErrProxy, addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return false, fmt.Errorf("%w: destination %q: bad port", ErrProxy, addr)
	}
	req, err := socksRequest(host, uint16(port))
	if err != nil {
		return false, err
	}
	if len(user) > 255 || len(pass) > 255 || (user == "") != (pass == "") {
		return false, fmt.Errorf("%w: credentials of %d and %d bytes (1 to 255 each, both or neither)", ErrProxy, len(user), len(pass))
	}

	// A context that ends mid-handshake (its deadline included) unblocks
	// the reads and writes: then ctx.Err() is already set.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() {
			// The context ended: the connection's deadline is past,
			// so it is unusable even if the handshake got through.
			if err == nil {
				err = fmt.Errorf("%w: handshake: %w", ErrProxy, ctx.Err())
			}
			return
		}
		if err == nil {
			_ = conn.SetDeadline(time.Time{})
		}
	}()
	wrap := func(stage string, err error) error {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("%w: %s: %w", ErrProxy, stage, err)
	}

	greeting := []byte{socksVersion, 1, socksAuthNone}
	if user != "" {
		greeting = []byte{socksVersion, 2, socksAuthPassword, socksAuthNone}
	}
	if _, err := conn.Write(greeting); err != nil {
		return false, wrap("greeting", err)
	}
	var choice [2]byte
	if _, err := io.ReadFull(conn, choice[:]); err != nil {
		return false, wrap("method choice", err)
	}
	if choice[0] != socksVersion {
		return false, fmt.Errorf("%w: not a SOCKS5 server (version byte %#x)", ErrProxy, choice[0])
	}
	switch {
	case choice[1] == socksAuthNone:
	case choice[1] == socksAuthPassword && user != "":
		msg := make([]byte, 0, 3+len(user)+len(pass))
		msg = append(msg, socksPasswordVer, byte(len(user)))
		msg = append(msg, user...)
		msg = append(msg, byte(len(pass)))
		msg = append(msg, pass...)
		if _, err := conn.Write(msg); err != nil {
			return false, wrap("authentication", err)
		}
		var status [2]byte
		if _, err := io.ReadFull(conn, status[:]); err != nil {
			return false, wrap("authentication status", err)
		}
		if status[0] != socksPasswordVer || status[1] != 0 {
			return false, fmt.Errorf("%w: credentials refused (status %#x)", ErrProxy, status[1])
		}
		authed = true
	case choice[1] == socksAuthNoMethod:
		return false, fmt.Errorf("%w: no acceptable authentication method", ErrProxy)
	default:
		return false, fmt.Errorf("%w: proxy chose authentication method %#x, not offered", ErrProxy, choice[1])
	}

	if _, err := conn.Write(req); err != nil {
		return false, wrap("connect request", err)
	}
	var head [4]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return false, wrap("connect reply", err)
	}
	if head[0] != socksVersion {
		return false, fmt.Errorf("%w: connect reply version %#x", ErrProxy, head[0])
	}
	if head[1] != socksReplySuccess {
		return false, &ProxyReplyError{Code: head[1]}
	}
	// The bound address (and port) follows; it is read and ignored.
	var skip int
	switch head[3] {
	case socksAtypIPv4:
		skip = 4 + 2
	case socksAtypIPv6:
		skip = 16 + 2
	case socksAtypDomain:
		var n [1]byte
		if _, err := io.ReadFull(conn, n[:]); err != nil {
			return false, wrap("connect reply", err)
		}
		skip = int(n[0]) + 2
	default:
		return false, fmt.Errorf("%w: connect reply address type %#x", ErrProxy, head[3])
	}
	if _, err := io.ReadFull(conn, make([]byte, skip)); err != nil {
		return false, wrap("connect reply", err)
	}
	return authed, nil
}

// socksRequest builds the CONNECT request for host and port: an IPv4 or
// IPv6 address for an IP literal, a domain name otherwise.
func socksRequest(host string, port uint16) ([]byte, error) {
	req := []byte{socksVersion, socksCmdConnect, 0}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Zone() == "" {
		ip = ip.Unmap()
		if ip.Is4() {
			req = append(req, socksAtypIPv4)
		} else {
			req = append(req, socksAtypIPv6)
		}
		req = append(req, ip.AsSlice()...)
	} else {
		if host == "" || len(host) > socksMaxDomainName {
			return nil, fmt.Errorf("%w: host name of %d bytes (1 to %d)", ErrProxy, len(host), socksMaxDomainName)
		}
		req = append(req, socksAtypDomain, byte(len(host)))
		req = append(req, host...)
	}
	return append(req, byte(port>>8), byte(port)), nil
}
