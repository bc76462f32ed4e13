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
	"unicode/utf8"

	"github.com/stretchr/testify/require"
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
// filter picture (b) and comes back, resizes the pane to 80x24 and 120x30
// and back (checkPane at each size: the footer, the download peer first,
// the privacy figures before any chart, a caption on every chart, no log
// row cut), presses f, r and ?, then q, checks the process exits cleanly
// and runs the privacy analyze command its last lines print, as printed.
// It needs tmux (.ci/run installs it).
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
	// In a clone (not a worktree, whose .git is a file) the build stamps
	// the revision; -buildvcs=true says so explicitly, because a go env
	// file may set GOFLAGS=-buildvcs=false (this machine's does) and go
	// test hides GOFLAGS from the test but not from the go command it runs.
	rev, revErr := exec.Command("git", "rev-parse", "HEAD").Output()
	clone := revErr == nil && dirExists("../../.git")
	args := []string{"build", "-o", bin}
	if clone {
		args = append(args, "-buildvcs=true")
	}
	build := exec.Command("go", append(args, ".")...)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build: %v\n%s", err, out)
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
	tmOut, err := tm("new-session", "-d", "-s", session, "-x", "160", "-y", "48", "sh", "-c", script)
	require.NoError(t, err, "tmux new-session: %s", tmOut)
	t.Cleanup(func() { _, _ = tm("kill-server") })

	capture := func() string {
		out, _ := tm("capture-pane", "-p", "-t", session)
		return out
	}
	v, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err, "--version: %q", v)
	require.True(t, strings.HasPrefix(string(v), "bloomwatch "), "--version: %v %q", err, v)
	if clone {
		require.Contains(t, string(v), strings.TrimSpace(string(rev)), "--version %q lacks the revision %s", v, rev)
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
		_, err := os.Stat(done)
		require.Error(t, err, "demo exited early:\n%s", screen)
		require.False(t, time.Now().After(deadline), "dashboard never showed matched wallet transactions:\n%s", screen)
		time.Sleep(500 * time.Millisecond)
	}
	for _, panel := range []string{"Filter", "Matched txs", "Wallet", "Privacy", "Peers", "Log"} {
		require.Contains(t, screen, panel, "panel %q missing from the dashboard:\n%s", panel, screen)
	}
	// Let a few live blocks arrive, so the capture shows the chain moving.
	time.Sleep(4 * time.Second)
	screen = capture()
	send := func(keys ...string) {
		t.Helper()
		for _, key := range keys {
			out, err := tm("send-keys", "-t", session, key)
			require.NoError(t, err, "send-keys %s: %v: %s", key, err, out)
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
			require.False(t, time.Now().After(deadline), "%s: the pane never showed %q:\n%s", what, want, s)
			time.Sleep(200 * time.Millisecond)
		}
	}
	write := func(file, screen string) {
		t.Helper()
		if os.Getenv("BLOOMWATCH_WRITE_CAPTURE") == "1" {
			require.NoError(t, os.WriteFile(file, []byte(strings.TrimRight(screen, "\n")+"\n"), 0o644))
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
	// A dot per bit while the filter fits the pane, a heatmap of runs
	// of bits once it does not (the lookahead reserve makes the demo
	// wallet's filter 9,792 bytes).
	picture := waitFor("filter picture", "as sent to", "fill:", "cell per")
	require.False(t, !strings.Contains(picture, "a dot per bit set") && !strings.Contains(picture, "bits, by the share set"), "filter picture without its caption:\n%s", picture)
	write(captureFilterFile, picture)
	send("Escape")
	waitFor("back from the picture", "Matched txs")

	// Every size from 80x24 up shows what it must.
	for _, sz := range [][2]int{{80, 24}, {120, 30}, {160, 48}} {
		out, err := tm("resize-window", "-t", session, "-x", strconv.Itoa(sz[0]), "-y", strconv.Itoa(sz[1]))
		require.NoError(t, err, "resize to %dx%d: %v: %s", sz[0], sz[1], err, out)
		screen := waitForSize(t, capture, sz[0], sz[1])
		checkPane(t, screen, sz[0], sz[1])
	}

	send("f", "r", "?")
	s := capture()
	require.Contains(t, s, "reload filter", "help not shown after ?:\n%s", s)
	require.Contains(t, s, "What the figures mean", "help not shown after ?:\n%s", s)
	tmOut, err = tm("send-keys", "-t", session, "q")
	require.NoError(t, err, "send-keys q: %s", tmOut)
	deadline = time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(done); err == nil {
			code := strings.TrimSpace(string(b))
			require.Equal(t, "0", code, "demo exit status %s:\n%s", code, capture())
			break
		}
		require.False(t, time.Now().After(deadline), "demo did not exit after q:\n%s", capture())
		time.Sleep(200 * time.Millisecond)
	}
	// After q the terminal shows where the data dir is and what to run on
	// it: run it as printed (the lines wrapped by the pane joined).
	joined, _ := tm("capture-pane", "-p", "-J", "-t", session)
	const marker = "demo: what your filters told the peers: "
	i := strings.Index(joined, marker)
	require.GreaterOrEqual(t, i, 0, "no kept-data-dir lines after q:\n%s", joined)
	require.Contains(t, joined, "demo: btcd stopped; the data dir is kept: ", "no kept-data-dir lines after q:\n%s", joined)
	line := strings.TrimSpace(strings.SplitN(joined[i+len(marker):], "\n", 2)[0])
	out, err = exec.Command("sh", "-c", line).CombinedOutput()
	require.NoError(t, err, "%s: %v\n%s", line, err, out)
	require.Contains(t, string(out), "universe source: synthetic", "%s: %v\n%s", line, err, out)
}

