package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/spv"
)

// everySize are terminal sizes from the smallest the dashboard supports
// (80x24) up, stacked and grid, short and tall.
var everySize = [][2]int{{80, 24}, {80, 30}, {90, 28}, {100, 40}, {119, 30}, {120, 24}, {120, 30}, {120, 40},
	{140, 35}, {160, 30}, {160, 48}, {200, 60}}

// earlyPeer is a peer whose address sorts before the download peer's: in
// address order it took the one row a small Peers panel has.
const earlyPeer = "127.0.0.1:10001"

// withEarlyPeer adds earlyPeer (not the download peer) to m.
func withEarlyPeer(t *testing.T, m Model) Model {
	return feed(t, m, eventsMsg{events: []spv.Event{spv.PeerConnected{At: spv.At{Time: t0}, Peer: spv.PeerInfo{
		Addr: earlyPeer, UserAgent: "/btcd:0.25.0/", Services: wire.SFNodeNetwork | wire.SFNodeBloom, StartHeight: 118,
		PingTime: 9 * time.Millisecond}}}})
}

// checkDashboard checks what every size must show: the footer
// with "? help" and "q quit"; the download peer as the Peers panel's
// first row and "+N more" for the rows it has no room for; the privacy
// figures (expected false positives latest and all combined, precision,
// entropy) before any chart; a caption above every chart; and the
// observed false-positive rate in the unit the help explains.
func checkDashboard(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	require.Len(t, lines, h)
	footer := lines[h-1]
	require.Contains(t, footer, "? help", "%dx%d footer %q", w, h, footer)
	require.Contains(t, footer, "q quit", "%dx%d footer %q", w, h, footer)

	peersAt := -1
	for i, l := range lines {
		if strings.Contains(l, "Peers 3") {
			peersAt = i
			break
		}
	}
	require.GreaterOrEqual(t, peersAt, 0, "%dx%d: no Peers panel:\n%s", w, h, v)
	require.Contains(t, lines[peersAt+1], "address", "%dx%d", w, h)
	require.Contains(t, lines[peersAt+2], "* "+scriptPeer, "%dx%d: the first peer row is not the download peer:\n%s", w, h, v)
	shown := 0
	for _, l := range panelRows(v, "Peers 3") {
		if strings.Contains(l, "127.0.0.1:1") {
			shown++
		}
	}
	if shown < 3 {
		require.Contains(t, lines[peersAt], fmt.Sprintf("+%d more", 3-shown), "%dx%d: %d of 3 peers shown, no sign of the others:\n%s", w, h, shown, v)
	}

	figures := -1
	for _, want := range []string{"expected false positives", "all combined", "precision", "entropy"} {
		i := strings.Index(v, want)
		require.GreaterOrEqual(t, i, 0, "%dx%d: privacy figure %q missing:\n%s", w, h, want, v)
		figures = max(figures, i)
	}
	braille := func(l string) bool {
		return strings.ContainsFunc(l, func(r rune) bool { return r >= 0x2800 && r <= 0x28ff })
	}
	chart := 0
	for i, l := range lines {
		// the first row of a chart (braille dots): its caption is above
		if !braille(l) || i > 0 && braille(lines[i-1]) {
			continue
		}
		chart++
		require.Contains(t, lines[i-1], "expected f", "%dx%d: a chart without a caption:\n%s", w, h, v)
		require.Greater(t, strings.Index(v, lines[i-1]), figures, "%dx%d: a chart before the figures", w, h)
	}
	if h >= 40 {
		require.Positive(t, chart, "%dx%d: room for the chart, none drawn:\n%s", w, h, v)
	}
	require.NotContains(t, v, "tx seen", "%dx%d", w, h)
	require.Contains(t, v, "tx tested", "%dx%d", w, h)
}

// TestEverySize renders the dashboard at every size from 80x24 up, with
// three peers of which the download peer sorts second by address. Before,
// at 80x24 the footer was cut before "? help" and "q quit" and the Peers
// panel showed the other peer with no sign of the hidden one; at 120x30
// the Privacy panel dropped "all combined", precision and entropy but
// kept a chart without a caption.
func TestEverySize(t *testing.T) {
	w := newTestWallet(t)
	for _, sz := range everySize {
		m := withEarlyPeer(t, scriptedModel(t, sz[0], sz[1], w))
		v := m.View()
		checkFrame(t, v, sz[0], sz[1])
		checkDashboard(t, ansi.Strip(v), sz[0], sz[1])
	}
}

// TestFooterKeepsTheWayOut: every view's footer keeps its way out at
// 80 columns (the detail and the filter picture: esc and q; the help:
// esc and q; a search: enter and esc).
func TestFooterKeepsTheWayOut(t *testing.T) {
	for _, tc := range []struct{ press, want1, want2 string }{
		{"", "? help", "q quit"}, {"\n", "esc back", "q quit"}, {"b", "esc back", "q quit"},
		{"?", "esc back", "q quit"}, {"/wal", "enter keeps", "esc clears"},
	} {
		for _, wd := range []int{80, 100, 120} {
			m := feed(t, scriptedModel(t, wd, 24, nil), keys(tc.press)...)
			lines := strings.Split(ansi.Strip(m.View()), "\n")
			f := lines[len(lines)-1]
			require.Contains(t, f, tc.want1, "%q at %d: %q", tc.press, wd, f)
			require.Contains(t, f, tc.want2, "%q at %d: %q", tc.press, wd, f)
		}
	}
}

