package spv_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// countWriter counts the bytes of the log written to it.
type countWriter struct {
	mu sync.Mutex
	n  int
}

// Write counts p.
func (c *countWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += len(p)
	return len(p), nil
}

// bytes returns the count.
func (c *countWriter) bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// floodLogBound bounds the log lines a flood of one message type may
// make at the info level: the rate-limited lines of a few kinds about one
// peer, not one per message.
const floodLogBound = 64 << 10

// floodEndLimit bounds the wait for a flooding peer's disconnect: a
// failed test, not a measured figure (the soak measures it).
const floodEndLimit = 2 * time.Minute

// floodNode starts a node whose only peer is a flooder of cmd, logging at
// the info level to the returned counter.
func floodNode(t *testing.T, cmd string, noRead bool) (*spv.Node, *hostile.Flooder, *countWriter) {
	t.Helper()
	net := regtest(t)
	f, err := hostile.StartFlooder(context.Background(), hostile.FloodConfig{Params: net.Params, Cmd: cmd, NoRead: noRead})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	log := &countWriter{}
	n := startNodeWith(t, spv.Config{
		Network: net, DataDir: t.TempDir(), Connect: []string{f.Addr()},
		Watcher:   watchtest.NewMemWatcher(1, []byte{0x00, 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}),
		Log:       slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Transport: spv.TransportV1, Tuning: spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second},
	})
	return n, f, log
}

// waitFloodEnded waits until the node ended the flooder's first
// connection.
func waitFloodEnded(t *testing.T, f *hostile.Flooder) hostile.FloodStats {
	t.Helper()
	began := time.Now()
	for {
		st := f.Stats()
		if !st.Ended.IsZero() {
			return st
		}
		require.LessOrEqual(t, time.Since(began), floodEndLimit, "the node never disconnected the flooding peer: %+v", st)
		time.Sleep(20 * time.Millisecond)
	}
}

// banned reports whether addr is among the node's bans.
func banned(n *spv.Node, addr string) bool {
	for _, b := range n.Bans() {
		if b.Addr == addr {
			return true
		}
	}
	return false
}

// TestNeverReadingPeerIsDisconnected: a peer that stops reading after
// the filterload and streams pings (each makes btcd's peer queue a pong
// the peer never takes) is disconnected and banned.
func TestNeverReadingPeerIsDisconnected(t *testing.T) {
	n, f, _ := floodNode(t, wire.CmdPing, true)
	st := waitFloodEnded(t, f)
	require.True(t, banned(n, f.Addr()), "the pinging peer is banned")
	t.Logf("disconnected after %d pings (%d bytes) in %v", st.Sent, st.SentBytes, st.Ended.Sub(st.FloodStart))
}

// TestRejectFloodBoundsTheLog: rejects with a 1 MiB reason are refused
// at their size (the peer is banned at the first) and never reach the
// log whole.
func TestRejectFloodBoundsTheLog(t *testing.T) {
	n, f, log := floodNode(t, wire.CmdReject, false)
	st := waitFloodEnded(t, f)
	require.True(t, banned(n, f.Addr()))
	require.Less(t, log.bytes(), floodLogBound, "log bytes after %d rejects of 1 MiB", st.Sent)
}

// TestInvFloodBoundsTheLog: invs of random unknown blocks (each logged as
// a stale announcement before) are rate-limited: the peer is banned and
// the log stays small.
func TestInvFloodBoundsTheLog(t *testing.T) {
	n, f, log := floodNode(t, wire.CmdInv, false)
	st := waitFloodEnded(t, f)
	require.True(t, banned(n, f.Addr()))
	require.Less(t, log.bytes(), floodLogBound, "log bytes after %d invs", st.Sent)
}
