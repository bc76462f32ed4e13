package tui

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

func TestRing(t *testing.T) {
	r := newRing[int](3)
	for i := 1; i <= 3; i++ {
		_, ev := r.push(i)
		require.False(t, ev)
	}
	old, ev := r.push(4)
	require.True(t, ev)
	require.Equal(t, 1, old)
	require.Equal(t, 3, r.len())
	require.Equal(t, []int{2, 3, 4}, []int{r.at(0), r.at(1), r.at(2)})
	require.Equal(t, 4, r.last(0))
	require.Equal(t, 2, r.last(2))
	r.reset()
	require.Equal(t, 0, r.len())
	r.push(9)
	require.Equal(t, 9, r.last(0))
}

func TestMatchedRowsCappedCountsExact(t *testing.T) {
	m := New(Config{Now: fixedNow})
	const n = MaxMatched + 250
	evs := make([]spv.Event, n)
	for i := range evs {
		evs[i] = spv.MatchedTx{Txid: txid(i), Height: int32(i), Relevant: i%2 == 0, FalsePositive: i%2 == 1}
	}
	m = feed(t, m, eventsMsg{events: evs})
	require.Equal(t, MaxMatched, m.st.all.len())
	require.Equal(t, MaxMatched, len(m.st.byTxid))
	require.Equal(t, n/2, m.st.own.len())
	own, fps := m.Matched()
	require.Equal(t, n/2, own)
	require.Equal(t, n/2, fps)
	// the oldest rows were dropped, the newest is first
	require.Equal(t, txid(n-1), m.st.all.last(0).txid)
	require.Equal(t, txid(250), m.st.all.at(0).txid)
}

func TestMempoolThenMinedAndReorg(t *testing.T) {
	m := New(Config{Now: fixedNow})
	m = feed(t, m, eventsMsg{events: []spv.Event{
		spv.MatchedTx{Txid: txid(1), Height: -1, Relevant: true, Amount: 500},
		spv.MatchedTx{Txid: txid(2), Height: 10, FalsePositive: true},
		spv.BlockProcessed{Height: 10, PeerHeight: 12},
		spv.MatchedTx{Txid: txid(1), Height: 11, Relevant: true, Amount: 500},
		spv.BlockProcessed{Height: 11, PeerHeight: 12},
	}})
	own, fps := m.Matched()
	require.Equal(t, 1, own)
	require.Equal(t, 1, fps)
	require.Equal(t, 2, m.st.all.len(), "a mined mempool transaction is updated in place")
	require.EqualValues(t, 11, m.st.byTxid[txid(1)].height)

	m = feed(t, m, eventsMsg{events: []spv.Event{spv.Reorg{ForkHeight: 10, OldHeight: 11, NewHeight: 12}}})
	require.EqualValues(t, heightReorged, m.st.byTxid[txid(1)].height)
	require.EqualValues(t, 10, m.st.byTxid[txid(2)].height, "blocks at or below the fork stay")
	require.EqualValues(t, 10, m.st.blockHeight)
	m.width, m.height = 100, 30
	require.Contains(t, ansi.Strip(m.View()), "reorged")
	require.Contains(t, ansi.Strip(m.View()), "REORG at fork 10")

	// the transaction in the new chain: confirmed again
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.MatchedTx{Txid: txid(1), Height: 12, Relevant: true, Amount: 500}}})
	require.EqualValues(t, 12, m.st.byTxid[txid(1)].height)
	own, _ = m.Matched()
	require.Equal(t, 1, own)
}

func TestVerdictFlipsToWallet(t *testing.T) {
	// a false positive that pays a newly derived address becomes the
	// wallet's when the block is fetched again
	m := New(Config{Now: fixedNow})
	m = feed(t, m, eventsMsg{events: []spv.Event{
		spv.MatchedTx{Txid: txid(1), Height: 5, FalsePositive: true},
		spv.MatchedTx{Txid: txid(1), Height: 5, Relevant: true, Amount: 7},
	}})
	own, fps := m.Matched()
	require.Equal(t, 1, own)
	require.Equal(t, 0, fps)
	require.Equal(t, 1, m.st.own.len())
}

