package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	socks5 "github.com/armon/go-socks5"
)

// ErrNotLoopback is returned (and answered "host unreachable") when a
// SOCKSProxy is asked to connect outside 127.0.0.0/8 and ::1.
var ErrNotLoopback = errors.New("testnet: destination is not a loopback address")

// SOCKSAuth selects the authentication methods a SOCKSProxy accepts.
type SOCKSAuth int

const (
	// SOCKSPassword accepts username/password authentication (RFC 1929)
	// with any username and password, and nothing else: Tor's SOCKS
	// port with IsolateSOCKSAuth, from the client's point of view.
	SOCKSPassword SOCKSAuth = iota
	// SOCKSPasswordOrNone accepts username/password (any) and no
	// authentication, whichever the client offers first.
	SOCKSPasswordOrNone
	// SOCKSNone accepts only clients offering no authentication (as
	// OpenSSH's dynamic forwarding does).
	SOCKSNone
)

// SOCKSOptions configures a SOCKSProxy.
type SOCKSOptions struct {
	// Auth is the accepted authentication (SOCKSPassword by default).
	Auth SOCKSAuth
	// Resolver resolves the host names of CONNECT requests (for example
	// DNSSeed.Resolver()); nil refuses names ("host unreachable"). The
	// system's resolver is never used.
	Resolver *net.Resolver
	// Record keeps what each client sent to its destination
	// (SOCKSConn.Sent, up to MaxRecorded bytes), so a test can read the
	// messages a client sent to each peer.
	Record bool
}

// MaxRecorded bounds SOCKSConn.Sent.
const MaxRecorded = 16 << 20

// SOCKSProxy is a SOCKS5 server on 127.0.0.1 built on
// github.com/armon/go-socks5. It accepts any credentials, connects only
// to loopback addresses (ErrNotLoopback otherwise), resolves names only
// with SOCKSOptions.Resolver, and logs every CONNECT with its username
// and the local address of its outbound connection (what the destination
// sees as the client), so a test can tell which connections came through
// it and on which credential.
type SOCKSProxy struct {
	srv  *socks5.Server
	ln   net.Listener
	opts SOCKSOptions
	done chan struct{} // closed when the accept loop ends

	mu     sync.Mutex
	conns  []*SOCKSConn
	open   map[net.Conn]struct{} // client and outbound connections
	logged []string
	closed bool
}

// SOCKSConn is one CONNECT request a SOCKSProxy handled.
type SOCKSConn struct {
	// User is the username the client authenticated with ("" without
	// authentication).
	User string
	// Dest is the destination as requested: a host name or an IP, and
	// the port.
	Dest string
	// Dialed is the address connected to (the name resolved), empty
	// when the request failed before.
	Dialed string
	// Local is the proxy's end of the outbound connection: the address
	// the destination sees the client at. Empty on failure.
	Local string
	// Err says why the request failed; empty on success.
	Err string
	// Sent is what the client sent to the destination, with
	// SOCKSOptions.Record.
	Sent []byte
}

// socksConnKey is the context key of the *SOCKSConn being handled.
type socksConnKey struct{}

// StartSOCKS starts a SOCKSProxy on a free 127.0.0.1 port. Close stops
// it.
func StartSOCKS(opts SOCKSOptions) (*SOCKSProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testnet: socks listen: %w", err)
	}
	p := &SOCKSProxy{ln: ln, opts: opts, done: make(chan struct{}), open: make(map[net.Conn]struct{})}
	anyCred := socksAnyCredential{}
	var methods []socks5.Authenticator
	switch opts.Auth {
	case SOCKSPassword:
		methods = []socks5.Authenticator{socks5.UserPassAuthenticator{Credentials: anyCred}}
	case SOCKSPasswordOrNone:
		methods = []socks5.Authenticator{socks5.UserPassAuthenticator{Credentials: anyCred}, socks5.NoAuthAuthenticator{}}
	case SOCKSNone:
		methods = []socks5.Authenticator{socks5.NoAuthAuthenticator{}}
	default:
		_ = ln.Close()
		return nil, fmt.Errorf("testnet: socks auth %d: %w", opts.Auth, ErrBadSpec)
	}
	p.srv, err = socks5.New(&socks5.Config{
		AuthMethods: methods,
		Resolver:    socksResolver{p},
		Rules:       socksRecorder{p},
		Logger:      log.New(socksLog{p}, "", 0),
		Dial:        p.dial,
	})
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("testnet: socks server: %w", err)
	}
	go p.serve()
	return p, nil
}

// Addr returns the proxy's address, "127.0.0.1:port".
func (p *SOCKSProxy) Addr() string { return p.ln.Addr().String() }

// Conns returns a copy of the CONNECT requests handled so far, in order.
func (p *SOCKSProxy) Conns() []SOCKSConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]SOCKSConn, len(p.conns))
	for i, c := range p.conns {
		out[i] = *c
		out[i].Sent = append([]byte(nil), c.Sent...)
	}
	return out
}

// Log returns the server library's log lines (failed requests).
func (p *SOCKSProxy) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logged...)
}

