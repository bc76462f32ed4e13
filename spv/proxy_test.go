package spv

import (
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
	"github.com/stretchr/testify/require"
)

// startProxy starts a SOCKS5 server on 127.0.0.1, closed at cleanup.
func startProxy(t testing.TB, opts socks.Options) *socks.Proxy {
	t.Helper()
	p, err := socks.Start(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, p.Close())
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
	require.NoError(t, err)
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
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	return port
}

// testDialer returns a dialer for proxy (isolation unless shared) whose
// resolver fails the test.
func testDialer(t testing.TB, proxy string, shared bool) (*dialer, *logSink) {
	t.Helper()
	sink, log := newLogSink()
	return newDialer(Config{Proxy: proxy, NoProxyIsolation: shared, Resolver: newFailResolver(t), Log: log}), sink
}

// echoOnce checks that conn echoes.
func echoOnce(t testing.TB, conn net.Conn) {
	t.Helper()
	_, err := conn.Write([]byte("bloom"))
	require.NoError(t, err)
	buf := make([]byte, 5)
	_, err = io.ReadFull(conn, buf)
	require.NoError(t, err, "echo %q", buf)
	require.Equal(t, "bloom", string(buf), "echo %q, %v", buf, err)
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
		require.NoError(t, err, "socksRequest(%q) = %x, %v; want %x", host, got, err, want)
		require.Equal(t, want, got, "socksRequest(%q) = %x, %v; want %x", host, got, err, want)
	}
	for _, host := range []string{"", strings.Repeat("a", 256)} {
		_, err := socksRequest(host, 1)
		require.ErrorIs(t, err, ErrProxy, "socksRequest(%d bytes): %v, want ErrProxy", len(host), err)
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
		require.NoError(t, err, "dial %s", dest)
		echoOnce(t, conn)
		_ = conn.Close()
		vias = append(vias, via)
	}
	conns := proxy.Conns()
	require.Len(t, conns, 3, "proxy saw %d connections: %+v", len(conns), conns)
	seen := map[string]bool{}
	for i, via := range vias {
		id, ok := transcript.IsolationID(via)
		require.True(t, ok, "via %q", via)
		require.True(t, strings.HasPrefix(id, d.prefix+"-"), "via %q", via)
		require.False(t, seen[id], "isolation id %s used twice", id)
		seen[id] = true
		require.Equal(t, id, conns[i].User, "connection %d: proxy saw user %q, transcript would say %q", i, conns[i].User, id)
	}
	// The name went to the proxy unresolved (failResolver was never
	// asked): the proxy resolved it with the test's DNS server.
	require.Equal(t, net.JoinHostPort("node.bloomwatch.test", echoPort), conns[1].Dest, "named destination: %+v", conns[1])
	require.Equal(t, echo, conns[1].Dialed, "named destination: %+v", conns[1])
	got := seed.QueriedNames()
	require.NotEqual(t, 0, len(got), "seed queried %v", got)
	require.Equal(t, "node.bloomwatch.test", got[0], "seed queried %v", got)
	// Another node (or run) starts from another random prefix.
	d2, _ := testDialer(t, proxy.Addr(), false)
	require.NotEqual(t, d.prefix, d2.prefix, "two dialers share the prefix %s", d.prefix)
}

func TestDialerSharedStreamAndIgnoredCredentials(t *testing.T) {
	echo := startEchoServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Isolation off: no credentials offered, Via "proxy".
	both := startProxy(t, socks.Options{Auth: socks.PasswordOrNone})
	d, _ := testDialer(t, both.Addr(), true)
	conn, via, err := d.dial(ctx, echo)
	require.NoError(t, err, "shared: via %q", via)
	require.Equal(t, transcript.ViaProxy, via, "shared: via %q, err %v", via, err)
	echoOnce(t, conn)
	_ = conn.Close()
	c := both.Conns()
	require.Len(t, c, 1, "shared: proxy saw %+v", c)
	require.Equal(t, "", c[0].User, "shared: proxy saw %+v", c)
	// Isolation on with a proxy that takes both: credentials win (they
	// are offered first).
	d, _ = testDialer(t, both.Addr(), false)
	conn, via, err = d.dial(ctx, echo)
	require.NoError(t, err)
	_ = conn.Close()
	id, ok := transcript.IsolationID(via)
	require.True(t, ok, "isolated on a password-or-none proxy: via %q, proxy %+v", via, both.Conns())
	require.Equal(t, id, both.Conns()[1].User, "isolated on a password-or-none proxy: via %q, proxy %+v", via, both.Conns())

	// A proxy without authentication ignores the credentials: Via says
	// so, and the log warns once.
	none := startProxy(t, socks.Options{Auth: socks.None})
	d, sink := testDialer(t, none.Addr(), false)
	for range 2 {
		conn, via, err := d.dial(ctx, echo)
		require.NoError(t, err, "no-auth proxy: via %q", via)
		require.Equal(t, transcript.ViaProxy, via, "no-auth proxy: via %q, err %v", via, err)
		_ = conn.Close()
	}
	n := strings.Count(sink.String(), "no stream isolation")
	require.Equal(t, 1, n, "%d warnings, want 1:\n%s", n, sink.String())

	// A proxy that wants credentials refuses a client without.
	pass := startProxy(t, socks.Options{Auth: socks.Password})
	d, _ = testDialer(t, pass.Addr(), true)
	_, _, err = d.dial(ctx, echo)
	require.ErrorIs(t, err, ErrProxy, "password-only proxy without credentials: %v", err)
	require.Contains(t, err.Error(), "no acceptable authentication method", "password-only proxy without credentials: %v", err)
}

func TestDialerProxyErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	proxy := startProxy(t, socks.Options{})
	d, _ := testDialer(t, proxy.Addr(), false)

	// The destination refuses: the proxy's reply says so.
	_, _, err := d.dial(ctx, "127.0.0.1:"+deadPort(t))
	var reply *ProxyReplyError
	require.ErrorAs(t, err, &reply, "refused destination: %v", err)
	require.Equal(t, byte(5), reply.Code, "refused destination: %v", err)
	require.True(t, reply.DestinationFault(), "refused destination: %v", err)
	require.ErrorIs(t, err, ErrProxy, "refused destination: %v", err)
	// A name the proxy cannot resolve: host unreachable.
	_, _, err = d.dial(ctx, "nowhere.bloomwatch.test:8333")
	require.ErrorAs(t, err, &reply, "unresolvable name: %v", err)
	require.Equal(t, byte(4), reply.Code, "unresolvable name: %v", err)

	// No proxy listening.
	down, _ := testDialer(t, "127.0.0.1:"+deadPort(t), false)
	_, _, err = down.dial(ctx, "127.0.0.1:8333")
	require.ErrorIs(t, err, ErrProxy, "proxy down: %v", err)
	require.False(t, errors.As(err, &reply), "proxy down: %v", err)

	// Something that is not a SOCKS5 server.
	httpd := startTCPServer(t, func(c net.Conn) {
		_, _ = c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
	})
	notSocks, _ := testDialer(t, httpd, false)
	_, _, err = notSocks.dial(ctx, "127.0.0.1:8333")
	require.ErrorIs(t, err, ErrProxy, "HTTP server as proxy: %v", err)
	require.ErrorContains(t, err, "not a SOCKS5 server", "HTTP server as proxy: %v", err)

	// A proxy that never answers: the context ends the handshake.
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	silent := startTCPServer(t, func(c net.Conn) { <-hold })
	mute, _ := testDialer(t, silent, false)
	sctx, scancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer scancel()
	start := time.Now()
	_, _, err = mute.dial(sctx, "127.0.0.1:8333")
	require.ErrorIs(t, err, ErrProxy, "silent proxy: %v", err)
	require.ErrorIs(t, err, context.DeadlineExceeded, "silent proxy: %v", err)
	require.LessOrEqual(t, time.Since(start), 5*time.Second, "silent proxy held the dial %v", time.Since(start))
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
	require.NoError(t, err, "via %q", via)
	require.Equal(t, transcript.ViaDirect, via, "via %q, err %v", via, err)
	echoOnce(t, conn)
	_ = conn.Close()
	_, _, err = d.dial(ctx, net.JoinHostPort("unknown.bloomwatch.test", port))
	require.Error(t, err, "an unknown name dialed")
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
	n := seedTestNode(t, network, Config{Proxy: proxy.Addr(), Resolver: newFailResolver(t), Log: log, Tuning: Tuning{SeedTimeout: time.Second}})
	require.NoError(t, n.Start(context.Background()))
	waitLog(t, sink, "address fetch through the proxy", "no new peer address from the DNS seeds")
	// Explicit peers by name: the name goes to the proxy.
	sink2, log2 := newLogSink()
	n2 := seedTestNode(t, network, Config{Proxy: proxy.Addr(), Resolver: newFailResolver(t), Log: log2,
		Connect: []string{net.JoinHostPort("peer.bloomwatch.test", port)}})
	require.NoError(t, n2.Start(context.Background()))
	waitLog(t, sink2, "dial failed")
	require.NoError(t, n.Stop())
	require.NoError(t, n2.Stop())

	wantDest := map[string]bool{
		net.JoinHostPort(testSeedHost, port):           false,
		net.JoinHostPort("peer.bloomwatch.test", port): false,
	}
	for _, c := range proxy.Conns() {
		_, ok := wantDest[c.Dest]
		require.True(t, ok, "unexpected proxy request %+v", c)
		wantDest[c.Dest] = true
		require.True(t, strings.HasPrefix(c.User, "bw"), "request without an isolation credential: %+v", c)
	}
	for dest, seen := range wantDest {
		require.True(t, seen, "the proxy never got %s: %+v", dest, proxy.Conns())
	}
	// Only the proxy asked the DNS server, and only for the names it was
	// given: a proxied node never asks for the x5 subdomain.
	for _, name := range seed.QueriedNames() {
		require.False(t, name != testSeedHost && name != "peer.bloomwatch.test", "DNS server asked for %s", name)
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
		require.Equal(t, c.want, got, "%s: %q, %v; want %q", c.name, got, ok, c.want)
		require.Equal(t, (c.want != ""), ok, "%s: %q, %v; want %q", c.name, got, ok, c.want)
	}
	got, ok := usableAnnounced(wire.NetAddressV2FromBytes(now, both, onion, 8333), true)
	require.True(t, ok, "tor v3 through the proxy: %q, %v", got, ok)
	require.True(t, strings.HasSuffix(got, ".onion:8333"), "tor v3 through the proxy: %q, %v", got, ok)
}
