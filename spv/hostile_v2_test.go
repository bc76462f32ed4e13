package spv_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// logBuffer is a slog handler's output, safe to read while the node logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// count returns how many lines hold every one of parts.
func (b *logBuffer) count(parts ...string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, line := range strings.Split(b.buf.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all && line != "" {
			n++
		}
	}
	return n
}

// v2HandshakeTimeout is the handshake bound of the broken-handshake tests.
const v2HandshakeTimeout = 2 * time.Second

// TestBrokenV2Handshakes connects a node (auto, the breaker an explicit
// peer) to a peer that breaks the BIP324 handshake one way and relays v1
// connections to an honest btcd. A stall (nothing received) costs the
// handshake timeout and is retried over v1, which syncs; garbage, a
// wrong key and a truncated packet (something received) are dropped,
// never retried over v1, each attempt bounded by the handshake timeout,
// and a second, honest peer beside the breaker still syncs the wallet.
// Under --transport v2 the stall is refused as plaintext.
func TestBrokenV2Handshakes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{V2Transport: true})
	c := newTransportChain(t, h.Chain)
	for _, brk := range hostile.V2Breaks() {
		t.Run(string(brk), func(t *testing.T) {
			b, err := hostile.StartV2Breaker(t.Context(), hostile.V2BreakerConfig{
				Params: regtest(t).Params, Break: brk, Upstream: h.Node().P2PAddr(),
			})
			require.NoError(t, err)
			defer b.Close()
			logs := &logBuffer{}
			if brk == hostile.V2Stall {
				mark := time.Now()
				n := brokenV2Node(t, c, logs, spv.TransportAuto, b.Addr())
				implWaitAt(t, n, c.truth.TipHash, time.Minute)
				took := time.Since(mark)
				peers := n.Peers()
				require.Len(t, peers, 1, "peers %+v, want the breaker over v1", peers)
				require.Equal(t, transcript.TransportV1, peers[0].Transport, "peers %+v, want the breaker over v1", peers)
				st := b.Stats()
				require.Equal(t, 1, st.V2, "breaker %+v; want one v2 attempt, then v1", st)
				require.GreaterOrEqual(t, st.V1, 1, "breaker %+v; want one v2 attempt, then v1", st)
				require.Equal(t, 1, logs.count("reconnecting over v1", `v2_handshake="sent nothing"`), "breaker %+v; want one v2 attempt, then v1", st)
				require.LessOrEqual(t, st.V2Durations[0], v2HandshakeTimeout+time.Second, "the stalled v2 attempt lasted %s, bound %s", st.V2Durations[0], v2HandshakeTimeout)
				t.Logf("synced over v1 after a stalled v2 handshake in %s (the attempt: %s)", took.Round(time.Millisecond), st.V2Durations[0].Round(time.Millisecond))

				refused := &logBuffer{}
				n2 := brokenV2Node(t, c, refused, spv.TransportV2, b.Addr())
				waitLog(t, refused, time.Minute, "peer refused", "plaintext")
				st2 := n2.Status()
				require.Empty(t, st2.Peers, "under --transport v2: %+v", st2)
				require.False(t, st2.Synced, "under --transport v2: %+v", st2)
				return
			}
			// Beside an honest peer: the wallet syncs, the breaker is
			// dropped attempt after attempt, never reached over v1.
			n := brokenV2Node(t, c, logs, spv.TransportAuto, b.Addr(), h.Node().P2PAddr())
			implWaitAt(t, n, c.truth.TipHash, time.Minute)
			waitLog(t, logs, time.Minute, "v2 handshake failed", b.Addr())
			require.NoError(t, waitBreaker(b, 2, time.Minute))
			st := b.Stats()
			require.Equal(t, 0, st.V1, "the broken v2 peer was reached over v1 %d times", st.V1)
			for i, d := range st.V2Durations {
				require.LessOrEqual(t, d, v2HandshakeTimeout+time.Second, "broken attempt %d lasted %s, bound %s", i, d, v2HandshakeTimeout)
			}
			for _, p := range n.Peers() {
				require.NotEqual(t, b.Addr(), p.Addr, "the breaker is a peer: %+v", p)
			}
			mark := time.Now()
			require.NoError(t, n.Stop())
			d := time.Since(mark)
			require.LessOrEqual(t, d, 5*time.Second, "stop took %s", d)
			t.Logf("%s: %d v2 attempts dropped, lasting %v", brk, st.V2, st.V2Durations)
		})
	}
}

// brokenV2Node starts a node on a fresh wallet of c's keyring, logging to
// logs, syncing from addrs under tp with a short handshake bound.
func brokenV2Node(t *testing.T, c *transportChain, logs *logBuffer, tp spv.Transport, addrs ...string) *spv.Node {
	t.Helper()
	dir := t.TempDir()
	w := implWallet(t, t, filepath.Join(dir, "wallet"), c.xpub, c.birth, 0)
	cfg := implConfig(filepath.Join(dir, "spv"), w, addrs...)
	cfg.Transport = tp
	cfg.Tuning.HandshakeTimeout = v2HandshakeTimeout
	cfg.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() { _ = n.Stop() })
	return n
}

// waitLog waits until a log line holds every one of parts.
func waitLog(t *testing.T, logs *logBuffer, d time.Duration, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for logs.count(parts...) == 0 {
		require.False(t, time.Now().After(deadline), "no log line with %q after %s", parts, d)
		time.Sleep(20 * time.Millisecond)
	}
}

// waitBreaker waits until the breaker ended n v2 attempts.
func waitBreaker(b *hostile.V2Breaker, n int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for len(b.Stats().V2Durations) < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d broken attempts ended after %s, want %d", len(b.Stats().V2Durations), d, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}
