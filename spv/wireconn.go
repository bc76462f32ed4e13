package spv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomwatch/bloomwatch/internal/peertext"
	"github.com/btcsuite/btcd/wire"
)

// v2KeyLen is the length of a BIP324 ElligatorSwift public key, the first
// thing an initiator sends.
const v2KeyLen = 64

// errV1Answer ends a v2 handshake whose peer answered with a v1 message
// (its first bytes are the network magic): the peer speaks only v1.
var errV1Answer = errors.New("peer answered the v2 key in v1")

// errKeyStallsV1 ends a v2 attempt before its key was sent: the key, read
// as a v1 message header, would make a btcd v1 peer wait (v1Stalls). The
// node connects again at once with a new key.
var errKeyStallsV1 = errors.New("v2 key would stall a btcd v1 peer: not sent")

// v1Stalls reports whether a v1 peer built on btcd's wire package would
// wait for more bytes after reading key as a v1 message: it takes the
// first 24 bytes for a header and, before it checks the magic, only
// refuses a payload length (bytes 16-19) above wire.MaxMessagePayload; a
// wrong magic with a smaller length makes it read and discard that many
// bytes first (wire.ReadMessageWithEncodingN, discardInput). A length
// above the 40 bytes that follow the header leaves it waiting for bytes
// that never come, and the attempt costs the whole handshake timeout
// instead of the immediate hang-up that sends the node to v1 (Bitcoin
// Core and bcoin check the magic first and hang up at once). The key is
// uniformly random: 1 key in 128 does that.
func v1Stalls(key []byte) bool {
	n := binary.LittleEndian.Uint32(key[16:20])
	return n > uint32(len(key)-wire.MessageHeaderSize) && n <= wire.MaxMessagePayload
}

// stallKeys, above zero only in tests (export_test.go), rewrites that many
// of the next v2 keys into keys that stall a btcd v1 peer, as chance does
// for 1 key in 128.
var stallKeys atomic.Int32

// wireConn is a peer connection as the node's side of the wire sees it.
// It counts the bytes each way and the first bytes received (to tell,
// after a failed v2 handshake, a v1 peer from a broken v2 one), and:
//
//   - in a v2 handshake it sends the 64-byte key at once and holds the
//     garbage that btcd's peer writes with it until the peer's first
//     bytes came: a v1 peer that does not hang up at once (bcoin 1.0.2
//     answers every 24 bytes it cannot parse with a reject message and
//     +10 ban score, and bans at 100) then sees 64 bytes, not up to
//     4,159, and the node answers its v1 reply by reconnecting over v1;
//   - with rekey set, it refuses to send a key that would stall a btcd v1
//     peer (v1Stalls): it closes the connection before any byte went out
//     and marks it (keyRefused), and the node connects again with a new
//     key;
//   - after the first message (flush's first call), it holds each write
//     until flush, called once per message (peer.Config OnWrite), so a
//     message and the decoy packet that pads it leave in one write:
//     what an on-path observer sees as one burst.
//
// Reads run on one goroutine at a time (btcd's negotiation, then its
// input handler); writes on one at a time (negotiation, then the output
// handler); the two may run concurrently.
type wireConn struct {
	net.Conn
	magic [4]byte
	// tap, when set, receives the size of every write to the network
	// and the command it carried ("" for handshake bytes).
	tap func(n int, cmd string)

	// rekey lets the first write refuse a key that would stall a btcd
	// v1 peer; set before the connection is used.
	rekey bool

	read, written atomic.Uint64
	v1Answer      atomic.Bool
	stallKey      atomic.Bool // the key was refused (v1Stalls)

	// --- reader only ---
	judging bool   // v2: the peer's first bytes are still to judge
	peek    []byte // bytes read while judging, not yet handed out
	// frames, on a v1 connection, follows the message frames in the
	// bytes read so that a payload over its command's cap (payloadCap)
	// ends the connection before btcd allocates it; oversize, when set,
	// is told of it first.
	frames   bool
	hdr      [wire.MessageHeaderSize]byte
	hdrN     int
	left     uint32 // payload bytes of the current frame still to come
	oversize func(cmd string, length uint32)

	wmu      sync.Mutex
	holding  bool   // v2: garbage held until the peer's first bytes
	keySent  bool   // v2: the key went out
	held     []byte // v2 handshake bytes held after the key
	coalesce bool   // after the first message: writes wait for flush
	pending  []byte
}

// newWireConn wraps conn; v2 marks a connection that starts with a v2
// handshake on network net.
func newWireConn(conn net.Conn, net wire.BitcoinNet, v2 bool) *wireConn {
	c := &wireConn{Conn: conn, judging: v2, holding: v2, frames: !v2}
	binary.LittleEndian.PutUint32(c.magic[:], uint32(net))
	return c
}

// received returns the number of bytes read from the peer so far.
func (c *wireConn) received() uint64 { return c.read.Load() }

// sent returns the number of bytes written to the peer so far.
func (c *wireConn) sent() uint64 { return c.written.Load() }