func TestSyncRateAndETA(t *testing.T) {
	m := New(Config{Now: fixedNow})
	var evs []spv.Event
	for h := int32(1); h <= 50; h++ {
		evs = append(evs, spv.BlockProcessed{At: spv.At{Time: t0.Add(time.Duration(h) * 250 * time.Millisecond)}, Height: h, PeerHeight: 250})
	}
	m = feed(t, m, eventsMsg{events: evs})
	r, ok := m.st.rate()
	require.True(t, ok)
	require.InDelta(t, 4.0, r, 1e-9)
	require.InDelta(t, 0.2, m.st.progress(), 1e-9)
	m.width, m.height = 80, 24
	require.Contains(t, ansi.Strip(m.View()), "4.0 blk/s  ETA 50s")
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.SyncDone{Height: 250}}})
	require.Equal(t, 1.0, m.st.progress())
	require.Contains(t, ansi.Strip(m.View()), "ETA done")
}

func TestLogCapped(t *testing.T) {
	m := New(Config{Now: fixedNow})
	lines := make([]string, MaxLogLines+40)
	for i := range lines {
		lines[i] = strings.Repeat("x", i%7) + "line"
	}
	m = feed(t, m, logMsg{lines: lines})
	require.Equal(t, MaxLogLines, m.st.log.len())
	require.Equal(t, lines[len(lines)-1], m.st.log.last(0))
}

func TestHostileStrings(t *testing.T) {
	evil := "\x1b[2J\x1b]0;pwned\x07" + strings.Repeat("A", 5000) + "\xff\xfe"
	m := New(Config{Now: fixedNow})
	m = feed(t, m,
		tea.WindowSizeMsg{Width: 120, Height: 40},
		eventsMsg{events: []spv.Event{
			spv.PeerConnected{Peer: spv.PeerInfo{Addr: evil, UserAgent: evil, StartHeight: math.MaxInt32}},
			spv.PeerBanned{Addr: evil, Reason: evil, Score: 100},
			spv.FilterLoaded{Peer: evil, Reason: evil, FilterInfo: spv.FilterInfo{Flags: evil, FPRate: math.NaN(), Loads: -3}},
			spv.BlockProcessed{Height: -5, PeerHeight: -7, ObservedFPRate: math.Inf(1)},
			spv.HeadersProgress{Height: math.MaxInt32, PeerHeight: math.MinInt32},
			spv.Reorg{ForkHeight: -1},
		}},
		readingsMsg{readings: []privacy.Reading{{Peer: evil, Reason: evil, IntersectionFP: math.NaN(), ExpectedFP: math.Inf(1),
			Kind: transcript.Kind(evil)}}},
		logMsg{lines: []string{evil, "time=" + evil + " level=WARN msg=" + evil}},
	)
	// a match from a hostile peer, with a nonsense explanation
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.MatchedTx{Txid: txid(1), Height: 3, FalsePositive: true, Peer: evil,
		FilterSeq: 99, FilterFPRate: math.NaN(), Why: &bip37.Match{Kind: bip37.MatchKind(evil), Index: 7, Element: []byte(evil)}}}})
	for _, press := range []string{"", "\n", "\x1bb", "\x1b?"} {
		m = feed(t, m, keys(press)...)
		v := m.View()
		checkFrame(t, v, 120, 40)
		plain := ansi.Strip(v)
		require.NotContains(t, plain, "\x1b", "keys %q", press)
		require.NotContains(t, plain, "\x07")
		require.NotContains(t, v, "\x1b]0;", "no OSC sequence reaches the terminal")
		require.NotContains(t, v, "\x1b[2J")
	}
}

func TestResizeFrames(t *testing.T) {
	m := scriptedModel(t, 80, 24, nil)
	for _, sz := range [][2]int{{80, 24}, {81, 25}, {100, 30}, {119, 40}, {120, 24}, {120, 40}, {160, 48}, {250, 80}, {40, 12}, {10, 3}, {1, 1}} {
		m = feed(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for _, ov := range []overlay{overlayNone, overlayHelp, overlayBits, overlayDetail} {
			m.overlay, m.detail = ov, m.st.all.last(1)
			for f := Panel(0); f < numPanels; f++ {
				m.focus = f
				m.refresh()
				checkFrame(t, m.View(), sz[0], sz[1])
			}
		}
		m.overlay, m.detail = overlayNone, nil
		l := m.layout()
		require.Equal(t, sz[0] >= GridWidth, l.grid, "size %v", sz)
	}
	// zero size (before the first WindowSizeMsg on some terminals)
	m = feed(t, m, tea.WindowSizeMsg{Width: 0, Height: 0})
	require.Empty(t, m.View())
}

func TestStackedFocusGetsSpareRows(t *testing.T) {
	m := scriptedModel(t, 80, 40, nil)
	l := m.layout()
	require.False(t, l.grid)
	require.Greater(t, l.rows[PanelMatched], l.rows[PanelLog])
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyTab}, tea.KeyMsg{Type: tea.KeyTab})
	require.Equal(t, PanelLog, m.Focus())
	l = m.layout()
	require.Greater(t, l.rows[PanelLog], l.rows[PanelMatched])
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyShiftTab})
	require.Equal(t, PanelPeers, m.Focus())
}

