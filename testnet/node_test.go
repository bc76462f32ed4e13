package testnet

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireGone checks that no process with pid exists any more.
func requireGone(t *testing.T, pid int) {
	t.Helper()
	err := syscall.Kill(pid, 0)
	require.ErrorIs(t, err, syscall.ESRCH, "btcd pid %d still exists", pid)
}

func TestStartStopNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n, err := StartNode(ctx, Config{})
	require.NoError(t, err)
	pid, dir := n.PID(), n.DataDir()
	require.Positive(t, pid)
	require.NoError(t, syscall.Kill(pid, 0), "btcd should be running")
	require.Regexp(t, `^127\.0\.0\.1:\d+$`, n.P2PAddr())
	require.Equal(t, "regtest", n.Params().Name)

	hashes, err := n.Generate(3)
	require.NoError(t, err)
	require.Len(t, hashes, 3)
	require.NoError(t, n.WaitForHeight(ctx, 3))
	best, height, err := n.BestBlock()
	require.NoError(t, err)
	require.Equal(t, int32(3), height)
	require.Equal(t, *hashes[2], *best)

	require.NoError(t, n.Stop())
	requireGone(t, pid)
	_, err = os.Stat(dir)
	require.True(t, errors.Is(err, os.ErrNotExist), "temp datadir must be removed, stat: %v", err)
	require.NoError(t, n.Stop(), "Stop is idempotent")
	_, err = n.Generate(1)
	require.ErrorIs(t, err, ErrStopped)
}

func TestNodeKilledExternally(t *testing.T) {
	ctx := context.Background()
	n, err := StartNode(ctx, Config{Network: Simnet})
	require.NoError(t, err)
	require.Equal(t, "simnet", n.Params().Name)
	pid := n.PID()
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, n.Exited, 10*time.Second, 10*time.Millisecond)
	_, err = n.Generate(1)
	require.ErrorIs(t, err, ErrNodeExited)
	require.NoError(t, n.Stop())
	requireGone(t, pid)
}

func TestStartNodeBadArgs(t *testing.T) {
	_, err := StartNode(context.Background(), Config{Args: []string{"--no-such-flag"}})
	require.ErrorIs(t, err, ErrNodeExited)
	require.Contains(t, err.Error(), "no-such-flag")

	_, err = StartNode(context.Background(), Config{Network: "mainnet"})
	require.ErrorIs(t, err, ErrUnknownNetwork)
}

func TestConnectDisconnect(t *testing.T) {
	ctx := context.Background()
	a, err := StartNode(ctx, Config{})
	require.NoError(t, err)
	defer a.Stop()
	b, err := StartNode(ctx, Config{})
	require.NoError(t, err)
	defer b.Stop()

	_, err = a.Generate(5)
	require.NoError(t, err)
	require.NoError(t, b.ConnectTo(a))
	_, hb, err := b.BestBlock()
	require.NoError(t, err)
	require.Equal(t, int32(5), hb)

	require.NoError(t, b.DisconnectFrom(a))
	_, err = a.Generate(2)
	require.NoError(t, err)
	_, hb, err = b.BestBlock()
	require.NoError(t, err)
	require.Equal(t, int32(5), hb, "disconnected node must not follow")

	require.NoError(t, a.ConnectTo(b))
	require.NoError(t, b.WaitForHeight(ctx, 7))
	require.NoError(t, a.ConnectTo(b), "connecting connected nodes is a no-op")
}

// TestStopKillsWedgedNode stops a btcd that cannot react (SIGSTOP): Stop
// must fall back to SIGKILL after the timeout and still reap it.
func TestStopKillsWedgedNode(t *testing.T) {
	n, err := StartNode(context.Background(), Config{StopTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	pid := n.PID()
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	start := time.Now()
	err = n.Stop()
	require.ErrorIs(t, err, ErrKilled)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	requireGone(t, pid)
	require.ErrorIs(t, n.Stop(), ErrKilled, "Stop returns the first result again")
}

// TestLogDestinations checks both Config.Log modes: a file gets btcd's
// log while it runs, another writer gets it at Stop.
func TestLogDestinations(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/btcd.log")
	require.NoError(t, err)
	defer f.Close()
	n, err := StartNode(context.Background(), Config{Log: f})
	require.NoError(t, err)
	_, err = n.Generate(1)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(f.Name())
		return strings.Contains(string(data), "Block submitted via CPU miner accepted")
	}, 10*time.Second, 20*time.Millisecond, "live log")
	require.Contains(t, n.Tail(), "Block submitted via CPU miner accepted", "Tail reads btcd's own log file")
	require.NoError(t, n.Stop())

	var buf strings.Builder
	n, err = StartNode(context.Background(), Config{Log: &buf})
	require.NoError(t, err)
	_, err = n.Generate(1)
	require.NoError(t, err)
	require.Empty(t, buf.String(), "a non-file writer gets the log at Stop")
	require.NoError(t, n.Stop())
	require.Contains(t, buf.String(), "Block submitted via CPU miner accepted")
	require.Contains(t, buf.String(), "Shutdown complete")
}
