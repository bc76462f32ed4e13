// Package socks is a SOCKS5 proxy on 127.0.0.1 for bloomwatch's tests
// (Start): it connects only to loopback addresses, resolves names only
// with the resolver it is given, and records every CONNECT with its
// credentials, so a test can tell which of a client's connections went
// through it and on which circuit.
package socks

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

	"github.com/bloomwatch/bloomwatch/testnet"
)

// ErrNotLoopback is returned (and answered "host unreachable") when a
// Proxy is asked to connect outside 127.0.0.0/8 and ::1.
var ErrNotLoopback = errors.New("socks: destination is not a loopback address")

// Auth selects the authentication methods a Proxy accepts.
type Auth int

const (
	// Password accepts username/password authentication (RFC 1929)
	// with any username and password, and nothing else: Tor's SOCKS
	// port with IsolateSOCKSAuth, from the client's point of view.
	Password Auth = iota
	// PasswordOrNone accepts username/password (any) and no
	// authentication, whichever the client offers first.
	PasswordOrNone
	// None accepts only clients offering no authentication (as
	// OpenSSH's dynamic forwarding does).
	None
)

// Options configures a Proxy.
type Options struct {
	// Auth is the accepted authentication (Password by default).
	Auth Auth
	// Resolver resolves the host names of CONNECT requests (for example
	// the Resolver of a testnet/dnsseed Seed); nil refuses names ("host
	// unreachable"). The system's resolver is never used.
	Resolver *net.Resolver
	// Record keeps what each client sent to its destination
	// (Conn.Sent, up to MaxRecorded bytes), so a test can read the
	// messages a client sent to each peer.
	Record bool
}

// MaxRecorded bounds Conn.Sent.
const MaxRecorded = 16 << 20

// Proxy is a SOCKS5 server on 127.0.0.1 built on
// github.com/armon/go-socks5. It accepts any credentials, connects only
// to loopback addresses (ErrNotLoopback otherwise), resolves names only
// with Options.Resolver, and logs every CONNECT with its username
// and the local address of its outbound connection (what the destination
// sees as the client), so a test can tell which connections came through
// it and on which credential.
type Proxy struct {
	srv  *socks5.Server
	ln   net.Listener
	opts Options
	done chan struct{} // closed when the accept loop ends

	mu     sync.Mutex
	conns  []*Conn
	open   map[net.Conn]struct{} // client and outbound connections
	logged []string
	closed bool
}

// Conn is one CONNECT request a Proxy handled.
type Conn struct {
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
	// Options.Record.
	Sent []byte
}

// connKey is the context key of the *Conn being handled.
type connKey struct{}

// Start starts a Proxy on a free 127.0.0.1 port. Close stops
// it.
func Start(opts Options) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("socks: listen: %w", err)
	}
	p := &Proxy{ln: ln, opts: opts, done: make(chan struct{}), open: make(map[net.Conn]struct{})}
	anyCred := anyCredential{}
	var methods []socks5.Authenticator
	switch opts.Auth {
	case Password:
		methods = []socks5.Authenticator{socks5.UserPassAuthenticator{Credentials: anyCred}}
	case PasswordOrNone:
		methods = []socks5.Authenticator{socks5.UserPassAuthenticator{Credentials: anyCred}, socks5.NoAuthAuthenticator{}}
	case None:
		methods = []socks5.Authenticator{socks5.NoAuthAuthenticator{}}
	default:
		_ = ln.Close()
		return nil, fmt.Errorf("socks: auth %d: %w", opts.Auth, testnet.ErrBadSpec)
	}
	p.srv, err = socks5.New(&socks5.Config{
		AuthMethods: methods,
		Resolver:    resolver{p},
		Rules:       recorder{p},
		Logger:      log.New(logWriter{p}, "", 0),
		Dial:        p.dial,
	})
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("socks: server: %w", err)
	}
	go p.serve()
	return p, nil
}