func TestScrollClamps(t *testing.T) {
	m := scriptedModel(t, 160, 30, nil)
	n := m.st.all.len()
	vis := m.layout().rows[PanelMatched]
	require.Greater(t, n-vis, vis, "the test needs more than two pages")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyEnd})
	require.Equal(t, n-1, m.Cursor(), "end moves the cursor to the oldest row")
	require.Equal(t, n-vis, m.offset[PanelMatched], "and the view with it")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyPgDown})
	require.Equal(t, n-1, m.Cursor(), "clamped at the oldest row")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyPgUp})
	require.Equal(t, n-1-(vis-1), m.Cursor())
	require.Equal(t, n-vis, m.offset[PanelMatched], "the cursor is still on screen")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyPgUp})
	require.Equal(t, n-1-2*(vis-1), m.Cursor())
	require.Equal(t, m.Cursor(), m.offset[PanelMatched], "the view follows the cursor up")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyHome})
	require.Equal(t, 0, m.Cursor())
	require.Equal(t, 0, m.offset[PanelMatched])
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyUp})
	require.Equal(t, 0, m.Cursor())

	// a moved cursor stays on its row when new ones arrive
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyDown}, tea.KeyMsg{Type: tea.KeyDown})
	sel := m.selected()
	top := m.tableRow(m.offset[PanelMatched])
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.MatchedTx{Txid: txid(9999), Height: 101, Relevant: true}}})
	require.Same(t, sel, m.selected())
	require.Equal(t, 3, m.Cursor())
	require.Same(t, top, m.tableRow(m.offset[PanelMatched]), "the rows stay in place")
	// a cursor on the first row follows the newest
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyHome})
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.MatchedTx{Txid: txid(9998), Height: 101, Relevant: true}}})
	require.Equal(t, txid(9998), m.selected().txid)

	// the log scrolls up from the bottom
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyTab}, tea.KeyMsg{Type: tea.KeyTab})
	require.Equal(t, PanelLog, m.Focus())
	require.Greater(t, m.st.log.len(), m.layout().rows[PanelLog])
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyUp})
	require.Equal(t, 1, m.offset[PanelLog])
	require.Contains(t, ansi.Strip(m.View()), "Log  (1 newer below)")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyHome})
	require.Equal(t, m.st.log.len()-m.layout().rows[PanelLog], m.offset[PanelLog], "home shows the oldest lines")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyEnd})
	require.Equal(t, 0, m.offset[PanelLog])
}

func TestHideFalsePositivesView(t *testing.T) {
	m := scriptedModel(t, 160, 48, nil)
	v := ansi.Strip(m.View())
	require.Contains(t, v, "false pos")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'f'}})
	v = ansi.Strip(m.View())
	require.NotContains(t, v, "false pos ")
	require.Contains(t, v, "false positives 33 (hidden)")
	require.Contains(t, v, "[1/15]")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'?'}})
	require.Contains(t, ansi.Strip(m.View()), "page down")
}

func TestReadBatch(t *testing.T) {
	done := make(chan struct{})
	ch := make(chan int, 10)
	wrap := func(b []int, closed bool) tea.Msg {
		return struct {
			b      []int
			closed bool
		}{b, closed}
	}
	for i := 0; i < 5; i++ {
		ch <- i
	}
	got := readBatch(ch, done, wrap)().(struct {
		b      []int
		closed bool
	})
	require.Equal(t, []int{0, 1, 2, 3, 4}, got.b, "one batch drains what is queued")
	require.False(t, got.closed)

	ch <- 7
	close(ch)
	got = readBatch(ch, done, wrap)().(struct {
		b      []int
		closed bool
	})
	require.Equal(t, []int{7}, got.b)
	require.True(t, got.closed)

	// a reader waiting on an idle channel returns nil once done is closed
	idle := make(chan int)
	close(done)
	require.Nil(t, readBatch(idle, done, wrap)())
	require.Nil(t, readBatch[int](nil, done, wrap))
}

