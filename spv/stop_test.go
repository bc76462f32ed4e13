package spv

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/stretchr/testify/require"
)

// nodeGoroutines returns the stacks of the goroutines running code of
// package spv.
func nodeGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "bloomwatch/spv.") && !strings.Contains(g, "bloomwatch/spv.TestStop") &&
			!strings.Contains(g, "bloomwatch/spv.nodeGoroutines") {
			out = append(out, g)
		}
	}
	return out
}

// TestStopWaitsForEveryGoroutine starts and stops nodes, by Stop and by
// the end of the caller's context followed by Stop, and checks at once,
// without waiting, that no goroutine of the node is left when Stop
// returns: every one is in a wait group Stop waits for, the one that
// watches the caller's context included (on main before this test it was
// not: it was seen alive after Stop within 40 runs).
func TestStopWaitsForEveryGoroutine(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	ln, err := netListen()
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nobody listens: the node keeps dialing with backoff
	g := nodeGoroutines()
	require.LessOrEqual(t, len(g), 0, "node goroutines before the test:\n%s", strings.Join(g, "\n\n"))
	for i := range 40 {
		n, err := New(Config{Network: net, DataDir: t.TempDir(), Connect: []string{addr}, Watcher: watchtest.NewMemWatcher(1), Tuning: Tuning{RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, n.Start(ctx))
		_ = n.Subscribe() // its queue's goroutine ends with the node
		if i%2 == 1 {
			cancel() // the node stops itself; Stop then waits for it
		}
		require.NoError(t, n.Stop())
		g := nodeGoroutines()
		require.LessOrEqual(t, len(g), 0, "run %d: %d node goroutines after Stop returned:\n%s", i, len(g), strings.Join(g, "\n\n"))
		cancel()
	}
}