// Addr returns the proxy's address, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Conns returns a copy of the CONNECT requests handled so far, in order.
func (p *Proxy) Conns() []Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Conn, len(p.conns))
	for i, c := range p.conns {
		out[i] = *c
		out[i].Sent = append([]byte(nil), c.Sent...)
	}
	return out
}

// Log returns the server library's log lines (failed requests).
func (p *Proxy) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logged...)
}

// Close stops accepting, closes every connection the proxy holds and
// waits for the accept loop to end. It is idempotent.
func (p *Proxy) Close() error {
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
		return fmt.Errorf("socks: close: %w", err)
	}
	return nil
}

// serve accepts client connections until the listener closes; each is
// served by the library on a goroutine of its own.
func (p *Proxy) serve() {
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
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.open[c] = struct{}{}
	return true
}

// untrack forgets a connection and closes it.
func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.open, c)
	p.mu.Unlock()
	_ = c.Close()
}

// dial connects to a loopback destination for a CONNECT and records the
// outbound connection's local address.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	rec, _ := ctx.Value(connKey{}).(*Conn)
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
		return fail(errors.New("socks: proxy closed"))
	}
	if rec != nil {
		p.mu.Lock()
		rec.Dialed, rec.Local = addr, c.LocalAddr().String()
		p.mu.Unlock()
	}
	return &target{Conn: c, p: p, rec: rec}, nil
}

// target is an outbound connection that untracks itself on Close
// and, with Options.Record, records what it writes.
type target struct {
	net.Conn
	p    *Proxy
	rec  *Conn
	once sync.Once
}

// Write sends b to the destination, recording it.
func (t *target) Write(b []byte) (int, error) {
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
func (t *target) Close() error {
	t.once.Do(func() { t.p.untrack(t.Conn) })
	return nil
}

// CloseWrite half-closes the connection (the library calls it when the
// client stops sending).
func (t *target) CloseWrite() error {
	if cw, ok := t.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// anyCredential accepts every username and password.
type anyCredential struct{}

// Valid implements socks5.CredentialStore.
func (anyCredential) Valid(user, password string) bool { return true }

// recorder is the proxy's rule set: it permits CONNECT only and
// records each request.
type recorder struct{ p *Proxy }

// Allow implements socks5.RuleSet.
func (r recorder) Allow(ctx context.Context, req *socks5.Request) (context.Context, bool) {
	rec := &Conn{Dest: destOf(req.DestAddr)}
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
	return context.WithValue(ctx, connKey{}, rec), ok
}

// destOf formats a requested destination: the name as asked, or the
// IP, and the port.
func destOf(a *socks5.AddrSpec) string {
	if a == nil {
		return ""
	}
	host := a.FQDN
	if host == "" {
		host = a.IP.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(a.Port))
}

// resolver resolves CONNECT host names with Options.Resolver
// only; a failure is recorded as a request of its own.
type resolver struct{ p *Proxy }

// Resolve implements socks5.NameResolver.
func (r resolver) Resolve(ctx context.Context, name string) (context.Context, net.IP, error) {
	fail := func(err error) (context.Context, net.IP, error) {
		r.p.mu.Lock()
		r.p.conns = append(r.p.conns, &Conn{Dest: name, Err: "resolve: " + err.Error()})
		r.p.mu.Unlock()
		return ctx, nil, err
	}
	if r.p.opts.Resolver == nil {
		return fail(errors.New("socks: proxy resolves no names"))
	}
	ips, err := r.p.opts.Resolver.LookupIP(ctx, "ip", name)
	if err != nil {
		return fail(err)
	}
	if len(ips) == 0 {
		return fail(fmt.Errorf("socks: %s has no address", name))
	}
	return ctx, ips[0], nil
}

// logWriter keeps the library's log lines.
type logWriter struct{ p *Proxy }

// Write implements io.Writer.
func (l logWriter) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	l.p.logged = append(l.p.logged, strings.TrimSpace(string(b)))
	l.p.mu.Unlock()
	return len(b), nil
}

var _ io.Writer = logWriter{}