// dirExists reports whether path is a directory.
func dirExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// waitForSize polls the pane until the dashboard has redrawn at w x h: its
// footer on the last row and no row wider than w.
func waitForSize(t *testing.T, capture func() string, w, h int) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := capture()
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if len(lines) == h && strings.Contains(lines[h-1], "quit") && strings.Contains(s, "Peers") {
			wide := false
			for _, l := range lines {
				wide = wide || utf8.RuneCountInString(l) > w
			}
			if !wide {
				return s
			}
		}
		require.False(t, time.Now().After(deadline), "the dashboard did not redraw at %dx%d:\n%s", w, h, s)
		time.Sleep(200 * time.Millisecond)
	}
}

// downloadPeer finds the header's download peer.
var downloadPeer = regexp.MustCompile(`download (127\.0\.0\.1:\d+)`)

// checkPane checks the dashboard at w x h as the user sees it: the footer
// with "? help" and "q quit"; the download peer (named in the header) on
// the Peers panel's first row, "+N more" when a peer has no row; the
// privacy figures (all combined, precision, entropy) before any chart and
// a caption ("expected f...") above every chart; no log row cut with "…"
// (lines wrap). At 80x24 the footer was cut before "? help", the Peers
// panel showed the other peer alone; at 120x30 the Privacy panel dropped
// "all combined", precision and entropy for a chart without caption; at
// 160x48 log lines were cut mid-word.
func checkPane(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	f := lines[len(lines)-1]
	require.Contains(t, f, "? help", "%dx%d: footer %q lacks ? help or q quit", w, h, f)
	require.Contains(t, f, "q quit", "%dx%d: footer %q lacks ? help or q quit", w, h, f)
	dl := downloadPeer.FindStringSubmatch(screen)
	require.NotNil(t, dl, "%dx%d: no download peer in the header:\n%s", w, h, screen)
	for i, l := range lines {
		if !strings.Contains(l, "Peers 2") {
			continue
		}
		require.Less(t, i+2, len(lines), "%dx%d: the Peers panel's first row is not the download peer %s:\n%s", w, h, dl[1], screen)
		require.Contains(t, lines[i+1], "address", "%dx%d: the Peers panel's first row is not the download peer %s:\n%s", w, h, dl[1], screen)
		require.Contains(t, lines[i+2], "* "+dl[1], "%dx%d: the Peers panel's first row is not the download peer %s:\n%s", w, h, dl[1], screen)
		require.False(t, strings.Count(screen, "NBW") < 2 && !strings.Contains(l, "+1 more"), "%dx%d: one of 2 peers shown without +1 more:\n%s", w, h, screen)
	}
	figures := 0
	for _, want := range []string{"all combined", "precision", "entropy"} {
		i := strings.Index(screen, want)
		require.GreaterOrEqual(t, i, 0, "%dx%d: privacy figure %q missing:\n%s", w, h, want, screen)
		figures = max(figures, i)
	}
	braille := func(l string) bool {
		return strings.ContainsFunc(l, func(r rune) bool { return r >= 0x2800 && r <= 0x28ff })
	}
	for i, l := range lines {
		if !braille(l) || i > 0 && braille(lines[i-1]) {
			continue
		}
		require.NotEqual(t, 0, i, "%dx%d: a chart without its caption under the figures:\n%s", w, h, screen)
		require.Contains(t, lines[i-1], "expected f", "%dx%d: a chart without its caption under the figures:\n%s", w, h, screen)
		require.GreaterOrEqual(t, strings.Index(screen, lines[i-1]), figures, "%dx%d: a chart without its caption under the figures:\n%s", w, h, screen)
	}
	if w < 160 {
		return // the log pane has too few rows for some lines: enter on it shows one whole
	}
	inLog := false
	for _, l := range lines {
		if strings.Contains(l, "─ Log") {
			inLog = true
			continue
		}
		// the log is the right column: a cut row ends in "…" at its border
		require.False(t, inLog && strings.HasSuffix(strings.TrimRight(l, " "), "…│"), "%dx%d: a log row cut: %q", w, h, l)
	}
}
