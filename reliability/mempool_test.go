package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
)

// maxBalanceRSS is the most memory `bloomwatch wallet balance` may take
// after a fabricated payment (without the budgets: 2.4 GiB, and death under a 4 GiB
// address-space limit, at 70,000 outputs).
const maxBalanceRSS = 100 << 20

// logLines collects a child's stderr lines as they come.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

// has reports whether a line holds every one of words.
func (l *logLines) has(words ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true
		}
	}
	return false
}

// String returns the lines so far.
func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// maxRSS returns the peak resident memory of a finished child, in bytes
// (Linux reports ru_maxrss in KiB).
func maxRSS(t *testing.T, cmd *exec.Cmd) int64 {
	t.Helper()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, ok, "no rusage for pid %d", cmd.ProcessState.Pid())
	return ru.Maxrss << 10
}

// TestFabricatedManyOutputPaymentKeepsSyncing runs the real binary: a
// `bloomwatch sync` of an xpub wallet from a hostile wire-protocol peer
// (in this process) and an honest btcd, both on 127.0.0.1. Once synced the
// hostile peer answers the mempool request with a fabricated payment of
// 70,000 outputs (2.2 MB, made-up input) to one wallet address. Without
// the budgets the next filter could not be built and the sync stopped
// ("filter would match everything ... 70053 elements"), a restart failed,
// and `wallet balance` needed 2.4 GiB. Now the peer is banned for an
// invalid transaction (more than 1,000,000 bytes without witness), the
// node goes on syncing (it applies the block btcd mines next), and
// `wallet balance` prints the chain's balance in under 100 MiB (peak RSS
// of the child, from its rusage).
func TestFabricatedManyOutputPaymentKeepsSyncing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and runs the binary")
	}
	h := testnet.NewT(t, testnet.Options{})
	k, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	addr, err := k.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	require.NoError(t, err)
	_, err = h.Pay([]*wire.TxOut{wire.NewTxOut(250_000, addr)})
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
	xpub, err := k.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	fake := wire.NewMsgTx(wire.TxVersion)
	fake.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{0xfa, 0x7e}, 3), nil, nil))
	for range 70_000 {
		fake.AddTxOut(wire.NewTxOut(1_000, addr))
	}
	mem := hostile.NewFakeMempool(h.Node().RPC(), fake)
	hp, err := hostile.Start(context.Background(), hostile.Config{Upstream: mem, Params: h.Params(), Scenario: hostile.Honest})
	require.NoError(t, err)
	defer hp.Close()
	bin := binary(t, t.TempDir())
	datadir := filepath.Join(t.TempDir(), "d")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sync := exec.CommandContext(ctx, bin, "sync", "--no-tui", "--json", "--datadir", datadir, "--network", "regtest",
		"--xpub", xpub, "--birthday", strconv.Itoa(int(start+1)), "--connect", hp.Addr(), "--connect", h.Node().P2PAddr(),
		"--peer-timeout", "60s", "--log-level", "info")
	stderr, err := sync.StderrPipe()
	require.NoError(t, err)
	var log logLines
	require.NoError(t, sync.Start())
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			log.mu.Lock()
			log.lines = append(log.lines, sc.Text())
			log.mu.Unlock()
		}
	}()
	exited := make(chan error, 1)
	go func() { <-scanned; exited <- sync.Wait() }()
	await := func(what string, words ...string) {
		t.Helper()
		for !log.has(words...) {
			select {
			case err := <-exited:
				require.FailNow(t, fmt.Sprintf("sync exited (%v) before %s:\n%s", err, what, log.String()))
			case <-ctx.Done():
				require.FailNow(t, fmt.Sprintf("no %s:\n%s", what, log.String()))
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	await("ban of the hostile peer", "peer misbehaved", hp.Addr(), "invalid transaction")
	require.NotEqual(t, 0, mem.Served(fake.TxHash()), "the hostile peer never served its fake")
	hashes, err := h.Mine(1)
	require.NoError(t, err)
	_, tip, err := h.Node().BestBlock()
	require.NoError(t, err)
	await("the next block", "synced", fmt.Sprintf("height=%d", tip), "hash="+hashes[0].String())
	require.NoError(t, sync.Process.Signal(syscall.SIGINT))
	select {
	case err := <-exited:
		require.NoError(t, err, "sync: %v\n%s", err, log.String())
	case <-time.After(time.Minute):
		require.FailNow(t, fmt.Sprintf("sync still running a minute after SIGINT\n%s", log.String()))
	}
	t.Logf("sync peak RSS %.1f MiB", float64(maxRSS(t, sync))/(1<<20))

	bal := exec.CommandContext(ctx, bin, "wallet", "balance", "--datadir", datadir, "--json")
	out, err := bal.Output()
	require.NoError(t, err, "wallet balance: %v\n%s", err, out)
	rss := maxRSS(t, bal)
	t.Logf("wallet balance peak RSS %.1f MiB: %s", float64(rss)/(1<<20), out)
	require.LessOrEqual(t, rss, int64(maxBalanceRSS), "wallet balance took %d MiB, more than %d", rss>>20, maxBalanceRSS>>20)
	var got struct {
		Confirmed   int64 `json:"confirmed_sat"`
		Unconfirmed int64 `json:"unconfirmed_sat"`
	}
	err = json.Unmarshal(out, &got)
	require.NoError(t, err, "balance: %v\n%s", err, out)
	require.Equal(t, int64(250_000), got.Confirmed, "balance %+v, want 250,000 sat confirmed and nothing unconfirmed", got)
	require.Equal(t, int64(0), got.Unconfirmed, "balance %+v, want 250,000 sat confirmed and nothing unconfirmed", got)
}
