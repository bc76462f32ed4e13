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

// The captures TestDemoInTmux writes for the README when
// BLOOMWATCH_WRITE_CAPTURE=1: the dashboard, the detail view of a false
// positive, the filter picture.
const (
	captureFile       = "../../docs/dashboard.txt"
	captureDetailFile = "../../docs/dashboard-detail.txt"
	captureFilterFile = "../../docs/dashboard-filter.txt"
)

// walletCount finds the matched-transactions panel's wallet count;
// fpCount its false-positive count.
var (
	walletCount = regexp.MustCompile(`Matched txs\s+wallet (\d+)`)
	fpCount     = regexp.MustCompile(`Matched txs\s+wallet \d+\s+false positives (\d+)`)
)

// TestDemoInTmux runs the real binary's demo (a real regtest btcd, a short
// chain) in a tmux pane at 160x48, waits for the dashboard to show matched
// wallet transactions, opens the detail view of a false positive (/fp,
// enter; the newest row when none came) and comes back (esc), opens the
// filter picture (b) and comes back, presses f, r and ?, then q, and
// checks the process exits cleanly. It needs tmux (.ci/run installs it).
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
	// --fp-rate 0.05 (the demo's default is 0.02) lets a false positive
	// through within seconds, for the detail view
	script := fmt.Sprintf("%s demo --datadir %s --blocks 30 --interval 1s --reload-every 3 --fp-rate 0.05; echo $? > %s; sleep 60",
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
	send := func(keys ...string) {
		t.Helper()
		for _, key := range keys {
			if out, err := tm("send-keys", "-t", session, key); err != nil {
				t.Fatalf("send-keys %s: %v: %s", key, err, out)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	// waitFor polls the pane until it shows every string.
	waitFor := func(what string, want ...string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := capture()
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(s, w)
			}
			if ok {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the pane never showed %q:\n%s", what, want, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	write := func(file, screen string) {
		t.Helper()
		if os.Getenv("BLOOMWATCH_WRITE_CAPTURE") == "1" {
			if err := os.WriteFile(file, []byte(strings.TrimRight(screen, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	write(captureFile, screen)

	// The detail view of a false positive: wait a while for one (the
	// demo's loose filter lets some through), else explain the newest row.
	falsePositives := func() int {
		if m := fpCount.FindStringSubmatch(capture()); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		return 0
	}
	deadline = time.Now().Add(90 * time.Second)
	for falsePositives() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
	if falsePositives() > 0 {
		send("/", "f", "p", "Enter")
		waitFor("search /fp", "/fp")
		send("Enter")
		// "← matched the filter" marks an input or output only when the
		// element that matched is one; a txid match has no such row.
		detail := waitFor("detail of a false positive", "Why it is a false positive", "hash functions probe bits", "What matched the filter")
		write(captureDetailFile, detail)
		send("Escape")
		waitFor("back from the detail", "Matched txs", "/fp")
		send("Escape")
	} else {
		t.Log("no false positive came: opening the newest row instead")
		send("Enter")
		waitFor("detail", "Transaction ", "What matched the filter")
		send("Escape")
	}
	waitFor("back to the panels", "Matched txs", "Privacy", "Log")

	// The filter picture.
	send("b")
	picture := waitFor("filter picture", "as sent to", "fill:", "a dot per bit set")
	write(captureFilterFile, picture)
	send("Escape")
	waitFor("back from the picture", "Matched txs")

	send("f", "r", "?")
	if s := capture(); !strings.Contains(s, "reload filter") || !strings.Contains(s, "What the figures mean") {
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
