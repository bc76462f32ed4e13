package spv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestParseTransport(t *testing.T) {
	for in, want := range map[string]Transport{"": TransportAuto, "auto": TransportAuto, "v2": TransportV2, "v1": TransportV1} {
		got, err := ParseTransport(in)
		require.NoError(t, err, "ParseTransport(%q) = %q", in, got)
		require.Equal(t, want, got, "ParseTransport(%q) = %q, %v", in, got, err)
	}
	for _, bad := range []string{"v3", "V2", "encrypted"} {
		_, err := ParseTransport(bad)
		require.ErrorIs(t, err, ErrBadConfig, "ParseTransport(%q): %v", bad, err)
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server, _ = recv(t, accepted, "accepted connection")
	require.False(t, server == nil, "accept failed")
	t.Cleanup(func() {
		_ = client.Close()
		_ = server.Close()
	})
	return client, server
}

// readFor reads what server receives within d.
func readFor(t *testing.T, server net.Conn, d time.Duration) []byte {
	t.Helper()
	_ = server.SetReadDeadline(time.Now().Add(d))
	var got []byte
	buf := make([]byte, 8192)
	for {
		n, err := server.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return got
		}
	}
}

// TestWireConnHoldsGarbage checks the v2 handshake's first flight: the
// 64-byte key alone, the garbage only once the peer's first bytes came
// and were not a v1 message; and a v1 answer (the network magic) ends the
// handshake with errV1Answer, the garbage never sent.
func TestWireConnHoldsGarbage(t *testing.T) {
	magic := binary.LittleEndian.AppendUint32(nil, uint32(wire.TestNet))
	first := bytes.Repeat([]byte{0xa5}, v2KeyLen+300)

	t.Run("v2 answer", func(t *testing.T) {
		client, server := tcpPair(t)
		c := newWireConn(client, wire.TestNet, true)
		n, err := c.Write(first)
		require.NoError(t, err, "write: %d %v", n, err)
		require.Equal(t, len(first), n, "write: %d %v", n, err)
		got := readFor(t, server, 200*time.Millisecond)
		require.Len(t, got, v2KeyLen, "the peer got %d bytes before answering, want the %d-byte key", len(got), v2KeyLen)
		_, err = server.Write([]byte{1, 2, 3, 4, 5})
		require.NoError(t, err)
		buf := make([]byte, 64)
		n, err = io.ReadAtLeast(c, buf, 5)
		require.NoError(t, err, "read %x", buf[:n])
		require.Equal(t, []byte{1, 2, 3, 4, 5}, buf[:n], "read %x %v", buf[:n], err)
		got = readFor(t, server, 200*time.Millisecond)
		require.Len(t, got, 300, "the peer got %d garbage bytes after answering, want 300", len(got))
		require.False(t, c.answeredV1(), "v1 %v, received %d, sent %d", c.answeredV1(), c.received(), c.sent())
		require.Equal(t, uint64(5), c.received(), "v1 %v, received %d, sent %d", c.answeredV1(), c.received(), c.sent())
		require.Equal(t, uint64(len(first)), c.sent(), "v1 %v, received %d, sent %d", c.answeredV1(), c.received(), c.sent())
	})
	t.Run("v1 answer", func(t *testing.T) {
		client, server := tcpPair(t)
		c := newWireConn(client, wire.TestNet, true)
		_, err := c.Write(first)
		require.NoError(t, err)
		readFor(t, server, 100*time.Millisecond)
		// A reject message's header, cut after the magic and 2 bytes.
		for _, part := range [][]byte{magic[:2], append(magic[2:], 'r', 'e')} {
			_, err := server.Write(part)
			require.NoError(t, err)
			time.Sleep(20 * time.Millisecond)
		}
		n, err := c.Read(make([]byte, 64))
		require.Equal(t, 0, n, "read %d, %v; want errV1Answer", n, err)
		require.ErrorIs(t, err, errV1Answer, "read %d, %v; want errV1Answer", n, err)
		require.True(t, c.answeredV1(), "not marked as a v1 answer")
		got := readFor(t, server, 200*time.Millisecond)
		require.Len(t, got, 0, "%d garbage bytes went to a v1 peer", len(got))
	})
	t.Run("messages coalesce", func(t *testing.T) {
		client, server := tcpPair(t)
		c := newWireConn(client, wire.TestNet, false)
		var taps []int
		c.tap = func(n int, _ string) { taps = append(taps, n) }
		for _, msg := range [][]byte{[]byte("version"), []byte("header"), []byte("payload"), []byte("decoy")} {
			_, err := c.Write(msg)
			require.NoError(t, err)
			if string(msg) == "version" || string(msg) == "decoy" {
				require.NoError(t, c.flush("x"))
			}
		}
		got := readFor(t, server, 200*time.Millisecond)
		require.Equal(t, "versionheaderpayloaddecoy", string(got), "got %q", got)
		require.Len(t, taps, 2, "writes %v, want the first message alone, then the next three in one", taps)
		require.Equal(t, 7, taps[0], "writes %v, want the first message alone, then the next three in one", taps)
		require.Equal(t, len("headerpayloaddecoy"), taps[1], "writes %v, want the first message alone, then the next three in one", taps)
	})
}