func TestWidthMatchesAnsi(t *testing.T) {
	alphabet := []string{"a", "Z", " ", "─", "│", "╭", "⣿", "⠀", "█", "░", "…", "▶", "∩", "•", "↑",
		"\x1b[38;5;42m", "\x1b[0m", "\x1b[1m", "é", "中", "🙂", "\t", "\x1b]0;x\x07"}
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 40).Draw(t, "parts")
		s := strings.Join(parts, "")
		require.Equal(t, ansi.StringWidth(s), width(s), "width(%q) = %d, ansi says %d", s, width(s), ansi.StringWidth(s))
		w := rapid.IntRange(1, 50).Draw(t, "w")
		got := ansi.StringWidth(fit(s, w))
		require.Equal(t, w, got, "fit(%q, %d) is %d wide", s, w, got)
	})
}

func TestRenderCurve(t *testing.T) {
	lines := renderCurve([]float64{1000, 1000, 10, 0.1, 0}, 30, 4)
	require.Len(t, lines, 4)
	for _, l := range lines {
		require.Equal(t, 30, ansi.StringWidth(l))
	}
	// decade ticks from the top value's decade, clean labels
	require.True(t, strings.HasPrefix(strings.TrimSpace(lines[0]), "1000 ┤"), lines[0])
	require.Contains(t, lines[2], "1 ┤")
	require.NotContains(t, strings.Join(lines, ""), "e-0")
	// the first point is on the top row, the last (zero) on the bottom row
	require.NotEqual(t, '⠀', []rune(lines[0])[chartLabelWidth])
	require.NotEqual(t, '⠀', []rune(lines[3])[len([]rune(lines[3]))-1])
	require.Equal(t, '⠀', []rune(lines[0])[len([]rune(lines[0]))-1])
	// more readings than dot columns still span the whole history
	many := make([]float64, 5000)
	for i := range many {
		many[i] = float64(5000 - i)
	}
	lines = renderCurve(many, 20, 3)
	require.Contains(t, lines[0], "1e4")
	require.Len(t, renderCurve(nil, 20, 3), 3)
	require.Nil(t, renderCurve(many, 20, 0))
}

func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		vals   []float64
		lo, hi int
	}{
		{[]float64{7e-8, 3e-4}, -8, -3},
		{[]float64{0.43}, -1, 0},
		{[]float64{0, 0}, -2, 0},
		{[]float64{1e-30, 5}, -11, 1}, // at most maxDecades
		{[]float64{100}, 1, 2},
	} {
		lo, hi := logRange(c.vals)
		require.Equal(t, [2]int{c.lo, c.hi}, [2]int{lo, hi}, "%v", c.vals)
	}
	for d, want := range map[int]string{-4: "1e-4", -2: "0.01", -1: "0.1", 0: "1", 2: "100", 3: "1000", 4: "1e4", -12: "1e-12"} {
		require.Equal(t, want, decadeLabel(d))
	}
	// ticks never collide and the top decade is labelled
	for h := 1; h <= 20; h++ {
		lines := renderCurve([]float64{1e-11, 1}, 40, h)
		require.Len(t, lines, h)
		require.Contains(t, lines[0], "1 ┤")
	}
}

func TestFormatters(t *testing.T) {
	require.Equal(t, "1.55e-4", fmtRate(1.55e-4))
	require.Equal(t, "2.50e-3", fmtRate(2.5e-3))
	require.Equal(t, "1.00e0", fmtRate(1))
	require.Equal(t, "0", fmtRate(0))
	require.Equal(t, "2,878", fmtUint(2878))
	require.Equal(t, "1,000,000", fmtInt(1_000_000))
	require.Equal(t, "-12,345", fmtInt(-12345))
	require.Equal(t, "999", fmtInt(999))
	require.Equal(t, "7.2e-8", formatCount(7.2e-8))
	require.Equal(t, "0.43", formatCount(0.43))
	require.Equal(t, "2,848", formatCount(2848.2))
	require.Equal(t, "1.2e6", formatCount(1.2e6))
}

