package spv

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// cmdMsg is a message of any command, for the account (it reads only the
// command).
type cmdMsg struct{ cmd string }

// BtcDecode, BtcEncode, Command and MaxPayloadLength implement wire.Message.
func (m cmdMsg) BtcDecode(io.Reader, uint32, wire.MessageEncoding) error { return nil }
func (m cmdMsg) BtcEncode(io.Writer, uint32, wire.MessageEncoding) error { return nil }
func (m cmdMsg) Command() string                                         { return m.cmd }
func (m cmdMsg) MaxPayloadLength(uint32) uint32                          { return 0 }

// accountFixture is a node with a frozen clock and one peer's account.
func accountFixture(t *testing.T, addr string) (*Node, *peerState, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	n, _ := newTestManager(t, watchtest.NewMemWatcher(1, p2wpkh(1)), Config{clock: clock})
	p, err := peer.NewOutboundPeer(&peer.Config{ChainParams: n.cfg.Network.Params}, addr)
	require.NoError(t, err)
	ps := &peerState{addr: addr, p: p}
	ps.acct = newPeerAccount(context.Background(), n, ps)
	t.Cleanup(ps.acct.close)
	return n, ps, clock
}

// TestEveryMessageTypeHasABudget floods the account with each message type
// btcd's wire knows (and commands it does not) at a frozen clock: a type
// with a rate budget lets its burst through, drops the rest and has the
// peer banned by the excess; an answer (infinite rate) is never dropped by
// the account (the manager scores unrequested answers).
func TestEveryMessageTypeHasABudget(t *testing.T) {
	cmds := append(hostile.FloodCommands(), unknownCmd)
	answers := 0
	for i, cmd := range cmds {
		t.Run(cmd, func(t *testing.T) {
			n, ps, _ := accountFixture(t, "sim:"+strconv.Itoa(i+1))
			b := budgetFor(cmd)
			flood := b.Burst + int(banThreshold/excessScore) + 5
			dropped := 0
			for range flood {
				if cmd == unknownCmd {
					ps.acct.onRead(wire.MessageHeaderSize, nil, wire.ErrUnknownMessage)
				} else {
					ps.acct.onRead(wire.MessageHeaderSize, cmdMsg{cmd}, nil)
				}
				if ps.acct.dropped() {
					dropped++
				}
			}
			_, banned := n.bans.IsBanned(ps.addr)
			if math.IsInf(b.Rate, 1) {
				answers++
				require.Zero(t, dropped, "an answer is bounded by requests, not dropped")
				require.False(t, banned)
				return
			}
			require.Greater(t, b.Rate, 0.0)
			require.Equal(t, flood-b.Burst, dropped, "all past the burst dropped")
			require.True(t, banned, "a flood of %s bans the peer", cmd)
			require.NotEmpty(t, b.Why)
		})
	}
	require.Equal(t, 6, answers, "merkleblock, block, tx and the three compact-filter answers")
}

// TestOversizedRejectBans: a reject larger than maxRejectPayload is
// dropped and bans the peer at once.
func TestOversizedRejectBans(t *testing.T) {
	n, ps, _ := accountFixture(t, "sim:1")
	ps.acct.onRead(wire.MessageHeaderSize+maxRejectPayload, cmdMsg{wire.CmdReject}, nil)
	require.False(t, ps.acct.dropped())
	ps.acct.onRead(wire.MessageHeaderSize+maxRejectPayload+1, cmdMsg{wire.CmdReject}, nil)
	require.True(t, ps.acct.dropped())
	_, banned := n.bans.IsBanned(ps.addr)
	require.True(t, banned)
}

// TestWriteQueueBound: bytes queued and unwritten past maxWriteQueueBytes
// score the peer once; written messages leave the count.
func TestWriteQueueBound(t *testing.T) {
	n, ps, _ := accountFixture(t, "sim:1")
	load := wire.NewMsgFilterLoad(make([]byte, wire.MaxFilterLoadFilterSize), 10, 0, wire.BloomUpdateAll)
	size := msgWire(load)
	for range int(maxWriteQueueBytes / size) {
		ps.acct.queue(load)
	}
	require.Zero(t, n.bans.Score(ps.addr), "within the bound")
	ps.acct.written(load)
	ps.acct.queue(load)
	require.Zero(t, n.bans.Score(ps.addr), "a written message left the count")
	ps.acct.queue(load)
	require.Equal(t, misbehaviorWriteQueue.Score(), n.bans.Score(ps.addr))
	require.True(t, ps.acct.over.Load())
	ps.acct.queue(load)
	require.Equal(t, misbehaviorWriteQueue.Score(), n.bans.Score(ps.addr), "scored once")

	// The pongs btcd queues for pings count too.
	_, ps2, clock := accountFixture(t, "sim:2")
	for range 100 {
		clock.now = clock.now.Add(time.Second) // within the ping budget
		ps2.acct.onRead(pongWire, wire.NewMsgPing(1), nil)
	}
	require.Equal(t, int64(100*pongWire), ps2.acct.held())
	ps2.acct.written(wire.NewMsgPong(1))
	require.Equal(t, int64(99*pongWire), ps2.acct.held())
}

