package hostile

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/v2transport"
	"github.com/btcsuite/btcd/wire"
)

// V2Break is how a V2Breaker breaks the BIP324 handshake of a connection
// that opens with a v2 key.
type V2Break string

// The handshake breaks.
const (
	// V2Garbage answers the key with 64 random bytes (any 64 bytes
	// decode to a key) and more garbage than BIP324 allows (4,095
	// bytes) without a garbage terminator.
	V2Garbage V2Break = "garbage"
	// V2WrongKey answers as a responder that derives its secrets for
	// another network (a key whose secrets do not match): its garbage
	// terminator is not the one the node expects.
	V2WrongKey V2Break = "wrong-key"
	// V2Truncated completes the key exchange correctly, then sends the
	// first packet after the version packet cut in half, and stalls.
	V2Truncated V2Break = "truncated"
	// V2Stall reads the key and sends nothing, keeping the connection
	// open until the node closes it.
	V2Stall V2Break = "stall"
)

// V2Breaks lists every V2Break.
func V2Breaks() []V2Break { return []V2Break{V2Garbage, V2WrongKey, V2Truncated, V2Stall} }

// V2BreakerConfig configures a V2Breaker.
type V2BreakerConfig struct {
	// Params are the chain parameters (required): the network magic.
	Params *chaincfg.Params
	// Break is what happens to a v2 handshake.
	Break V2Break
	// Upstream, when set, is a 127.0.0.1 node that v1 connections (the
	// first bytes are a v1 version message's header) are relayed to, so
	// a node that falls back to v1 syncs. Without it they are closed.
	Upstream string
	// Log receives one line per connection (nil: discard).
	Log io.Writer
}

// V2BreakerStats reports what a V2Breaker did.
type V2BreakerStats struct {
	// V2 counts the connections that opened with a v2 key (and were
	// broken); V1 those relayed upstream.
	V2, V1 int
	// V2Durations are how long each broken v2 connection lasted until
	// the node closed it, in order.
	V2Durations []time.Duration
	// Active is the number of connections open now.
	Active int
}

// V2Breaker is a peer on 127.0.0.1 that breaks the BIP324 handshake of
// every v2 connection one way (V2Break) and relays v1 connections to an
// honest upstream node: a node that falls back to v1 syncs through it,
// one that does not is never served.
type V2Breaker struct {
	server // its mu guards stats too
	cfg    V2BreakerConfig
	stats  V2BreakerStats
}

// StartV2Breaker listens on a free 127.0.0.1 port and serves every
// connection until Close or until ctx is done.
func StartV2Breaker(ctx context.Context, cfg V2BreakerConfig) (*V2Breaker, error) {
	if cfg.Params == nil {
		return nil, ErrNoParams
	}
	switch cfg.Break {
	case V2Garbage, V2WrongKey, V2Truncated, V2Stall:
	default:
		return nil, fmt.Errorf("%w: v2 break %q", ErrUnknownScenario, cfg.Break)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	b := &V2Breaker{cfg: cfg}
	b.accepted = func() {}
	b.handle, b.server.logf = b.serve, b.logf
	if err := b.listen(ctx, "v2 breaker"); err != nil {
		return nil, err
	}
	b.serveAll()
	return b, nil
}

// Stats returns a snapshot of what the breaker did so far.
func (b *V2Breaker) Stats() V2BreakerStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.stats
	s.V2Durations = append([]time.Duration(nil), b.stats.V2Durations...)
	s.Active = len(b.conns)
	return s
}

// v1Prefix is the first 16 bytes of a v1 version message on the network:
// magic, "version" and five zero bytes.
func v1Prefix(net wire.BitcoinNet) []byte {
	p := binary.LittleEndian.AppendUint32(nil, uint32(net))
	return append(p, "version\x00\x00\x00\x00\x00"...)
}

// serve runs one connection.
func (b *V2Breaker) serve(conn net.Conn) {
	start := time.Now()
	err := b.session(conn, start)
	_ = conn.Close()
	b.mu.Lock()
	delete(b.conns, conn)
	b.mu.Unlock()
	b.logf("connection from %s ended after %s: %v", conn.RemoteAddr(), time.Since(start).Round(time.Millisecond), err)
}

