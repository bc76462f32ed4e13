package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// captureFile is where TestDemoInTmux writes the dashboard capture the
// README shows, when BLOOMWATCH_WRITE_CAPTURE=1.
const captureFile = "../../docs/dashboard.txt"

// walletCount finds the matched-transactions panel's wallet count.
var walletCount = regexp.MustCompile(`Matched txs\s+wallet (\d+)`)

// TestDemoInTmux runs the real binary's demo (a real regtest btcd, a short
// chain) in a tmux pane at 160x48, waits for the dashboard to show matched
// wallet transactions, presses f, r and ?, then q, and checks the process
// exits cleanly. It needs tmux (.ci/run installs it).
func TestDemoInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and tmux")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed and could not be had here (.ci/run installs it with apt-get); the dashboard end-to-end test did not run")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bloomwatch")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	session := fmt.Sprintf("bwtest%d", os.Getpid())
	socket := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	done := filepath.Join(dir, "exit")
	script := fmt.Sprintf("%s demo --datadir %s --blocks 30 --interval 1s --reload-every 3; echo $? > %s; sleep 60",
		bin, filepath.Join(dir, "wallet"), done)
	if out, err := tm("new-session", "-d", "-s", session, "-x", "160", "-y", "48", "sh", "-c", script); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })

	capture := func() string {
		out, _ := tm("capture-pane", "-p", "-t", session)
		return out
	}
	var screen string
	deadline := time.Now().Add(4 * time.Minute)
	for {
		screen = capture()
		if m := walletCount.FindStringSubmatch(screen); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > 0 && strings.Contains(screen, "synced") {
				break
			}
		}
		if _, err := os.Stat(done); err == nil {
			t.Fatalf("demo exited early:\n%s", screen)
		}
		if time.Now().After(deadline) {
			t.Fatalf("dashboard never showed matched wallet transactions:\n%s", screen)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, panel := range []string{"Filter", "Matched txs", "Wallet", "Privacy", "Peers", "Log"} {
		if !strings.Contains(screen, panel) {
			t.Errorf("panel %q missing from the dashboard:\n%s", panel, screen)
		}
	}
	// Let a few live blocks arrive, so the capture shows the chain moving.
	time.Sleep(4 * time.Second)
	screen = capture()
	if os.Getenv("BLOOMWATCH_WRITE_CAPTURE") == "1" {
		if err := os.WriteFile(captureFile, []byte(strings.TrimRight(screen, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"f", "r", "?"} {
		if out, err := tm("send-keys", "-t", session, key); err != nil {
			t.Fatalf("send-keys %s: %v: %s", key, err, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if s := capture(); !strings.Contains(s, "reload filter") {
		t.Errorf("help not shown after ?:\n%s", s)
	}
	if out, err := tm("send-keys", "-t", session, "q"); err != nil {
		t.Fatalf("send-keys q: %v: %s", err, out)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(done); err == nil {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Fatalf("demo exit status %s:\n%s", code, capture())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo did not exit after q:\n%s", capture())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
