package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/stretchr/testify/require"
)

// crashRuns is the number of SIGKILLed syncs; crashSeed seeds the kill
// times (BLOOMWATCH_CRASH_SEED overrides it).
const (
	crashRuns = 20
	crashSeed = 20261123
)

// binary builds bloomwatch once into dir.
func binary(t *testing.T, dir string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	bin := filepath.Join(dir, "bloomwatch")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/bloomwatch")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "build bloomwatch: %v\n%s", err, out)
	return bin
}

// chain is the regtest chain every run syncs.
type chain struct {
	h     *testnet.Harness
	truth *testnet.Truth
	bin   string
}

// newChain starts btcd, builds a chain with wallet payments among noise and
// builds the binary.
func newChain(t *testing.T) *chain {
	t.Helper()
	if testing.Short() {
		t.Skip("starts btcd and runs the binary")
	}
	h := testnet.NewT(t, testnet.Options{})
	k, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(context.Background(), testnet.ChainSpec{
		Blocks: 300, TxsPerBlock: 6, Keyring: k, WatchAddrs: 8, PaymentsPerAddr: 2, SpendFraction: 0.5, Seed: 2026,
	})
	require.NoError(t, err)
	return &chain{h: h, truth: truth, bin: binary(t, t.TempDir())}
}

// peerTimeout is the syncs' --peer-timeout: a sync gives up when no peer
// has been usable for this long. It is three of the node's handshake
// bounds (spv.DefaultHandshakeTimeout, 20 s), so that one connection
// attempt that runs to its bound (a peer that reads and never answers, as
// btcd did with a v2 key that stalled it) is followed by another before
// the sync gives up. At 20 s, the bound itself, one such attempt ended the
// sync with "no reachable peer for 20s".
const peerTimeout = 3 * spv.DefaultHandshakeTimeout

// runIdle bounds a run that makes no progress: its data dir unchanged (no
// file created, grown or written) for this long. A sync without a usable
// peer ends itself after peerTimeout with its one line; runIdle only
// catches a run hung otherwise, so no run has a fixed time limit.
const runIdle = peerTimeout + 30*time.Second

// args returns the sync command line for datadir.
func (c *chain) args(datadir string) []string {
	return []string{"sync", "--no-tui", "--json", "--until-synced", "--datadir", datadir,
		"--network", "regtest", "--xpub", c.truth.Xpub, "--birthday", strconv.Itoa(int(c.truth.StartHeight + 1)),
		"--connect", c.h.Node().P2PAddr(), "--peer-timeout", peerTimeout.String(), "--log-level", "warn"}
}

// result is what a finished sync printed.
type result struct {
	code   int
	stdout []byte
	stderr string
}

// run runs the binary to completion, until ctx ends, or until its data
// dir (args' --datadir) has not changed for runIdle: the bound follows
// the sync's progress, however slow the machine is.
func (c *chain) run(ctx context.Context, args ...string) result {
	dir := ""
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--datadir" {
			dir = args[i+1]
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.WaitDelay = time.Second // a killed run's output pipes close soon after
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		return result{code: -1, stderr: err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	last, moved, idle := dirState(dir), time.Now(), false
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-tick.C:
			if st := dirState(dir); st != last {
				last, moved = st, time.Now()
			} else if !idle && time.Since(moved) > runIdle {
				idle = true
				cancel() // kills the process: Wait returns
			}
		}
	}
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	stderr := errOut.String()
	if idle {
		stderr = fmt.Sprintf("killed: %s unchanged for %v; stderr: %s", dir, runIdle, stderr)
	}
	return result{code: code, stdout: out.Bytes(), stderr: stderr}
}

// dirState describes every file under dir (path, size, modification
// time): it changes whenever a sync creates, grows or writes a file.
func dirState(dir string) string {
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", path, fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}

// killAfter starts the sync and SIGKILLs it after d (if still running). It
// reports whether the kill landed (the process died of it) and, when the
// process exited on its own first, how long it ran: a whole sync at the
// machine's present speed.
func (c *chain) killAfter(t *testing.T, datadir string, d time.Duration) (landed bool, ran time.Duration) {
	t.Helper()
	cmd := exec.Command(c.bin, c.args(datadir)...)
	cmd.Stdout, cmd.Stderr = nil, nil
	began := time.Now()
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
		return false, time.Since(began)
	case <-time.After(d):
	}
	// The process may end between the timer and the signal: that is
	// no kill, and no error.
	err := cmd.Process.Signal(syscall.SIGKILL)
	if err != nil {
		require.ErrorIs(t, err, os.ErrProcessDone, "kill pid %d: %v", cmd.Process.Pid, err)
	}
	select { // reap
	case <-done:
	case <-time.After(30 * time.Second):
		require.FailNow(t, fmt.Sprintf("pid %d not reaped 30 s after SIGKILL", cmd.Process.Pid))
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return true, 0
	}
	return false, time.Since(began)
}

