package socks

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/proxy"

	"github.com/bloomwatch/bloomwatch/testnet/dnsseed"
)

func TestSOCKSProxyLogsUsersAndStaysOnLoopback(t *testing.T) {
	seed, err := dnsseed.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, seed.Close()) })
	seed.SetAnswer("node.bloomwatch.test", dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	seed.SetAnswer("far.bloomwatch.test", dnsseed.Answer{IPs: []net.IP{net.ParseIP("192.0.2.1")}})
	echo := startEcho(t)
	_, echoPort, _ := net.SplitHostPort(echo)

	p, err := Start(Options{Resolver: seed.Resolver()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })

	// Two connections with two usernames, one by IP, one by name.
	for _, c := range []struct{ user, dest string }{
		{"alice", echo},
		{"bob", net.JoinHostPort("node.bloomwatch.test", echoPort)},
	} {
		conn, err := socksTry(p.Addr(), c.user, c.dest)
		require.NoError(t, err)
		_, err = conn.Write([]byte("ping"))
		require.NoError(t, err)
		buf := make([]byte, 4)
		_, err = conn.Read(buf)
		require.NoError(t, err)
		require.Equal(t, "ping", string(buf))
		require.NoError(t, conn.Close())
	}
	// A name resolving outside loopback, and a non-loopback IP, are
	// refused before any connect.
	for _, dest := range []string{net.JoinHostPort("far.bloomwatch.test", "8333"), "192.0.2.1:8333", net.JoinHostPort("unknown.bloomwatch.test", "8333")} {
		conn, err := socksTry(p.Addr(), "carol", dest)
		if err == nil {
			_ = conn.Close()
		}
		require.Error(t, err, dest)
	}
	conns := p.Conns()
	require.GreaterOrEqual(t, len(conns), 4)
	require.Equal(t, "alice", conns[0].User)
	require.Equal(t, echo, conns[0].Dest)
	require.Equal(t, "bob", conns[1].User)
	require.Equal(t, net.JoinHostPort("node.bloomwatch.test", echoPort), conns[1].Dest)
	require.Equal(t, echo, conns[1].Dialed)
	for _, c := range conns[:2] {
		require.Empty(t, c.Err)
		require.NotEmpty(t, c.Local)
	}
	for _, c := range conns[2:] {
		require.NotEmpty(t, c.Err, "%+v", c)
		require.Empty(t, c.Local, "%+v", c)
	}
}

// startEcho starts a TCP server on 127.0.0.1 that echoes what it reads.
func startEcho(t *testing.T) string {
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
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			require.FailNow(t, "the echo server's accept loop did not end within 10 s of its listener's close")
		}
	})
	return ln.Addr().String()
}

// socksTry connects to dest through the SOCKS5 proxy at proxyAddr with
// user as username and password (golang.org/x/net/proxy's client, which
// sends host names unresolved).
func socksTry(proxyAddr, user, dest string) (net.Conn, error) {
	d, err := proxy.SOCKS5("tcp", proxyAddr, &proxy.Auth{User: user, Password: user}, &net.Dialer{Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	return d.Dial("tcp", dest)
}
