package reliability

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// The flood soak: for every message type (hostile.FloodCommands) and for a
// peer that never reads, a peer floods the real binary's `sync` for a
// while; the sync's peak RSS and its log's growth must stay within their
// bounds, and the peer must be disconnected (and, for what the node
// reads, banned) or its messages never held.

const (
	// soakRSSBound bounds the sync's peak RSS (VmHWM) during a flood: an
	// idle sync's (docs/RELIABILITY.md, section 9) and what one message
	// of the flooded type costs at a time (a 1 MiB reject decoded once
	// before the ban), never one per message.
	soakRSSBound = 96 << 20
	// soakLogBound bounds the log of a sync flooded at the info level,
	// its start included: a handful of rate-limited lines about the peer.
	soakLogBound = 256 << 10
	// soakShort is each flood's length in CI; BLOOMWATCH_SOAK sets
	// another (the docs' figures: BLOOMWATCH_SOAK=30s).
	soakShort = 2 * time.Second
)

// soakDuration is each flood's length.
func soakDuration(t *testing.T) time.Duration {
	s := os.Getenv("BLOOMWATCH_SOAK")
	if s == "" {
		return soakShort
	}
	d, err := time.ParseDuration(s)
	require.NoError(t, err, "BLOOMWATCH_SOAK=%q: want a positive duration", s)
	require.Greater(t, d, time.Duration(0), "BLOOMWATCH_SOAK=%q: want a positive duration", s)
	return d
}

// soakCase is one flood: a command, and whether the peer stops reading.
type soakCase struct {
	name   string
	cmd    string
	noRead bool
}

// soakCases are the floods: every message type, then pings from a peer
// that never reads.
func soakCases() []soakCase {
	var out []soakCase
	for _, cmd := range hostile.FloodCommands() {
		out = append(out, soakCase{name: cmd, cmd: cmd})
	}
	return append(out, soakCase{name: "never-reads", cmd: wire.CmdPing, noRead: true})
}

// soakResult is what one flood measured.
type soakResult struct {
	peakRSS    int64 // VmHWM, bytes
	logBytes   int64 // the whole log of the run, rotated files included
	sent       int
	sentBytes  int64
	disconnect time.Duration // flood start to the node's disconnect (0: never)
	banned     bool
	conns      int
}

func TestFloodSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary against a flooding peer for every message type")
	}
	bin := binary(t, t.TempDir())
	d := soakDuration(t)
	addr, err := btcutil.NewAddressWitnessPubKeyHash(make([]byte, 20), &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	t.Logf("| flood | sent | sent bytes | peak RSS MiB | log bytes | to disconnect | banned |")
	for _, sc := range soakCases() {
		t.Run(sc.name, func(t *testing.T) {
			r := soakOne(t, bin, addr.EncodeAddress(), sc, d)
			dis := "never"
			if r.disconnect > 0 {
				dis = r.disconnect.Round(time.Millisecond).String()
			}
			t.Logf("| %s | %d | %d | %.1f | %d | %s | %v |", sc.name, r.sent, r.sentBytes, float64(r.peakRSS)/(1<<20), r.logBytes, dis, r.banned)
			require.LessOrEqual(t, r.peakRSS, int64(soakRSSBound), "peak RSS %d MiB > %d MiB", r.peakRSS>>20, soakRSSBound>>20)
			require.LessOrEqual(t, r.logBytes, int64(soakLogBound), "log grew %d bytes > %d", r.logBytes, soakLogBound)
			require.False(t, r.disconnect == 0 && r.sent > 0, "the flooding peer was never disconnected (%d messages)", r.sent)
		})
	}
}

// soakOne runs one flood against a fresh sync.
func soakOne(t *testing.T, bin, addr string, sc soakCase, d time.Duration) soakResult {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := hostile.StartFlooder(ctx, hostile.FloodConfig{Params: &chaincfg.RegressionNetParams, Cmd: sc.cmd, NoRead: sc.noRead})
	require.NoError(t, err)
	defer f.Close()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "bloomwatch.log")
	cmd := exec.Command(bin, "sync", "--no-tui", "--datadir", dir, "--network", "regtest",
		"--address", addr, "--birthday", "1", "--connect", f.Addr(), "--transport", "v1",
		"--log-file", logPath, "--log-level", "info", "--peer-timeout", "0")
	cmd.Stdout, cmd.Stderr = nil, nil
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}()
	// The flood starts at the node's filterload; it lasts d from then.
	began := time.Now()
	for f.Stats().FloodStart.IsZero() {
		select {
		case <-done:
			require.FailNow(t, "the sync ended before the flood began")
		default:
		}
		require.LessOrEqual(t, time.Since(began), time.Minute, "no filterload within a minute: %+v", f.Stats())
		time.Sleep(10 * time.Millisecond)
	}
	deadline := f.Stats().FloodStart.Add(d)
	var peak int64
	for time.Now().Before(deadline) {
		peak = max(peak, vmHWM(cmd.Process.Pid))
		time.Sleep(50 * time.Millisecond)
	}
	peak = max(peak, vmHWM(cmd.Process.Pid))
	st := f.Stats() // before the sync stops: what the flood made it do
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the sync did not stop within 30 s of SIGINT")
	}
	r := soakResult{peakRSS: peak, logBytes: logSize(logPath), sent: st.Sent, sentBytes: st.SentBytes, conns: st.Connections}
	if !st.Ended.IsZero() {
		r.disconnect = st.Ended.Sub(st.FloodStart)
	}
	bans, _ := os.ReadFile(filepath.Join(dir, "spv", "bans.json"))
	r.banned = strings.Contains(string(bans), f.Addr())
	return r
}

// vmHWM returns the peak resident set of pid (VmHWM), 0 when unreadable.
func vmHWM(pid int) int64 {
	fh, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// logSize returns the bytes of the log and its rotated files.
func logSize(path string) int64 {
	var n int64
	matches, _ := filepath.Glob(path + "*")
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil {
			n += fi.Size()
		}
	}
	return n
}
