package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/nodeapi"
)

// TestDashboardAttachInTmux attaches `bloomwatch dashboard` to a headless
// demo through its node API, in tmux: the panels fill from the node's
// feed (its latest filter, peers and blocks, the wallet, the meter, the
// log), q detaches with exit 0, and the node keeps running and answering.
func TestDashboardAttachInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and tmux")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		require.Equal(t, "", os.Getenv("CI"), "tmux not found (.ci/run installs it): %v", err)
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	home := filepath.Join(dir, "home")
	require.NoError(t, os.Mkdir(home, 0o700))
	env := append(os.Environ(), "HOME="+home)
	datadir := filepath.Join(dir, "demo")
	d := startBackground(t, env, bin, "demo", "--no-tui", "--datadir", datadir, "--blocks", "30", "--interval", "1s", "--log-level", "info")
	waitUntil(t, 4*time.Minute, "the demo's node API", func() (bool, string) {
		_, err := os.Stat(filepath.Join(datadir, nodeapi.AddressFile))
		return err == nil, d.lines.all()
	}, d)

	session := fmt.Sprintf("bwattach%d", os.Getpid())
	socket := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	done := filepath.Join(dir, "exit")
	errFile := filepath.Join(dir, "stderr")
	script := fmt.Sprintf("HOME=%s %s dashboard --datadir %s 2>%s; echo $? > %s; sleep 60", home, bin, datadir, errFile, done)
	out, err := tm("new-session", "-d", "-s", session, "-x", "160", "-y", "48", "sh", "-c", script)
	require.NoError(t, err, "tmux new-session: %s", out)
	t.Cleanup(func() { _, _ = tm("kill-server") })
	capture := func() string {
		out, _ := tm("capture-pane", "-p", "-t", session)
		return out
	}
	waitUntil(t, 2*time.Minute, "the attached dashboard's panels", func() (bool, string) {
		if _, err := os.Stat(done); err == nil {
			stderr, _ := os.ReadFile(errFile)
			require.FailNow(t, fmt.Sprintf("the dashboard exited early: %s", stderr))
		}
		screen := capture()
		for _, want := range []string{"synced", "Filter #", "Wallet", "confirmed", "Privacy", "Peers 2", "Log", "demo chain"} {
			if !strings.Contains(screen, want) {
				return false, "no " + want + " in:\n" + screen
			}
		}
		return true, ""
	}, d)
	out, err = tm("send-keys", "-t", session, "q")
	require.NoError(t, err, out)
	waitUntil(t, 30*time.Second, "the dashboard's exit", func() (bool, string) {
		_, err := os.Stat(done)
		return err == nil, capture()
	}, d)
	code, _ := os.ReadFile(done)
	stderr, _ := os.ReadFile(errFile)
	require.Equal(t, "0", strings.TrimSpace(string(code)), "stderr: %s", stderr)
	require.Contains(t, string(stderr), "detached; the node keeps running")

	// The node runs on: its API answers, its chain moves.
	d.alive(t)
	c, err := nodeapi.Dial(context.Background(), datadir)
	require.NoError(t, err)
	defer c.Close()
	first, err := c.Balance(context.Background())
	require.NoError(t, err)
	waitUntil(t, time.Minute, "a block after the detach", func() (bool, string) {
		b, err := c.Balance(context.Background())
		require.NoError(t, err)
		return b.SyncedHeight > first.SyncedHeight, fmt.Sprint(b.SyncedHeight)
	}, d)
	d.interrupt(t)
}