// view is the part of the sync summary a restart must reproduce exactly.
type view struct {
	Network        string
	TipHeight      int32
	TipHash        string
	HeaderHeight   int32
	BalanceSat     int64
	UnconfirmedSat int64
	ImmatureSat    int64
	Txs            []session.Tx
	UTXOs          []session.UTXO
	Addresses      session.AddressCount
}

// parse decodes a summary and keeps its view.
func parse(t *testing.T, r result) view {
	t.Helper()
	require.Equal(t, 0, r.code, "sync exit %d: %s", r.code, r.stderr)
	var s session.Summary
	err := json.Unmarshal(r.stdout, &s)
	require.NoError(t, err, "summary: %v\n%s", err, r.stdout)
	return view{
		Network: s.Network, TipHeight: s.TipHeight, TipHash: s.TipHash, HeaderHeight: s.HeaderHeight,
		BalanceSat: s.BalanceSat, UnconfirmedSat: s.UnconfirmedSat, ImmatureSat: s.ImmatureSat,
		Txs: s.Txs, UTXOs: s.UTXOs, Addresses: s.Addresses,
	}
}

// same compares two views field by field.
func same(a, b view) string {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if bytes.Equal(ja, jb) {
		return ""
	}
	return fmt.Sprintf("\n got  %s\n want %s", ja, jb)
}

