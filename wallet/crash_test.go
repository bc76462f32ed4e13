package wallet

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Environment of the crash child: the wallet directory, the scenario seed
// and whether it waits for a byte on stdin after each block.
const (
	envCrashDir  = "BLOOMWATCH_WALLET_CRASH_DIR"
	envCrashSeed = "BLOOMWATCH_WALLET_CRASH_SEED"
	envCrashStep = "BLOOMWATCH_WALLET_CRASH_STEP"
)

// Crash scenario: blocks, first height, and the child's batch size.
const (
	crashBlocks = 70
	crashStart  = 500
	crashBatch  = 7
	crashSeed   = 42
)

// TestCrashChild is the child process of TestCrashRecovery: it syncs the
// scenario from the wallet's sync point, printing "applied <height>" after
// each block. It does nothing in a normal test run.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("child process of TestCrashRecovery")
	}
	seed, err := strconv.ParseUint(os.Getenv(envCrashSeed), 10, 64)
	require.NoError(t, err)
	step := os.Getenv(envCrashStep) != ""
	s := buildScenario(t, seed, crashStart, crashBlocks)
	w, err := Open(dir, WithBatch(crashBatch, 0))
	require.NoError(t, err)
	sp, err := w.SyncedTo()
	require.NoError(t, err)
	from := 0
	if sp.Height >= 0 {
		from = int(sp.Height-crashStart) + 1
	}
	in := bufio.NewReader(os.Stdin)
	for _, b := range s.blocks[from:] {
		applyLikeNode(t, w, b)
		fmt.Fprintf(os.Stdout, "applied %d\n", b.height)
		if step {
			_, err := in.ReadByte()
			require.NoError(t, err)
		}
	}
	require.NoError(t, w.Close())
	fmt.Fprintln(os.Stdout, "done")
}

// crashChild is a running child process.
type crashChild struct {
	cmd   *exec.Cmd
	out   *bufio.Scanner
	stdin io.WriteCloser
}

func startCrashChild(t *testing.T, dir string, step bool) *crashChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashSeed+"="+strconv.Itoa(crashSeed))
	if step {
		cmd.Env = append(cmd.Env, envCrashStep+"=1")
	}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	return &crashChild{cmd: cmd, out: bufio.NewScanner(stdout), stdin: stdin}
}

// next returns the next height the child reports, or -1 when it is done.
func (c *crashChild) next(t *testing.T) int32 {
	t.Helper()
	for c.out.Scan() {
		line := c.out.Text()
		if line == "done" {
			return -1
		}
		if h, ok := strings.CutPrefix(line, "applied "); ok {
			n, err := strconv.Atoi(h)
			require.NoError(t, err)
			return int32(n)
		}
	}
	require.NoError(t, c.out.Err())
	require.FailNow(t, "child ended without reporting done")
	return -1
}

func (c *crashChild) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	_ = c.cmd.Wait()
}

// TestCrashRecovery kills a syncing process with SIGKILL, in the middle of
// a batch and at a random moment, and checks that every reopen gives
// exactly the state an uninterrupted sync has at the committed block:
// nothing lost, nothing (false positives included) counted twice.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	s := buildScenario(t, crashSeed, crashStart, crashBlocks)
	xpub := accountXpub(t, purposeBIP84, 1, versionVpub)
	cfg := CreateConfig{Network: "regtest", Xpubs: []string{xpub}, Birthday: crashStart}

	// Reference: the state after each block of an uninterrupted sync.
	ref, err := Create(t.TempDir(), cfg, WithBatch(1, 0))
	require.NoError(t, err)
	defer ref.Close()
	want := make(map[int32]snapshot, crashBlocks)
	for _, b := range s.blocks {
		applyLikeNode(t, ref, b)
		want[b.height] = takeSnapshot(t, ref)
	}

	dir := t.TempDir()
	w, err := Create(dir, cfg)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	check := func(label string) int32 {
		w, err := Open(dir)
		require.NoError(t, err, label)
		defer w.Close()
		got := takeSnapshot(t, w)
		require.GreaterOrEqual(t, got.Synced.Height, int32(crashStart), label)
		requireSameState(t, want[got.Synced.Height], got)
		return got.Synced.Height
	}

	// Lockstep rounds: the child waits after each block, so the kill
	// lands between blocks of an open batch.
	for _, blocks := range []int{10, 16} {
		c := startCrashChild(t, dir, true)
		var last int32
		for range blocks {
			last = c.next(t)
			_, err := c.stdin.Write([]byte{1})
			require.NoError(t, err)
		}
		last = c.next(t) // the child is now waiting after this block
		c.kill(t)
		committed := check(fmt.Sprintf("after kill at %d", last))
		require.Less(t, committed, last, "the kill must lose an open batch")
		require.GreaterOrEqual(t, committed, last-crashBatch)
	}

	// Free-running round: the child keeps going while the parent reads
	// its reports, so the kill lands at whatever moment it has reached
	// (possibly inside a commit).
	c := startCrashChild(t, dir, false)
	for range 3 {
		c.next(t)
	}
	c.kill(t)
	check("after free-running kill")

	// Finish, then compare with the full uninterrupted sync.
	c = startCrashChild(t, dir, false)
	for c.next(t) != -1 {
	}
	require.NoError(t, c.cmd.Wait())
	final := check("after completion")
	require.Equal(t, s.blocks[len(s.blocks)-1].height, final)
}