// TestTransportMemory checks the first transport of each kind of address
// under each policy, what a v1 answer and a NODE_P2P_V2 advertisement
// change, and the memory's bound.
func TestTransportMemory(t *testing.T) {
	m := newTransportMemory([]string{"explicit:1"})
	m.learn("seen:1", wire.SFNodeNetwork|wire.SFNodeBloom|wire.SFNodeP2PV2)
	m.learn("plain:1", wire.SFNodeNetwork|wire.SFNodeBloom)
	want := map[string][3]string{ // auto, v2, v1
		"explicit:1": {"v2", "v2", "v1"},
		"seen:1":     {"v2", "v2", "v1"},
		"plain:1":    {"v1", "v2", "v1"},
		"unknown:1":  {"v1", "v2", "v1"},
	}
	for addr, w := range want {
		for i, p := range []Transport{TransportAuto, TransportV2, TransportV1} {
			got := m.first(p, addr)
			require.Equal(t, w[i], got, "first(%s, %s) = %s, want %s", p, addr, got, w[i])
		}
	}
	require.True(t, m.upgradable(TransportAuto, "plain:1"), "upgradable")
	require.False(t, m.upgradable(TransportV1, "plain:1"), "upgradable")
	m.plaintext("explicit:1")
	require.Equal(t, "v1", m.first(TransportAuto, "explicit:1"), "a peer that answered in v1 is still tried over v2")
	require.False(t, m.upgradable(TransportAuto, "explicit:1"), "a peer that answered in v1 is still tried over v2")
	for i := range maxTransportMemory + 10 {
		m.learn(fmt.Sprintf("flood:%d", i), wire.SFNodeP2PV2)
	}
	require.Len(t, m.v2, maxTransportMemory, "%d addresses remembered, bound %d", len(m.v2), maxTransportMemory)
}

// TestV1Stalls checks which keys stall a btcd v1 peer: a payload length
// (bytes 16-19, little-endian) above the 40 bytes after the header and at
// most wire.MaxMessagePayload.
func TestV1Stalls(t *testing.T) {
	for length, want := range map[uint32]bool{
		0: false, 40: false, 41: true, 1 << 20: true, wire.MaxMessagePayload: true,
		wire.MaxMessagePayload + 1: false, 0xa5a5a5a5: false, 0xffffffff: false,
	} {
		key := bytes.Repeat([]byte{0xa5}, v2KeyLen)
		binary.LittleEndian.PutUint32(key[16:20], length)
		got := v1Stalls(key)
		require.Equal(t, want, got, "length %d: stalls %v, want %v", length, got, want)
	}
}

// TestWireConnRefusesStallingKey checks the first flight of a v2
// handshake whose key would stall a btcd v1 peer: with rekey, nothing is
// sent, the write fails with errKeyStallsV1, the connection is closed (the
// peer reads its end at once) and keyRefused says why; without rekey (the
// last of maxRekeys draws) the key goes out as any other.
func TestWireConnRefusesStallingKey(t *testing.T) {
	first := bytes.Repeat([]byte{0xa5}, v2KeyLen+300)
	binary.LittleEndian.PutUint32(first[16:20], 1<<20)
	t.Run("rekey", func(t *testing.T) {
		client, server := tcpPair(t)
		c := newWireConn(client, wire.TestNet, true)
		c.rekey = true
		n, err := c.Write(first)
		require.Equal(t, 0, n, "write: %d %v, want errKeyStallsV1", n, err)
		require.ErrorIs(t, err, errKeyStallsV1, "write: %d %v, want errKeyStallsV1", n, err)
		_ = server.SetReadDeadline(time.Now().Add(time.Minute))
		n, err = server.Read(make([]byte, 64))
		require.Equal(t, 0, n, "the peer read %d bytes, %v; want the connection's end", n, err)
		require.ErrorIs(t, err, io.EOF, "the peer read %d bytes, %v; want the connection's end", n, err)
		require.True(t, c.keyRefused(), "refused %v, sent %d", c.keyRefused(), c.sent())
		require.Equal(t, uint64(0), c.sent(), "refused %v, sent %d", c.keyRefused(), c.sent())
		_, err = c.Read(make([]byte, 4))
		require.Error(t, err, "the handshake's read on the closed connection succeeded")
	})
	t.Run("last draw", func(t *testing.T) {
		client, server := tcpPair(t)
		c := newWireConn(client, wire.TestNet, true)
		n, err := c.Write(first)
		require.NoError(t, err, "write: %d", n)
		require.Equal(t, len(first), n, "write: %d %v", n, err)
		got := readFor(t, server, 200*time.Millisecond)
		require.Equal(t, first[:v2KeyLen], got, "the peer got %d bytes, want the %d-byte key", len(got), v2KeyLen)
		require.False(t, c.keyRefused(), "marked refused")
	})
}