func TestReloadCounting(t *testing.T) {
	m := New(Config{Now: fixedNow})
	load := func(reason string) spv.Event {
		return spv.FilterLoaded{Peer: "p", Reason: reason, FilterInfo: spv.FilterInfo{Elements: 3}}
	}
	m = feed(t, m, eventsMsg{events: []spv.Event{
		load(transcript.ReasonInitial), load(transcript.ReasonNewPeer), load(transcript.ReasonRestart),
	}})
	require.Equal(t, 0, m.st.reloads)
	m = feed(t, m, eventsMsg{events: []spv.Event{load(transcript.ReasonNewKey), load(transcript.ReasonManual)}})
	require.Equal(t, 2, m.st.reloads)
	require.Equal(t, transcript.ReasonManual, m.st.lastReason)
}

// TestWalletChangesApply: the dashboard holds the wallet as its changes
// build it (the first brings every address and unspent output, a later
// one adds, updates and removes); it reads no wallet: its Config holds
// only the channel of changes.
func TestWalletChangesApply(t *testing.T) {
	w := newTestWallet(t)
	first := walletChange(t, w)
	m := New(Config{Now: fixedNow})
	m = feed(t, m, walletMsg{results: []wallet.ChangeResult{first}})
	require.True(t, m.haveWallet)
	require.Equal(t, 2, m.wallet.addresses)
	require.Equal(t, 1, m.wallet.used)
	require.Equal(t, 1, m.wallet.utxos)
	require.EqualValues(t, 50_000_000, m.wallet.balance.Confirmed)
	require.Len(t, m.wallet.watched, 2)
	require.Len(t, m.wallet.elements, 2)

	// The payment is spent and a new output pays the second address.
	paid := first.Change.UTXOs[0]
	a2 := first.Change.Addresses[1]
	a2.Used = true
	next := wallet.UTXO{Txid: txid(77), Index: 1, Amount: 7_000, Height: 2, Address: a2.Address}
	later := first.Change
	later.Balance = wallet.Balance{Confirmed: 7_000}
	later.Counts.ImportedUsed = 2
	later.Addresses = []wallet.AddressInfo{a2}
	later.UTXOs = []wallet.UTXO{next}
	later.Spent = []wire.OutPoint{{Hash: paid.Txid, Index: paid.Index}}
	gen := m.walletGen
	m = feed(t, m, walletMsg{results: []wallet.ChangeResult{{Change: later}}})
	require.Equal(t, gen+1, m.walletGen)
	require.Equal(t, 2, m.wallet.addresses)
	require.Equal(t, 2, m.wallet.used)
	require.Equal(t, 1, m.wallet.utxos)
	require.Equal(t, next, m.wallet.unspent[wire.OutPoint{Hash: next.Txid, Index: 1}])
	require.NotContains(t, m.wallet.unspent, wire.OutPoint{Hash: paid.Txid, Index: paid.Index})
	require.EqualValues(t, 7_000, m.wallet.balance.Confirmed)
	m.width, m.height = 160, 48
	require.Contains(t, ansi.Strip(m.View()), "confirmed 0.00007000")
}

func TestWalletErrorShown(t *testing.T) {
	w := newTestWallet(t)
	m := New(Config{Now: fixedNow})
	m = feed(t, m, walletMsg{results: []wallet.ChangeResult{walletChange(t, w)}})
	require.NoError(t, w.Close())
	var cur wallet.ChangeCursor
	_, err := w.Changes(&cur)
	require.Error(t, err, "a closed wallet cannot be read")
	m = feed(t, m, walletMsg{results: []wallet.ChangeResult{{Err: err}}})
	require.Error(t, m.walletErr)
	m.width, m.height = 160, 48
	v := ansi.Strip(m.View())
	require.Contains(t, v, "wallet: ")
	require.Contains(t, v, "confirmed 0.50000000", "the last good reading stays")
}

