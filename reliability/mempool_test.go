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
	if !ok {
		t.Fatalf("no rusage for pid %d", cmd.ProcessState.Pid())
	}
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
	if err != nil {
		t.Fatal(err)
	}
	_, start, err := h.Node().BestBlock()
	if err != nil {
		t.Fatal(err)
	}
	addr, err := k.PkScript(testnet.PurposeBIP84, testnet.BranchExternal, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Pay([]*wire.TxOut{wire.NewTxOut(250_000, addr)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Mine(1); err != nil {
		t.Fatal(err)
	}
	xpub, err := k.Xpub(testnet.PurposeBIP84)
	if err != nil {
		t.Fatal(err)
	}
	fake := wire.NewMsgTx(wire.TxVersion)
	fake.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{0xfa, 0x7e}, 3), nil, nil))
	for range 70_000 {
		fake.AddTxOut(wire.NewTxOut(1_000, addr))
	}
	mem := hostile.NewFakeMempool(h.Node().RPC(), fake)
	hp, err := hostile.Start(context.Background(), hostile.Config{Upstream: mem, Params: h.Params(), Scenario: hostile.Honest})
	if err != nil {
		t.Fatal(err)
	}
	defer hp.Close()
	bin := binary(t, t.TempDir())
	datadir := filepath.Join(t.TempDir(), "d")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sync := exec.CommandContext(ctx, bin, "sync", "--no-tui", "--json", "--datadir", datadir, "--network", "regtest",
		"--xpub", xpub, "--birthday", strconv.Itoa(int(start+1)), "--connect", hp.Addr(), "--connect", h.Node().P2PAddr(),
		"--peer-timeout", "60s", "--log-level", "info")
	stderr, err := sync.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var log logLines
	if err := sync.Start(); err != nil {
		t.Fatal(err)
	}
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
				t.Fatalf("sync exited (%v) before %s:\n%s", err, what, log.String())
			case <-ctx.Done():
				t.Fatalf("no %s:\n%s", what, log.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	await("ban of the hostile peer", "peer misbehaved", hp.Addr(), "invalid transaction")
	if mem.Served(fake.TxHash()) == 0 {
		t.Fatal("the hostile peer never served its fake")
	}
	hashes, err := h.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	_, tip, err := h.Node().BestBlock()
	if err != nil {
		t.Fatal(err)
	}
	await("the next block", "synced", fmt.Sprintf("height=%d", tip), "hash="+hashes[0].String())
	if err := sync.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("sync: %v\n%s", err, log.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("sync still running a minute after SIGINT\n%s", log.String())
	}
	t.Logf("sync peak RSS %.1f MiB", float64(maxRSS(t, sync))/(1<<20))

	bal := exec.CommandContext(ctx, bin, "wallet", "balance", "--datadir", datadir, "--json")
	out, err := bal.Output()
	if err != nil {
		t.Fatalf("wallet balance: %v\n%s", err, out)
	}
	rss := maxRSS(t, bal)
	t.Logf("wallet balance peak RSS %.1f MiB: %s", float64(rss)/(1<<20), out)
	if rss > maxBalanceRSS {
		t.Errorf("wallet balance took %d MiB, more than %d", rss>>20, maxBalanceRSS>>20)
	}
	var got struct {
		Confirmed   int64 `json:"confirmed_sat"`
		Unconfirmed int64 `json:"unconfirmed_sat"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("balance: %v\n%s", err, out)
	}
	if got.Confirmed != 250_000 || got.Unconfirmed != 0 {
		t.Fatalf("balance %+v, want 250,000 sat confirmed and nothing unconfirmed", got)
	}
}