// Close stops accepting, closes every connection the proxy holds and
// waits for the accept loop to end. It is idempotent.
func (p *SOCKSProxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for c := range p.open {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	<-p.done
	if err != nil {
		return fmt.Errorf("testnet: socks close: %w", err)
	}
	return nil
}

// serve accepts client connections until the listener closes; each is
// served by the library on a goroutine of its own.
func (p *SOCKSProxy) serve() {
	defer close(p.done)
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			_ = c.Close()
			return
		}
		go func() {
			defer p.untrack(c)
			_ = p.srv.ServeConn(c)
		}()
	}
}

// track registers an open connection; false once the proxy is closed.
func (p *SOCKSProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.open[c] = struct{}{}
	return true
}

// untrack forgets a connection and closes it.
func (p *SOCKSProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.open, c)
	p.mu.Unlock()
	_ = c.Close()
}

// dial connects to a loopback destination for a CONNECT and records the
// outbound connection's local address.
func (p *SOCKSProxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	rec, _ := ctx.Value(socksConnKey{}).(*SOCKSConn)
	fail := func(err error) (net.Conn, error) {
		if rec != nil {
			p.mu.Lock()
			rec.Err = err.Error()
			p.mu.Unlock()
		}
		return nil, err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fail(err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() {
		return fail(fmt.Errorf("%w: %s", ErrNotLoopback, addr))
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return fail(err)
	}
	if !p.track(c) {
		_ = c.Close()
		return fail(errors.New("testnet: socks proxy closed"))
	}
	if rec != nil {
		p.mu.Lock()
		rec.Dialed, rec.Local = addr, c.LocalAddr().String()
		p.mu.Unlock()
	}
	return &socksTarget{Conn: c, p: p, rec: rec}, nil
}

// socksTarget is an outbound connection that untracks itself on Close
// and, with SOCKSOptions.Record, records what it writes.
type socksTarget struct {
	net.Conn
	p    *SOCKSProxy
	rec  *SOCKSConn
	once sync.Once
}

// Write sends b to the destination, recording it.
func (t *socksTarget) Write(b []byte) (int, error) {
	if t.p.opts.Record && t.rec != nil {
		t.p.mu.Lock()
		if room := MaxRecorded - len(t.rec.Sent); room > 0 {
			t.rec.Sent = append(t.rec.Sent, b[:min(len(b), room)]...)
		}
		t.p.mu.Unlock()
	}
	return t.Conn.Write(b)
}

// Close closes the connection and forgets it.
func (t *socksTarget) Close() error {
	t.once.Do(func() { t.p.untrack(t.Conn) })
	return nil
}

// CloseWrite half-closes the connection (the library calls it when the
// client stops sending).
func (t *socksTarget) CloseWrite() error {
	if cw, ok := t.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// socksAnyCredential accepts every username and password.
type socksAnyCredential struct{}

// Valid implements socks5.CredentialStore.
func (socksAnyCredential) Valid(user, password string) bool { return true }

// socksRecorder is the proxy's rule set: it permits CONNECT only and
// records each request.
type socksRecorder struct{ p *SOCKSProxy }

// Allow implements socks5.RuleSet.
func (r socksRecorder) Allow(ctx context.Context, req *socks5.Request) (context.Context, bool) {
	rec := &SOCKSConn{Dest: socksDest(req.DestAddr)}
	if req.AuthContext != nil {
		rec.User = req.AuthContext.Payload["Username"]
	}
	ok := req.Command == socks5.ConnectCommand
	if !ok {
		rec.Err = "command not supported"
	}
	r.p.mu.Lock()
	r.p.conns = append(r.p.conns, rec)
	r.p.mu.Unlock()
	return context.WithValue(ctx, socksConnKey{}, rec), ok
}

// socksDest formats a requested destination: the name as asked, or the
// IP, and the port.
func socksDest(a *socks5.AddrSpec) string {
	if a == nil {
		return ""
	}
	host := a.FQDN
	if host == "" {
		host = a.IP.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(a.Port))
}

// socksResolver resolves CONNECT host names with SOCKSOptions.Resolver
// only; a failure is recorded as a request of its own.
type socksResolver struct{ p *SOCKSProxy }

// Resolve implements socks5.NameResolver.
func (r socksResolver) Resolve(ctx context.Context, name string) (context.Context, net.IP, error) {
	fail := func(err error) (context.Context, net.IP, error) {
		r.p.mu.Lock()
		r.p.conns = append(r.p.conns, &SOCKSConn{Dest: name, Err: "resolve: " + err.Error()})
		r.p.mu.Unlock()
		return ctx, nil, err
	}
	if r.p.opts.Resolver == nil {
		return fail(errors.New("testnet: socks proxy resolves no names"))
	}
	ips, err := r.p.opts.Resolver.LookupIP(ctx, "ip", name)
	if err != nil {
		return fail(err)
	}
	if len(ips) == 0 {
		return fail(fmt.Errorf("testnet: %s has no address", name))
	}
	return ctx, ips[0], nil
}

// socksLog keeps the library's log lines.
type socksLog struct{ p *SOCKSProxy }

// Write implements io.Writer.
func (l socksLog) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	l.p.logged = append(l.p.logged, strings.TrimSpace(string(b)))
	l.p.mu.Unlock()
	return len(b), nil
}

var _ io.Writer = socksLog{}
