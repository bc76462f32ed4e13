package spv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/testnet/dnsseed"
	"github.com/bloomwatch/bloomwatch/testnet/socks"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
)

// startProxy starts a SOCKS5 server on 127.0.0.1, closed at cleanup.
func startProxy(t testing.TB, opts socks.Options) *socks.Proxy {
	t.Helper()
	p, err := socks.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// startEchoServer starts a TCP echo server on 127.0.0.1.
func startEchoServer(t testing.TB) string {
	t.Helper()
	return startTCPServer(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
}

// startTCPServer starts a TCP server on 127.0.0.1 that runs handle on
// each connection (closed after it); it stops at cleanup.
func startTCPServer(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		recv(t, done, "end of the listener's accept loop")
	})
	return ln.Addr().String()
}

// deadPort returns a 127.0.0.1 port nothing listens on.
func deadPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	return port
}

// testDialer returns a dialer for proxy (isolation unless shared) whose
// resolver fails the test.
func testDialer(t testing.TB, proxy string, shared bool) (*dialer, *logSink) {
	t.Helper()
	sink, log := newLogSink()
	return newDialer(Config{Proxy: proxy, NoProxyIsolation: shared, Resolver: failResolver{t}, Log: log}), sink
}

// echoOnce checks that conn echoes.
func echoOnce(t testing.TB, conn net.Conn) {
	t.Helper()
	if _, err := conn.Write([]byte("bloom")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "bloom" {
		t.Fatalf("echo %q, %v", buf, err)
	}
}

func TestSOCKSRequestEncoding(t *testing.T) {
	cases := map[string][]byte{
		"127.0.0.1":       {5, 1, 0, 1, 127, 0, 0, 1, 0x20, 0x8d},
		"::1":             append(append([]byte{5, 1, 0, 4}, net.IPv6loopback...), 0x20, 0x8d),
		"seed.example":    append(append([]byte{5, 1, 0, 3, 12}, "seed.example"...), 0x20, 0x8d),
		"::ffff:10.0.0.1": {5, 1, 0, 1, 10, 0, 0, 1, 0x20, 0x8d},
	}
	for host, want := range cases {
		got, err := socksRequest(host, 8333)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("socksRequest(%q) = %x, %v; want %x", host, got, err, want)
		}
	}
	for _, host := range []string{"", strings.Repeat("a", 256)} {
		if _, err := socksRequest(host, 1); !errors.Is(err, ErrProxy) {
			t.Errorf("socksRequest(%d bytes): %v, want ErrProxy", len(host), err)
		}
	}
}

func TestDialerIsolatesEveryConnection(t *testing.T) {
	seed := startTestSeed(t)
	seed.SetAnswer("node.bloomwatch.test", dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	echo := startEchoServer(t)
	_, echoPort, _ := net.SplitHostPort(echo)
	proxy := startProxy(t, socks.Options{Resolver: seed.Resolver()})
	d, _ := testDialer(t, proxy.Addr(), false)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var vias []string
	for _, dest := range []string{echo, net.JoinHostPort("node.bloomwatch.test", echoPort), echo} {
		conn, via, err := d.dial(ctx, dest)
		if err != nil {
			t.Fatalf("dial %s: %v", dest, err)
		}
		echoOnce(t, conn)
		_ = conn.Close()
		vias = append(vias, via)
	}
	conns := proxy.Conns()
	if len(conns) != 3 {
		t.Fatalf("proxy saw %d connections: %+v", len(conns), conns)
	}
	seen := map[string]bool{}
	for i, via := range vias {
		id, ok := transcript.IsolationID(via)
		if !ok || !strings.HasPrefix(id, d.prefix+"-") {
			t.Fatalf("via %q", via)
		}
		if seen[id] {
			t.Fatalf("isolation id %s used twice", id)
		}
		seen[id] = true
		if conns[i].User != id {
			t.Errorf("connection %d: proxy saw user %q, transcript would say %q", i, conns[i].User, id)
		}
	}
	// The name went to the proxy unresolved (failResolver was never
	// asked): the proxy resolved it with the test's DNS server.
	if conns[1].Dest != net.JoinHostPort("node.bloomwatch.test", echoPort) || conns[1].Dialed != echo {
		t.Errorf("named destination: %+v", conns[1])
	}
	if got := seed.QueriedNames(); len(got) == 0 || got[0] != "node.bloomwatch.test" {
		t.Errorf("seed queried %v", got)
	}
	// Another node (or run) starts from another random prefix.
	if d2, _ := testDialer(t, proxy.Addr(), false); d2.prefix == d.prefix {
		t.Errorf("two dialers share the prefix %s", d.prefix)
	}
}

func TestDialerSharedStreamAndIgnoredCredentials(t *testing.T) {
	echo := startEchoServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Isolation off: no credentials offered, Via "proxy".
	both := startProxy(t, socks.Options{Auth: socks.PasswordOrNone})
	d, _ := testDialer(t, both.Addr(), true)
	conn, via, err := d.dial(ctx, echo)
	if err != nil || via != transcript.ViaProxy {
		t.Fatalf("shared: via %q, err %v", via, err)
	}
	echoOnce(t, conn)
	_ = conn.Close()
	if c := both.Conns(); len(c) != 1 || c[0].User != "" {
		t.Fatalf("shared: proxy saw %+v", c)
	}
	// Isolation on with a proxy that takes both: credentials win (they
	// are offered first).
	d, _ = testDialer(t, both.Addr(), false)
	conn, via, err = d.dial(ctx, echo)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	if id, ok := transcript.IsolationID(via); !ok || both.Conns()[1].User != id {
		t.Fatalf("isolated on a password-or-none proxy: via %q, proxy %+v", via, both.Conns())
	}

	// A proxy without authentication ignores the credentials: Via says
	// so, and the log warns once.
	none := startProxy(t, socks.Options{Auth: socks.None})
	d, sink := testDialer(t, none.Addr(), false)
	for range 2 {
		conn, via, err := d.dial(ctx, echo)
		if err != nil || via != transcript.ViaProxy {
			t.Fatalf("no-auth proxy: via %q, err %v", via, err)
		}
		_ = conn.Close()
	}
	if n := strings.Count(sink.String(), "no stream isolation"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, sink.String())
	}

	// A proxy that wants credentials refuses a client without.
	pass := startProxy(t, socks.Options{Auth: socks.Password})
	d, _ = testDialer(t, pass.Addr(), true)
	if _, _, err := d.dial(ctx, echo); !errors.Is(err, ErrProxy) || !strings.Contains(err.Error(), "no acceptable authentication method") {
		t.Fatalf("password-only proxy without credentials: %v", err)
	}
}

func TestDialerProxyErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	proxy := startProxy(t, socks.Options{})
	d, _ := testDialer(t, proxy.Addr(), false)

	// The destination refuses: the proxy's reply says so.
	_, _, err := d.dial(ctx, "127.0.0.1:"+deadPort(t))
	var reply *ProxyReplyError
	if !errors.As(err, &reply) || reply.Code != 5 || !reply.DestinationFault() || !errors.Is(err, ErrProxy) {
		t.Fatalf("refused destination: %v", err)
	}
	// A name the proxy cannot resolve: host unreachable.
	_, _, err = d.dial(ctx, "nowhere.bloomwatch.test:8333")
	if !errors.As(err, &reply) || reply.Code != 4 {
		t.Fatalf("unresolvable name: %v", err)
	}

	// No proxy listening.
	down, _ := testDialer(t, "127.0.0.1:"+deadPort(t), false)
	_, _, err = down.dial(ctx, "127.0.0.1:8333")
	if !errors.Is(err, ErrProxy) || errors.As(err, &reply) {
		t.Fatalf("proxy down: %v", err)
	}

	// Something that is not a SOCKS5 server.
	httpd := startTCPServer(t, func(c net.Conn) {
		_, _ = c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
	})
	notSocks, _ := testDialer(t, httpd, false)
	if _, _, err := notSocks.dial(ctx, "127.0.0.1:8333"); !errors.Is(err, ErrProxy) || !strings.Contains(err.Error(), "not a SOCKS5 server") {
		t.Fatalf("HTTP server as proxy: %v", err)
	}

	// A proxy that never answers: the context ends the handshake.
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	silent := startTCPServer(t, func(c net.Conn) { <-hold })
	mute, _ := testDialer(t, silent, false)
	sctx, scancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer scancel()
	start := time.Now()
	_, _, err = mute.dial(sctx, "127.0.0.1:8333")
	if !errors.Is(err, ErrProxy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("silent proxy: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("silent proxy held the dial %v", time.Since(start))
	}
}