// TestInboxBound: what the manager has not handled is held against
// maxInboxBytes; a message larger than the bound counts as the bound, and
// a hold gives up once the account is closed.
func TestInboxBound(t *testing.T) {
	_, ps, _ := accountFixture(t, "sim:1")
	ps.acct.onRead(10*maxInboxBytes, cmdMsg{wire.CmdBlock}, nil)
	held, ok := ps.acct.hold()
	require.True(t, ok)
	require.Equal(t, int64(maxInboxBytes), held)
	require.False(t, ps.acct.inbox.TryAcquire(1), "the bound is reached")
	ps.acct.release(held)
	require.True(t, ps.acct.inbox.TryAcquire(1))
	ps.acct.inbox.Release(1)

	_, _ = ps.acct.hold()
	ps.acct.close()
	_, ok = ps.acct.hold()
	require.False(t, ok, "a closed account's reader gives up")
}

// deadlineConn records the write deadline in force at each write.
type deadlineConn struct {
	net.Conn
	mu       sync.Mutex
	deadline time.Time
	atWrite  []time.Duration
}

// SetWriteDeadline records the deadline.
func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	return nil
}

// Write records the time left to the deadline in force.
func (c *deadlineConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.atWrite = append(c.atWrite, time.Until(c.deadline))
	c.deadline = time.Time{}
	return len(p), nil
}

// TestEveryWriteHasADeadline: each network write of a wireConn (handshake
// bytes, coalesced messages) runs under a fresh writeTimeout deadline.
func TestEveryWriteHasADeadline(t *testing.T) {
	dc := &deadlineConn{}
	wc := newWireConn(dc, wire.TestNet, false)
	_, err := wc.Write([]byte("handshake"))
	require.NoError(t, err)
	require.NoError(t, wc.flush("version"))
	_, err = wc.Write([]byte("message"))
	require.NoError(t, err)
	require.NoError(t, wc.flush("ping"))
	require.Len(t, dc.atWrite, 2)
	for _, d := range dc.atWrite {
		require.Greater(t, d, writeTimeout-time.Minute/2)
		require.LessOrEqual(t, d, writeTimeout)
	}
}

// TestLogLimiterSuppressesAndEscapes: one peer's lines of one kind pass
// up to the burst, the rest are counted into one "suppressed" line when
// the bucket refills; other kinds, other peers and peerless lines pass;
// every string is escaped and capped.
func TestLogLimiterSuppressesAndEscapes(t *testing.T) {
	var buf bytes.Buffer
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	log := slog.New(newLogLimiter(slog.NewTextHandler(&buf, nil), clock))
	for range 1000 {
		log.Info("stale announcement", "peer", "p1", "hash", "x")
	}
	log.Info("other kind", "peer", "p1")
	log.Info("stale announcement", "peer", "p2")
	for range 100 {
		log.Info("no peer")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, logBurst+1+1+100)

	buf.Reset()
	clock.now = clock.now.Add(time.Minute)
	log.With("peer", "p1").Info("stale announcement")
	out := buf.String()
	require.Contains(t, out, "log lines suppressed")
	require.Contains(t, out, "suppressed=980")
	require.Equal(t, 2, strings.Count(out, "\n"))

	buf.Reset()
	log.Info("peer rejected a message", "peer", "p3", "reason", "\r\x1b]52;c;aGk=\x07"+strings.Repeat("\x00", 1<<20))
	out = buf.String()
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\r")
	require.Less(t, len(out), 2*logFieldMax)
	require.Contains(t, out, `\x1b]52`)
}

// chunkConn hands out its bytes a few at a time.
type chunkConn struct {
	net.Conn
	data  []byte
	chunk int
}

// Read hands out at most chunk bytes.
func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.chunk)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// TestOversizedFrameRefusedBeforeItsPayload: on a v1 connection the frame
// parser follows messages split anywhere across reads and refuses a
// reject that announces more than its cap at its header, before a byte
// of the payload is read; the frames before it pass whole.
func TestOversizedFrameRefusedBeforeItsPayload(t *testing.T) {
	net := wire.TestNet
	var stream bytes.Buffer
	for _, m := range []wire.Message{wire.NewMsgPing(1), wire.NewMsgReject(wire.CmdTx, wire.RejectInvalid, "short"), wire.NewMsgHeaders()} {
		_, err := wire.WriteMessageN(&stream, m, wire.ProtocolVersion, net)
		require.NoError(t, err)
	}
	good := stream.Len()
	_, err := wire.WriteMessageN(&stream, wire.NewMsgReject(wire.CmdTx, wire.RejectInvalid, strings.Repeat("x", 2*maxRejectPayload)), wire.ProtocolVersion, net)
	require.NoError(t, err)
	for _, chunk := range []int{1, 5, 24, 1000} {
		var told string
		wc := newWireConn(&chunkConn{data: append([]byte(nil), stream.Bytes()...), chunk: chunk}, net, false)
		wc.oversize = func(cmd string, _ uint32) { told = cmd }
		read := 0
		buf := make([]byte, 64)
		for {
			n, err := wc.Read(buf)
			read += n
			if err != nil {
				require.ErrorIs(t, err, errOversized, "chunk %d", chunk)
				break
			}
		}
		require.Equal(t, wire.CmdReject, told)
		require.LessOrEqual(t, read, good+wire.MessageHeaderSize, "chunk %d: no payload byte of the oversized reject handed on", chunk)
		require.GreaterOrEqual(t, read, good, "chunk %d: the frames before it pass", chunk)
	}
}