func TestRefetchedBlockKeepsVerdict(t *testing.T) {
	// spv re-sends a block after the filter grew: transactions the
	// watcher already judged come with neither flag and no amount
	m := New(Config{Now: fixedNow})
	m = feed(t, m, eventsMsg{events: []spv.Event{
		spv.MatchedTx{Txid: txid(1), Height: 7, Relevant: true, Amount: 1_000_000},
		spv.MatchedTx{Txid: txid(2), Height: 7, FalsePositive: true},
		spv.MatchedTx{Txid: txid(1), Height: 7},
		spv.MatchedTx{Txid: txid(2), Height: 7},
		spv.MatchedTx{Txid: txid(3), Height: 8},
	}})
	own, fps := m.Matched()
	require.Equal(t, 1, own)
	require.Equal(t, 1, fps)
	require.Equal(t, verdictWallet, m.st.byTxid[txid(1)].verdict)
	require.EqualValues(t, 1_000_000, m.st.byTxid[txid(1)].amount)
	require.Equal(t, verdictFP, m.st.byTxid[txid(2)].verdict)
	require.Equal(t, verdictSeen, m.st.byTxid[txid(3)].verdict)
	require.Equal(t, 3, m.st.all.len())
	require.Equal(t, 1, m.st.own.len())
	m.width, m.height = 160, 48
	v := ansi.Strip(m.View())
	require.Contains(t, v, "+0.01000000")
	require.Contains(t, v, "seen")
}

func TestReadBatchCapsBusyStream(t *testing.T) {
	ch := make(chan int, 10_000)
	for i := 0; i < cap(ch); i++ {
		ch <- i
	}
	done := make(chan struct{})
	wrap := func(b []int, _ bool) tea.Msg { return b }
	var sizes []int
	for len(ch) > 0 {
		sizes = append(sizes, len(readBatch(ch, done, wrap)().([]int)))
	}
	require.Equal(t, []int{MaxBatch, MaxBatch, 10_000 - 2*MaxBatch}, sizes)
}

func TestReadingsOnePointPerRecord(t *testing.T) {
	m := New(Config{Now: fixedNow})
	rd := func(seq uint64, kind transcript.Kind, fp float64) privacy.Reading {
		return privacy.Reading{Seq: seq, Kind: kind, IntersectionFP: fp}
	}
	m = feed(t, m, readingsMsg{readings: []privacy.Reading{
		rd(0, "", 0),                                                             // the universe set before any record
		rd(0, transcript.KindFilterLoad, 5), rd(0, transcript.KindFilterLoad, 6), // the universe grew
		rd(1, transcript.KindFilterLoad, 3), rd(1, transcript.KindFilterLoad, 4),
	}})
	require.Equal(t, 2, m.st.readings.len())
	require.EqualValues(t, 2, m.st.readingsSeen)
	require.Equal(t, 6.0, m.st.readings.at(0).IntersectionFP)
	require.Equal(t, 4.0, m.st.readings.last(0).IntersectionFP)
	require.Equal(t, 4.0, m.st.reading.IntersectionFP)
}

func TestUncheckedBlocksShown(t *testing.T) {
	m := New(Config{Now: fixedNow})
	blk := func(h int32, c spv.BlockChecks) []spv.Event {
		out := []spv.Event{spv.BlockProcessed{Height: h, Checks: c}}
		if c == spv.CheckNoSecondPeer {
			out = append([]spv.Event{spv.BlockUnchecked{Height: h, Reason: "no second peer has the block"}}, out...)
		}
		return out
	}
	var events []spv.Event
	for i, c := range []spv.BlockChecks{spv.CheckSecondPeer, spv.CheckNoSecondPeer, spv.CheckNoSecondPeer,
		spv.CheckSecondPeer, spv.CheckNoSecondPeer, 0} {
		events = append(events, blk(int32(i+1), c)...)
	}
	m = feed(t, m, eventsMsg{events: events})
	require.Equal(t, 3, m.st.unchecked)
	require.Equal(t, "Peers 0 · 3 blocks unchecked", peersPanel{}.title(&m, 80))
	warned := 0
	for i := 0; i < m.st.log.len(); i++ {
		if strings.Contains(m.st.log.at(i), "UNCHECKED") {
			warned++
		}
	}
	require.Equal(t, 2, warned, "one log line per run of unchecked blocks")
}

