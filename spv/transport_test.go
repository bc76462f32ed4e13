package spv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

func TestParseTransport(t *testing.T) {
	for in, want := range map[string]Transport{"": TransportAuto, "auto": TransportAuto, "v2": TransportV2, "v1": TransportV1} {
		if got, err := ParseTransport(in); err != nil || got != want {
			t.Errorf("ParseTransport(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"v3", "V2", "encrypted"} {
		if _, err := ParseTransport(bad); !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseTransport(%q): %v", bad, err)
		}
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, _ = recv(t, accepted, "accepted connection")
	if server == nil {
		t.Fatal("accept failed")
	}
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
		if n, err := c.Write(first); err != nil || n != len(first) {
			t.Fatalf("write: %d %v", n, err)
		}
		if got := readFor(t, server, 200*time.Millisecond); len(got) != v2KeyLen {
			t.Fatalf("the peer got %d bytes before answering, want the %d-byte key", len(got), v2KeyLen)
		}
		if _, err := server.Write([]byte{1, 2, 3, 4, 5}); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, err := io.ReadAtLeast(c, buf, 5)
		if err != nil || !bytes.Equal(buf[:n], []byte{1, 2, 3, 4, 5}) {
			t.Fatalf("read %x %v", buf[:n], err)
		}
		if got := readFor(t, server, 200*time.Millisecond); len(got) != 300 {
			t.Fatalf("the peer got %d garbage bytes after answering, want 300", len(got))
		}
		if c.answeredV1() || c.received() != 5 || c.sent() != uint64(len(first)) {
			t.Fatalf("v1 %v, received %d, sent %d", c.answeredV1(), c.received(), c.sent())
		}
	})
	t.Run("v1 answer", func(t *testing.T) {
		client, server := tcpPair(t)
		c := newWireConn(client, wire.TestNet, true)
		if _, err := c.Write(first); err != nil {
			t.Fatal(err)
		}
		readFor(t, server, 100*time.Millisecond)
		// A reject message's header, cut after the magic and 2 bytes.
		for _, part := range [][]byte{magic[:2], append(magic[2:], 'r', 'e')} {
			if _, err := server.Write(part); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n, err := c.Read(make([]byte, 64)); n != 0 || !errors.Is(err, errV1Answer) {
			t.Fatalf("read %d, %v; want errV1Answer", n, err)
		}
		if !c.answeredV1() {
			t.Fatal("not marked as a v1 answer")
		}
		if got := readFor(t, server, 200*time.Millisecond); len(got) != 0 {
			t.Fatalf("%d garbage bytes went to a v1 peer", len(got))
		}
	})
	t.Run("messages coalesce", func(t *testing.T) {
		client, server := tcpPair(t)
		c := newWireConn(client, wire.TestNet, false)
		var taps []int
		c.tap = func(n int, _ string) { taps = append(taps, n) }
		for _, msg := range [][]byte{[]byte("version"), []byte("header"), []byte("payload"), []byte("decoy")} {
			if _, err := c.Write(msg); err != nil {
				t.Fatal(err)
			}
			if string(msg) == "version" || string(msg) == "decoy" {
				if err := c.flush("x"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := readFor(t, server, 200*time.Millisecond); string(got) != "versionheaderpayloaddecoy" {
			t.Fatalf("got %q", got)
		}
		if len(taps) != 2 || taps[0] != 7 || taps[1] != len("headerpayloaddecoy") {
			t.Fatalf("writes %v, want the first message alone, then the next three in one", taps)
		}
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
			if got := m.first(p, addr); got != w[i] {
				t.Errorf("first(%s, %s) = %s, want %s", p, addr, got, w[i])
			}
		}
	}
	if !m.upgradable(TransportAuto, "plain:1") || m.upgradable(TransportV1, "plain:1") {
		t.Error("upgradable")
	}
	m.plaintext("explicit:1")
	if m.first(TransportAuto, "explicit:1") != "v1" || m.upgradable(TransportAuto, "explicit:1") {
		t.Error("a peer that answered in v1 is still tried over v2")
	}
	for i := range maxTransportMemory + 10 {
		m.learn(fmt.Sprintf("flood:%d", i), wire.SFNodeP2PV2)
	}
	if len(m.v2) != maxTransportMemory {
		t.Errorf("%d addresses remembered, bound %d", len(m.v2), maxTransportMemory)
	}
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
		if got := v1Stalls(key); got != want {
			t.Errorf("length %d: stalls %v, want %v", length, got, want)
		}
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
		if n, err := c.Write(first); n != 0 || !errors.Is(err, errKeyStallsV1) {
			t.Fatalf("write: %d %v, want errKeyStallsV1", n, err)
		}
		_ = server.SetReadDeadline(time.Now().Add(time.Minute))
		if n, err := server.Read(make([]byte, 64)); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("the peer read %d bytes, %v; want the connection's end", n, err)
		}
		if !c.keyRefused() || c.sent() != 0 {
			t.Fatalf("refused %v, sent %d", c.keyRefused(), c.sent())
		}
		if _, err := c.Read(make([]byte, 4)); err == nil {
			t.Fatal("the handshake's read on the closed connection succeeded")
		}
	})
	t.Run("last draw", func(t *testing.T) {
		client, server := tcpPair(t)
		c := newWireConn(client, wire.TestNet, true)
		if n, err := c.Write(first); err != nil || n != len(first) {
			t.Fatalf("write: %d %v", n, err)
		}
		if got := readFor(t, server, 200*time.Millisecond); !bytes.Equal(got, first[:v2KeyLen]) {
			t.Fatalf("the peer got %d bytes, want the %d-byte key", len(got), v2KeyLen)
		}
		if c.keyRefused() {
			t.Fatal("marked refused")
		}
	})
}