// panelRows returns the body rows of the panel titled title in a plain
// view: under its rule when stacked, inside its box in the grid (the
// box's own columns only).
func panelRows(v, title string) []string {
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		r := []rune(l)
		at := runeIndex(r, []rune(title))
		if at < 0 {
			continue
		}
		left := 0
		for j := at; j >= 0; j-- {
			if r[j] == '╭' {
				left = j
				break
			}
		}
		if r[left] != '╭' { // stacked: a rule across the screen
			var out []string
			for _, b := range lines[i+1 : len(lines)-1] {
				if strings.HasPrefix(b, "── ") {
					break
				}
				out = append(out, b)
			}
			return out
		}
		right := left + 1
		for right < len(r) && r[right] != '╮' {
			right++
		}
		var out []string
		for _, b := range lines[i+1:] {
			br := []rune(b)
			if right >= len(br) {
				break
			}
			cell := br[left : right+1]
			if cell[0] == '╰' {
				break
			}
			out = append(out, string(cell[1:len(cell)-1]))
		}
		return out
	}
	return nil
}

// runeIndex is strings.Index on runes.
func runeIndex(s, sub []rune) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if string(s[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}

// tab is the tab key.
var tab = tea.KeyMsg{Type: tea.KeyTab}

// TestLogLinesReadWhole: a log line longer than the pane is wrapped at
// word boundaries, never cut, where the pane has the rows (at 160x48 lines
// were cut mid-word with no way to read them whole); where it has not
// (120x30, 80x24), enter on the focused log shows the bottom line whole.
// Scrolling up reaches the oldest line.
func TestLogLinesReadWhole(t *testing.T) {
	long := "time=03:04:20.000 level=INFO msg=\"try, in another terminal: bloomwatch privacy analyze --transcript " +
		"/tmp/bloomwatch-demo-1234/spv/transcript.jsonl --btcd-rpc 127.0.0.1:45678 --rpcuser abcdef0123456789 " +
		"--rpcpass 0123456789abcdef0123456789abcdef --outpoints\""
	want, _ := compactLog(long)
	whole := func(rows []string) string {
		var words []string
		for _, r := range rows {
			words = append(words, strings.Fields(r)...)
		}
		return strings.Join(words, " ")
	}
	m := scriptedModel(t, 160, 48, nil)
	m = feed(t, m, logMsg{lines: []string{long}})
	v := ansi.Strip(m.View())
	pane := panelRows(v, "─ Log")
	for _, r := range pane {
		require.False(t, strings.HasSuffix(strings.TrimRight(r, " "), "…"), "a cut log row %q", r)
	}
	require.Contains(t, whole(pane), want, "the line is not whole in the pane:\n%s", v)
	for _, sz := range [][2]int{{120, 30}, {80, 24}} {
		m := scriptedModel(t, sz[0], sz[1], nil)
		m = feed(t, m, logMsg{lines: []string{long}})
		m = feed(t, m, tab, tab)
		require.Equal(t, PanelLog, m.Focus())
		require.Contains(t, ansi.Strip(m.View()), "enter: the bottom line whole")
		m = feed(t, m, keys("\n")...)
		v := ansi.Strip(m.View())
		require.Contains(t, v, "Log line")
		require.Contains(t, whole(panelRows(v, "Log line")), want, "%dx%d:\n%s", sz[0], sz[1], v)
		m = feed(t, m, keys("\x1b")...)
		require.Contains(t, ansi.Strip(m.View()), "Matched")
	}
	// Scrolled up to the top, the oldest line shows.
	m = scriptedModel(t, 160, 48, nil)
	m = feed(t, m, tab, tab)
	require.Equal(t, PanelLog, m.Focus())
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyHome})
	oldest := m.st.log.at(0)
	require.Contains(t, ansi.Strip(m.View()), oldest[:40])
}

// TestHelpShowsTheUniverseSourceWhole: the help's last paragraph, the
// universe's source, is not cut (it was capped at 120 runes, so the help
// ended in "= 2800 ca…." above empty rows).
func TestHelpShowsTheUniverseSourceWhole(t *testing.T) {
	src := element.DescribeTxUniverse(1400, 433, 466, "/tmp/bloomwatch-demo-1234/spv/universe.json")
	rs := scriptedReadings(t)
	last := rs[len(rs)-1]
	last.UniverseSource = src
	m := scriptedModel(t, 160, 48, nil)
	m = feed(t, m, readingsMsg{readings: []privacy.Reading{last}})
	m = feed(t, m, keys("?")...)
	var words []string
	for _, l := range m.helpLines(m.detailWidth()) {
		words = append(words, strings.Fields(ansi.Strip(l))...)
	}
	require.Contains(t, strings.Join(words, " "), src+".")
}