// TestCappedFilterShown: a filter at BIP37's 36,000-byte cap says so in
// the filter panel, with the target it cannot reach beside the rate it
// has, in the grid's five lines and in the compact two.
func TestCappedFilterShown(t *testing.T) {
	m := New(Config{Now: fixedNow})
	load := spv.FilterLoaded{Peer: "127.0.0.1:1", Reason: "initial", FilterInfo: spv.FilterInfo{Elements: 15000, Bytes: 36000, HashFuncs: 5,
		FPRate: 6.3e-4, TargetFPRate: 1e-4, Capped: true, Loads: 1}}
	m = feed(t, m, eventsMsg{events: []spv.Event{load}})
	for _, h := range []int{filterLinesGrid, 2} {
		got := ansi.Strip(strings.Join(filterPanel{}.render(&m, 60, h), "\n"))
		require.Contains(t, got, "(cap)", "height %d", h)
		require.Contains(t, got, "CAPPED (target 1.00e-4)", "height %d", h)
	}
	load.Capped, load.Bytes, load.FPRate = false, 19584, 5e-6
	m = feed(t, m, eventsMsg{events: []spv.Event{load}})
	require.NotContains(t, ansi.Strip(strings.Join(filterPanel{}.render(&m, 60, filterLinesGrid), "\n")), "CAPPED")
}

// TestSyncedLoggedOncePerHeight: two SyncDone at one height (the node's
// synced state flapped while a check was in flight) make one log line;
// a new height makes another.
func TestSyncedLoggedOncePerHeight(t *testing.T) {
	m := New(Config{Now: fixedNow})
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.SyncDone{Height: 0}, spv.SyncDone{Height: 0},
		spv.SyncDone{Height: 465}, spv.SyncDone{Height: 465}, spv.SyncDone{Height: 466}}})
	n := 0
	for i := 0; i < m.st.log.len(); i++ {
		if strings.Contains(m.st.log.at(i), "synced to height") {
			n++
		}
	}
	require.Equal(t, 3, n)
}

// TestAwaitingChecksHeaderKeepsDownloadPeer: at 80 columns the long
// "awaiting a check" state would push the peers out of the header; the
// short state keeps the download peer in it.
func TestAwaitingChecksHeaderKeepsDownloadPeer(t *testing.T) {
	for _, w := range []int{80, 120} {
		m := New(Config{Now: fixedNow, Network: "regtest"})
		m.width, m.height = w, 24
		m = feed(t, m, eventsMsg{events: []spv.Event{
			spv.PeerConnected{Peer: spv.PeerInfo{Addr: "127.0.0.1:33945", UserAgent: "/btcd:0.25.0/", Download: true}},
			spv.PeerConnected{Peer: spv.PeerInfo{Addr: "127.0.0.1:33946", UserAgent: "/btcd:0.25.0/"}},
			spv.SyncDone{Height: 467}, spv.ChecksAwaited{Height: 468, Blocks: 1}}})
		head := strings.SplitN(ansi.Strip(m.View()), "\n", 2)[0]
		require.Contains(t, head, "download 127.0.0.1:33945", "%d columns: %q", w, head)
		require.Contains(t, head, "awaiting", "%d columns: %q", w, head)
		require.LessOrEqual(t, width(head), w)
	}
}

func TestAwaitingChecksIsNotSynced(t *testing.T) {
	// At the tip with a block awaiting an omission check the header says
	// so and not "synced"; the check passing (SyncDone) makes it synced,
	// one abandoned is logged.
	m := New(Config{Now: fixedNow})
	m.width, m.height = 120, 30
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.SyncDone{Height: 10}, spv.ChecksAwaited{Height: 11, Blocks: 1}}})
	view := ansi.Strip(m.View())
	require.Contains(t, view, "at the tip, 1 block awaiting a check")
	require.NotContains(t, strings.SplitN(view, "\n", 2)[0], "synced")
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.SyncDone{Height: 11}}})
	require.Contains(t, strings.SplitN(ansi.Strip(m.View()), "\n", 2)[0], "synced")
	m = feed(t, m, eventsMsg{events: []spv.Event{spv.ChecksAwaited{Height: 12, Blocks: 2},
		spv.BlockUnchecked{Height: 12, Reason: "no second peer got the block within 30s", Abandoned: true}}})
	require.Contains(t, ansi.Strip(m.View()), "at the tip, 1 block awaiting a check")
	found := false
	for i := range m.st.log.len() {
		found = found || strings.Contains(m.st.log.at(i), "block 12 check ABANDONED")
	}
	require.True(t, found, "the abandoned check is logged")
}