// checkTruth compares the reference view with the chain's truth.
func checkTruth(t *testing.T, v view, truth *testnet.Truth) {
	t.Helper()
	require.Equal(t, truth.TipHash.String(), v.TipHash, "reference run: tip %s balance %d, %d txs, %d utxos; truth tip %s balance %d, %d txs, %d utxos", v.TipHash, v.BalanceSat, len(v.Txs), len(v.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
	require.Equal(t, truth.Balance, v.BalanceSat, "reference run: tip %s balance %d, %d txs, %d utxos; truth tip %s balance %d, %d txs, %d utxos", v.TipHash, v.BalanceSat, len(v.Txs), len(v.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
	require.Len(t, v.Txs, len(truth.Txs), "reference run: tip %s balance %d, %d txs, %d utxos; truth tip %s balance %d, %d txs, %d utxos", v.TipHash, v.BalanceSat, len(v.Txs), len(v.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
	require.Len(t, v.UTXOs, len(truth.UTXOs), "reference run: tip %s balance %d, %d txs, %d utxos; truth tip %s balance %d, %d txs, %d utxos", v.TipHash, v.BalanceSat, len(v.Txs), len(v.UTXOs), truth.TipHash, truth.Balance, len(truth.Txs), len(truth.UTXOs))
}

// crashTries bounds the fresh starts of one run whose first kill came
// after the sync had finished.
const crashTries = 10

// TestCrashRestart syncs once without interruption (the reference), then
// in 20 runs SIGKILLs a sync one to three times in a row, each at a seeded
// random moment within the duration of a whole sync, restarts it with the
// same command line and requires the restarted run's summary (tip,
// balance, transactions, UTXOs, addresses) to equal the reference. Every
// run's first kill must land mid-sync: a sync that finished before it
// (the machine got faster than the duration the moments are drawn from
// says) gives that duration again, measured on itself, and the run starts
// over from a fresh data dir. The later kills of a run resume a sync and
// may come after it finished: they are counted, not required.
func TestCrashRestart(t *testing.T) {
	c := newChain(t)
	ctx := t.Context() // each run's bound follows its progress (run)
	began := time.Now()
	ref := parse(t, c.run(ctx, c.args(filepath.Join(t.TempDir(), "ref"))...))
	took := time.Since(began)
	checkTruth(t, ref, c.truth)
	seed := int64(crashSeed)
	if s := os.Getenv("BLOOMWATCH_CRASH_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
	}
	r := rand.New(rand.NewSource(seed))
	t.Logf("reference sync took %v; seed %d", took, seed)
	window := took // the duration of a whole sync, as last measured
	killed, tornCreates, restarts := 0, 0, 0
	for i := 0; i < crashRuns; i++ {
		// One to three kills in a row, each at its own moment, so a
		// restart also recovers from a restart that was itself killed.
		kills := 1 + r.Intn(3)
		var dir string
		var at []time.Duration
		for try := 1; ; try++ {
			dir = filepath.Join(t.TempDir(), "crash")
			d := time.Duration(r.Int63n(int64(window)))
			at = []time.Duration{d}
			landed, ran := c.killAfter(t, dir, d)
			if landed {
				killed++
				break
			}
			require.NotEqual(t, crashTries, try, "run %d: the sync finished before its first kill in %d fresh starts (last: kill at %v, the sync took %v)", i, try, d, ran)
			t.Logf("run %d: the sync took %v, before its kill at %v: starting over with that duration", i, ran, d)
			window = ran
			restarts++
		}
		for k := kills - 1; k > 0; k-- {
			d := time.Duration(r.Int63n(int64(window)))
			at = append(at, d)
			if landed, _ := c.killAfter(t, dir, d); landed {
				killed++
			}
		}
		got := c.run(ctx, c.args(dir)...)
		if got.code != 0 && strings.Contains(got.stderr, "namespaces missing") {
			// wallet.Create builds the database under a temporary name
			// and renames it into place: a kill during creation must
			// leave no half-made wallet.
			tornCreates++
			require.FailNow(t, fmt.Sprintf("run %d (killed at %v): wallet left half-created: %s", i, at, got.stderr))
		}
		require.Equal(t, 0, got.code, "run %d (killed at %v): restart exit %d: %s", i, at, got.code, got.stderr)
		diff := same(parse(t, got), ref)
		require.Equal(t, "", diff, "run %d (killed at %v): restarted sync differs:%s", i, at, diff)
	}
	t.Logf("%d kills landed mid-sync over %d runs (%d fresh starts over); %d runs left a half-created wallet", killed, crashRuns, restarts, tornCreates)
}

// TestDamagedFiles damages one file of a synced data dir at a time and
// checks the documented recovery: a torn header file tail is cut off and
// the sync finishes as before; a garbage header file or wallet database
// gives one clear line naming the file and the way out, exit 1, and leaves
// the file as it was; moving the damaged file away (the way out) and
// syncing again rebuilds the same wallet from the chain.
func TestDamagedFiles(t *testing.T) {
	c := newChain(t)
	ctx := t.Context() // each run's bound follows its progress (run)
	ref := parse(t, c.run(ctx, c.args(filepath.Join(t.TempDir(), "ref"))...))
	checkTruth(t, ref, c.truth)

	synced := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "d")
		parse(t, c.run(ctx, c.args(dir)...))
		return dir
	}
	headerFile := func(dir string) string { return filepath.Join(dir, "spv", headers.FileName) }
	walletFile := func(dir string) string { return filepath.Join(dir, "wallet.db") }

	t.Run("torn header tail", func(t *testing.T) {
		dir := synced(t)
		f := headerFile(dir)
		st, err := os.Stat(f)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(f, st.Size()-37))
		diff := same(parse(t, c.run(ctx, c.args(dir)...)), ref)
		require.Equal(t, "", diff, "after a torn tail:%s", diff)
	})
	for _, tc := range []struct {
		name string
		file func(string) string
		hint string
	}{
		{"garbage header file", headerFile, "headers"},
		{"garbage wallet", walletFile, "wallet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := synced(t)
			f := tc.file(dir)
			st, err := os.Stat(f)
			require.NoError(t, err)
			garbage := bytes.Repeat([]byte("bloomwatch garbage "), int(st.Size()/19)+1)[:st.Size()]
			// Keep the first 4 KiB: the damage is inside the file, not a
			// wrong file type.
			orig, err := os.ReadFile(f)
			require.NoError(t, err)
			copy(garbage, orig[:min(4096, len(orig))])
			require.NoError(t, os.WriteFile(f, garbage, 0o600))
			got := c.run(ctx, c.args(dir)...)
			t.Logf("%s: exit %d, stderr %q", tc.name, got.code, got.stderr)
			require.Equal(t, 1, got.code, "exit %d, stderr %q: want exit 1 and one line about the %s", got.code, got.stderr, tc.hint)
			require.Equal(t, 1, strings.Count(got.stderr, "\n"), "exit %d, stderr %q: want exit 1 and one line about the %s", got.code, got.stderr, tc.hint)
			require.Contains(t, got.stderr, tc.hint, "exit %d, stderr %q: want exit 1 and one line about the %s", got.code, got.stderr, tc.hint)
			after, err := os.ReadFile(f)
			require.NoError(t, err, "the damaged file was changed (err %v)", err)
			require.Equal(t, garbage, after, "the damaged file was changed (err %v)", err)
			// The way out: move the file away and sync again.
			require.NoError(t, os.Rename(f, f+".damaged"))
			diff := same(parse(t, c.run(ctx, c.args(dir)...)), ref)
			require.Equal(t, "", diff, "after moving the damaged file away:%s", diff)
		})
	}
}