func TestDirectDialResolvesWithResolver(t *testing.T) {
	seed := startTestSeed(t)
	seed.SetAnswer("node.bloomwatch.test", dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	echo := startEchoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	_, log := newLogSink()
	d := newDialer(Config{Resolver: seed.Resolver(), Log: log})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, via, err := d.dial(ctx, net.JoinHostPort("node.bloomwatch.test", port))
	if err != nil || via != transcript.ViaDirect {
		t.Fatalf("via %q, err %v", via, err)
	}
	echoOnce(t, conn)
	_ = conn.Close()
	if _, _, err := d.dial(ctx, net.JoinHostPort("unknown.bloomwatch.test", port)); err == nil {
		t.Fatal("an unknown name dialed")
	}
}

func TestProxyNodeResolvesNothingLocally(t *testing.T) {
	seed := startTestSeed(t)
	seed.SetAnswer(testSeedHost, dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	seed.SetAnswer("x5."+testSeedHost, dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	seed.SetAnswer("peer.bloomwatch.test", dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	proxy := startProxy(t, socks.Options{Resolver: seed.Resolver()})
	port := deadPort(t)
	network := seededRegtest(t, port)

	// Seeds: reached by name through the proxy (an address fetch).
	sink, log := newLogSink()
	n := seedTestNode(t, network, Config{Proxy: proxy.Addr(), Resolver: failResolver{t}, Log: log, Tuning: Tuning{SeedTimeout: time.Second}})
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitLog(t, sink, "address fetch through the proxy", "no new peer address from the DNS seeds")
	// Explicit peers by name: the name goes to the proxy.
	sink2, log2 := newLogSink()
	n2 := seedTestNode(t, network, Config{Proxy: proxy.Addr(), Resolver: failResolver{t}, Log: log2,
		Connect: []string{net.JoinHostPort("peer.bloomwatch.test", port)}})
	if err := n2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitLog(t, sink2, "dial failed")
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := n2.Stop(); err != nil {
		t.Fatal(err)
	}

	wantDest := map[string]bool{
		net.JoinHostPort(testSeedHost, port):           false,
		net.JoinHostPort("peer.bloomwatch.test", port): false,
	}
	for _, c := range proxy.Conns() {
		if _, ok := wantDest[c.Dest]; !ok {
			t.Errorf("unexpected proxy request %+v", c)
			continue
		}
		wantDest[c.Dest] = true
		if !strings.HasPrefix(c.User, "bw") {
			t.Errorf("request without an isolation credential: %+v", c)
		}
	}
	for dest, seen := range wantDest {
		if !seen {
			t.Errorf("the proxy never got %s: %+v", dest, proxy.Conns())
		}
	}
	// Only the proxy asked the DNS server, and only for the names it was
	// given: a proxied node never asks for the x5 subdomain.
	for _, name := range seed.QueriedNames() {
		if name != testSeedHost && name != "peer.bloomwatch.test" {
			t.Errorf("DNS server asked for %s", name)
		}
	}
}

func TestUsableAnnounced(t *testing.T) {
	now := time.Now()
	both := seedServices | wire.SFNodeWitness
	onion := make([]byte, wire.TorV3Size)
	onion[0] = 1
	cases := []struct {
		name    string
		na      *wire.NetAddressV2
		proxied bool
		want    string
	}{
		{"ipv4", wire.NetAddressV2FromBytes(now, both, net.ParseIP("127.0.0.1").To4(), 18444), false, "127.0.0.1:18444"},
		{"ipv4-mapped", wire.NetAddressV2FromBytes(now, both, net.ParseIP("::ffff:10.0.0.1"), 8333), false, "10.0.0.1:8333"},
		{"ipv6", wire.NetAddressV2FromBytes(now, both, net.ParseIP("::1"), 8333), false, "[::1]:8333"},
		{"no NODE_BLOOM", wire.NetAddressV2FromBytes(now, wire.SFNodeNetwork, net.ParseIP("127.0.0.1").To4(), 8333), false, ""},
		{"no NODE_NETWORK", wire.NetAddressV2FromBytes(now, wire.SFNodeBloom|wire.SFNodeNetworkLimited, net.ParseIP("127.0.0.1").To4(), 8333), false, ""},
		{"port 0", wire.NetAddressV2FromBytes(now, both, net.ParseIP("127.0.0.1").To4(), 0), false, ""},
		{"unspecified", wire.NetAddressV2FromBytes(now, both, net.IPv4zero.To4(), 8333), false, ""},
		{"multicast", wire.NetAddressV2FromBytes(now, both, net.ParseIP("224.0.0.1").To4(), 8333), false, ""},
		{"tor v2 onioncat", wire.NetAddressV2FromBytes(now, both, net.ParseIP("fd87:d87e:eb43::1"), 8333), true, ""},
		{"tor v3 direct", wire.NetAddressV2FromBytes(now, both, onion, 8333), false, ""},
	}
	for _, c := range cases {
		got, ok := usableAnnounced(c.na, c.proxied)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
	got, ok := usableAnnounced(wire.NetAddressV2FromBytes(now, both, onion, 8333), true)
	if !ok || !strings.HasSuffix(got, ".onion:8333") {
		t.Errorf("tor v3 through the proxy: %q, %v", got, ok)
	}
}
