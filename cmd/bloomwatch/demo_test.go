package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/stretchr/testify/require"
)

// buildBinary builds the bloomwatch binary into dir and returns its path.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bloomwatch")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build: %v\n%s", err, out)
	return bin
}

// lineWatcher collects a process's stderr lines and finds them by prefix.
type lineWatcher struct {
	mu    sync.Mutex
	lines []string
}

// read collects the lines of sc until it ends.
func (l *lineWatcher) read(sc *bufio.Scanner) {
	for sc.Scan() {
		l.mu.Lock()
		l.lines = append(l.lines, sc.Text())
		l.mu.Unlock()
	}
}

// after returns the text after marker of the first line holding it.
func (l *lineWatcher) after(marker string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if i := strings.Index(s, marker); i >= 0 {
			return s[i+len(marker):], true
		}
	}
	return "", false
}

// all returns every line so far.
func (l *lineWatcher) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// sh runs a command line as the user would paste it, with a deadline.
func sh(t *testing.T, line string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", line).CombinedOutput()
	return string(out), err
}

// TestDemoPrintsCommandsThatWork runs the real binary's demo headless on a
// short chain and runs, as printed, the commands it offers: while it runs,
// privacy analyze and export-universe against its btcd's JSON-RPC (the
// address and credentials it prints); after the interrupt, privacy
// analyze on the data dir it keeps and says it keeps (the demo deleted a
// temporary data dir silently before, and printed no RPC access). The
// demo makes its own temporary data dir here, as for a new user.
func TestDemoPrintsCommandsThatWork(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	tmp := filepath.Join(dir, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o700))
	cmd := exec.Command(bin, "demo", "--no-tui", "--blocks", "30", "--interval", "1s", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	var lw lineWatcher
	go func() {
		lw.read(bufio.NewScanner(stderr))
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})

	// The data dir and the commands, printed before the sync.
	var analyze, export, datadir string
	deadline := time.Now().Add(4 * time.Minute)
	for {
		a, okA := lw.after("try, in another terminal: ")
		e, okE := lw.after("or write the chain's candidates to a file: ")
		d, okD := lw.after("demo: data dir ")
		if okA && okE && okD {
			analyze, export, datadir = a, e, strings.Fields(d)[0]
			break
		}
		select {
		case err := <-exited:
			require.FailNow(t, fmt.Sprintf("demo exited early (%v):\n%s", err, lw.all()))
		default:
		}
		require.False(t, time.Now().After(deadline), "the demo printed no RPC commands:\n%s", lw.all())
		time.Sleep(200 * time.Millisecond)
	}
	require.True(t, strings.HasPrefix(datadir, tmp+string(filepath.Separator)), "data dir %q is not in the system's temporary directory %s", datadir, tmp)
	require.Contains(t, analyze, "--btcd-rpc 127.0.0.1:", "analyze command %q", analyze)
	require.True(t, strings.HasPrefix(analyze, bin+" "), "analyze command %q", analyze)
	// Wait for the first filter on record, then run both as printed.
	deadline = time.Now().Add(2 * time.Minute)
	for {
		if b, err := os.ReadFile(session.TranscriptPath(datadir)); err == nil && strings.Contains(string(b), `"filterload"`) {
			break
		}
		require.False(t, time.Now().After(deadline), "no filterload in %s:\n%s", session.TranscriptPath(datadir), lw.all())
		time.Sleep(200 * time.Millisecond)
	}
	out, err := sh(t, analyze)
	require.NoError(t, err, "%s: %v\n%s", analyze, err, out)
	require.Contains(t, out, "chain over btcd RPC 127.0.0.1:", "%s: %v\n%s", analyze, err, out)
	out, err = sh(t, export)
	require.NoError(t, err, "%s: %v\n%s", export, err, out)
	require.Contains(t, out, "candidates", "%s: %v\n%s", export, err, out)
	_, err = os.Stat(filepath.Join(datadir, "universe.txt"))
	require.NoError(t, err, "export-universe wrote no file")

	// Interrupt, as ctrl-c would: the data dir is kept and said so.
	require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGINT))
	select {
	case err := <-exited:
		require.NoError(t, err, "demo exit after the interrupt: %v\n%s", err, lw.all())
	case <-time.After(time.Minute):
		require.FailNow(t, fmt.Sprintf("demo did not exit after the interrupt:\n%s", lw.all()))
	}
	kept, ok := lw.after("demo: btcd stopped; the data dir is kept: ")
	require.True(t, ok, "no kept-data-dir line naming %s:\n%s", datadir, lw.all())
	require.True(t, strings.HasPrefix(kept, datadir+" "), "no kept-data-dir line naming %s:\n%s", datadir, lw.all())
	require.Contains(t, kept, "rm -r "+datadir, "no kept-data-dir line naming %s:\n%s", datadir, lw.all())
	for _, f := range []string{"wallet.db", "btcd.log", "btcd2.log", "spv"} {
		_, err := os.Stat(filepath.Join(datadir, f))
		require.NoError(t, err, "the kept data dir lacks %s", f)
	}
	after, ok := lw.after("demo: what your filters told the peers: ")
	require.True(t, ok, "no privacy analyze command after the demo:\n%s", lw.all())
	out, err = sh(t, after)
	require.NoError(t, err, "%s: %v\n%s", after, err, out)
	require.Contains(t, out, "universe source: synthetic", "%s: %v\n%s", after, err, out)
	bal, ok := lw.after("demo: the wallet: ")
	require.True(t, ok, "no wallet command after the demo:\n%s", lw.all())
	out, err = sh(t, bal)
	require.NoError(t, err, "%s: %v\n%s", bal, err, out)
	require.Contains(t, out, "confirmed", "%s: %v\n%s", bal, err, out)
}