// keyRefused reports whether the v2 key was refused unsent (v1Stalls).
func (c *wireConn) keyRefused() bool { return c.stallKey.Load() }

// answeredV1 reports whether the peer answered the v2 key with a v1
// message.
func (c *wireConn) answeredV1() bool { return c.v1Answer.Load() }

// Read implements net.Conn. While a v2 handshake waits for the peer's
// first bytes it reads at least four of them: the network magic means a
// v1 answer (Read then fails with errV1Answer, handing btcd nothing);
// anything else releases the held garbage.
func (c *wireConn) Read(p []byte) (int, error) {
	if c.judging {
		if err := c.judge(); err != nil {
			return 0, err
		}
	}
	if len(c.peek) > 0 {
		n := copy(p, c.peek)
		c.peek = c.peek[n:]
		return n, nil
	}
	n, err := c.Conn.Read(p)
	c.read.Add(uint64(n))
	if c.frames && n > 0 {
		if ferr := c.follow(p[:n]); ferr != nil {
			return 0, ferr
		}
	}
	return n, err
}

// errOversized ends a v1 connection whose next message announces a
// payload over its command's cap (payloadCap), before it is read.
var errOversized = errors.New("message payload over its budget")

// follow advances the v1 frame parser over b, the bytes just read: at
// each complete header it checks the announced length against the
// command's cap.
func (c *wireConn) follow(b []byte) error {
	for len(b) > 0 {
		if c.left > 0 {
			k := min(uint32(len(b)), c.left)
			c.left -= k
			b = b[k:]
			continue
		}
		k := copy(c.hdr[c.hdrN:], b)
		c.hdrN += k
		b = b[k:]
		if c.hdrN < len(c.hdr) {
			return nil
		}
		c.hdrN = 0
		cmd := string(bytes.TrimRight(c.hdr[4:16], "\x00"))
		length := binary.LittleEndian.Uint32(c.hdr[16:20])
		if limit, ok := payloadCap(cmd); ok && length > limit {
			if c.oversize != nil {
				c.oversize(cmd, length)
			}
			return fmt.Errorf("%w: %s of %d bytes (budget %d)", errOversized, peertext.Clean(cmd, 16), length, limit)
		}
		c.left = length
	}
	return nil
}

// judge reads the peer's first four bytes of a v2 handshake into peek and
// decides: a v1 answer, or the release of the held garbage.
func (c *wireConn) judge() error {
	var buf [v2KeyLen]byte
	for len(c.peek) < len(c.magic) {
		n, err := c.Conn.Read(buf[:])
		c.read.Add(uint64(n))
		c.peek = append(c.peek, buf[:n]...)
		if err != nil {
			return err
		}
	}
	c.judging = false
	if bytes.Equal(c.peek[:len(c.magic)], c.magic[:]) {
		c.v1Answer.Store(true)
		return errV1Answer
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.holding = false
	if len(c.held) == 0 {
		return nil
	}
	held := c.held
	c.held = nil
	_, err := c.writeRaw(held, "")
	return err
}

// Write implements net.Conn: see wireConn for what it holds back.
func (c *wireConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	switch {
	case c.holding && !c.keySent:
		c.keySent = true
		if len(p) >= v2KeyLen && stallKeys.Load() > 0 && stallKeys.Add(-1) >= 0 {
			binary.LittleEndian.PutUint32(p[16:20], 1<<20)
		}
		if c.rekey && len(p) >= v2KeyLen && v1Stalls(p[:v2KeyLen]) {
			c.stallKey.Store(true)
			_ = c.Conn.Close() // the handshake's next read fails at once
			return 0, errKeyStallsV1
		}
		k := min(v2KeyLen, len(p))
		if _, err := c.writeRaw(p[:k], ""); err != nil {
			return 0, err
		}
		c.held = append(c.held, p[k:]...)
		return len(p), nil
	case c.holding:
		c.held = append(c.held, p...)
		return len(p), nil
	case c.coalesce:
		c.pending = append(c.pending, p...)
		return len(p), nil
	}
	return c.writeRaw(p, "")
}

// flush writes what waits since the last flush in one write, as the
// message cmd, and from the first call on makes writes wait for it.
func (c *wireConn) flush(cmd string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.coalesce = true
	if len(c.pending) == 0 {
		return nil
	}
	p := c.pending
	c.pending = c.pending[:0]
	_, err := c.writeRaw(p, cmd)
	if cap(c.pending) > 1<<16 {
		c.pending = nil // a filterload's 36 kB: do not keep it
	}
	return err
}

// writeRaw writes p to the network, counting it, within writeTimeout
// (budgets.go): a peer that leaves its socket unread fails the write. It
// is tapped before it is written, so that the tap sees it before any
// answer to it. The caller holds wmu.
func (c *wireConn) writeRaw(p []byte, cmd string) (int, error) {
	if c.tap != nil && len(p) > 0 {
		c.tap(len(p), cmd)
	}
	if err := c.Conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(p)
	c.written.Add(uint64(n))
	return n, err
}