// session tells a v1 connection from a v2 one by its first 16 bytes,
// relays the first and breaks the second.
func (b *V2Breaker) session(conn net.Conn, start time.Time) error {
	first := make([]byte, 16)
	if _, err := io.ReadFull(conn, first); err != nil {
		return fmt.Errorf("first bytes: %w", err)
	}
	if bytes.Equal(first, v1Prefix(b.cfg.Params.Net)) {
		b.mu.Lock()
		b.stats.V1++
		b.mu.Unlock()
		return b.relay(conn, first)
	}
	b.mu.Lock()
	b.stats.V2++
	b.mu.Unlock()
	err := b.breakV2(conn, first)
	if errors.Is(err, errBroken) {
		// Wait for the node to give up on the connection.
		_, err = io.Copy(io.Discard, conn)
	}
	b.mu.Lock()
	b.stats.V2Durations = append(b.stats.V2Durations, time.Since(start))
	b.mu.Unlock()
	return err
}

// errBroken ends a break that left the connection open for the node to
// close.
var errBroken = errors.New("handshake broken: waiting for the node to close")

// breakV2 runs the configured break on a connection whose first 16 bytes
// (of the node's 64-byte key) are first.
func (b *V2Breaker) breakV2(conn net.Conn, first []byte) error {
	net := v2transport.BitcoinNet(b.cfg.Params.Net)
	switch b.cfg.Break {
	case V2Stall:
		return errBroken
	case V2Garbage:
		rest := make([]byte, 64-len(first))
		if _, err := io.ReadFull(conn, rest); err != nil {
			return err
		}
		junk := make([]byte, 64+v2transport.MaxGarbageLen+512)
		_, _ = rand.Read(junk)
		if _, err := conn.Write(junk); err != nil {
			return err
		}
		return errBroken
	case V2WrongKey:
		net ^= 0x5a5a5a5a // secrets for another network
	}
	p := v2transport.NewPeer()
	rw := &prefixedConn{prefix: first, conn: conn}
	p.UseReadWriter(rw)
	if err := p.RespondV2Handshake(64, net); err != nil {
		return fmt.Errorf("respond: %w", err)
	}
	if err := p.CompleteHandshake(false, nil, net); err != nil {
		if b.cfg.Break == V2WrongKey {
			return errBroken
		}
		return fmt.Errorf("complete: %w", err)
	}
	// V2Truncated: the node's version arrives; answer half a packet.
	if _, err := p.V2ReceivePacket(nil); err != nil {
		return fmt.Errorf("version packet: %w", err)
	}
	var packet bytes.Buffer
	p.UseReadWriter(struct {
		io.Reader
		io.Writer
	}{conn, &packet})
	if _, _, err := p.V2EncPacket(make([]byte, 120), nil, false); err != nil {
		return err
	}
	half := packet.Bytes()[:packet.Len()/2]
	if _, err := conn.Write(half); err != nil {
		return err
	}
	return errBroken
}

// prefixedConn reads prefix before conn, and writes to conn.
type prefixedConn struct {
	prefix []byte
	conn   net.Conn
}

// Read implements io.Reader.
func (c *prefixedConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.conn.Read(p)
}

// Write implements io.Writer.
func (c *prefixedConn) Write(p []byte) (int, error) { return c.conn.Write(p) }

// relay forwards a v1 connection (whose first bytes were already read)
// to the upstream node and back until either side ends.
func (b *V2Breaker) relay(conn net.Conn, first []byte) error {
	if b.cfg.Upstream == "" {
		return errors.New("v1 connection and no upstream")
	}
	var d net.Dialer
	up, err := d.DialContext(b.ctx, "tcp", b.cfg.Upstream)
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	defer up.Close()
	if _, err := up.Write(first); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(conn, up)
		_ = conn.Close()
		close(done)
	}()
	_, err = io.Copy(up, conn)
	_ = up.Close()
	<-done
	return err
}

// logf writes one log line.
func (b *V2Breaker) logf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(b.cfg.Log, "hostile[v2 %s] %s\n", b.cfg.Break, fmt.Sprintf(format, args...))
}
