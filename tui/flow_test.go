package tui

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
)

// flowWait is how long a flow waits for a screen.
const flowWait = 10 * time.Second

// waitScreen waits until the program's output contains every string.
func waitScreen(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(flowWait), teatest.WithCheckInterval(20*time.Millisecond))
}

// flowChannels returns buffered channels holding the scripted session.
func flowChannels(t *testing.T) (chan spv.Event, chan privacy.Reading, chan string) {
	evs, rds, logs := scriptedEvents(), scriptedReadings(t), scriptedLog()
	ev := make(chan spv.Event, len(evs)+16)
	for _, e := range evs {
		ev <- e
	}
	rd := make(chan privacy.Reading, len(rds))
	for _, r := range rds {
		rd <- r
	}
	lg := make(chan string, len(logs)+16)
	for _, l := range logs {
		lg <- l
	}
	return ev, rd, lg
}

func TestFlowFilterReloadQuit(t *testing.T) {
	ev, rd, lg := flowChannels(t)
	var reloads, quits atomic.Int32
	var reason atomic.Value
	m := New(Config{
		Network: "regtest", Events: ev, Privacy: rd, Log: lg, Wallet: walletFeed(t, newTestWallet(t)),
		Reload: func(r string) { reason.Store(r); reloads.Add(1) },
		Quit:   func() { quits.Add(1) },
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	waitScreen(t, tm, "wallet 15", "false positives 33", "0.50000000")

	tm.Type("f")
	waitScreen(t, tm, "(hidden)")
	tm.Type("r")
	waitScreen(t, tm, "filter reload handed to the node")
	// events arriving later are still read (the reader re-armed)
	ev <- spv.SyncDone{At: spv.At{Time: t0.Add(20 * time.Second)}, Height: 120}
	waitScreen(t, tm, "synced to height 120")
	tm.Type("q")

	fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(flowWait)).(Model)
	require.True(t, ok)
	require.True(t, fm.HideFalsePositives())
	require.True(t, fm.Quitting())
	own, fps := fm.Matched()
	require.Equal(t, 15, own)
	require.Equal(t, 33, fps)
	require.EqualValues(t, 1, reloads.Load())
	require.Equal(t, "manual", reason.Load())
	require.EqualValues(t, 1, quits.Load())
	require.True(t, fm.haveWallet)
	require.EqualValues(t, 50_000_000, fm.wallet.balance.Confirmed)
	require.True(t, fm.st.synced)
	// quitting released the readers: done is closed
	select {
	case <-fm.sh.done:
	default:
		require.FailNow(t, "done not closed after quit")
	}
}

func TestFlowCtrlCQuitsOnceAndTabScrolls(t *testing.T) {
	ev, rd, lg := flowChannels(t)
	var quits atomic.Int32
	m := New(Config{Network: "regtest", Events: ev, Privacy: rd, Log: lg, Quit: func() { quits.Add(1) }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	waitScreen(t, tm, "[1/48]")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	waitScreen(t, tm, "[3/48]")
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	waitScreen(t, tm, "▶ Log")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(flowWait)).(Model)
	require.Equal(t, PanelLog, fm.Focus())
	require.Equal(t, 2, fm.offset[PanelMatched])
	require.False(t, fm.HideFalsePositives())
	require.EqualValues(t, 1, quits.Load())
}

func TestFlowResize(t *testing.T) {
	ev, rd, lg := flowChannels(t)
	tm := teatest.NewTestModel(t, New(Config{Network: "regtest", Events: ev, Privacy: rd, Log: lg}),
		teatest.WithInitialTermSize(80, 24))
	waitScreen(t, tm, "── Filter")
	tm.Send(tea.WindowSizeMsg{Width: 160, Height: 48})
	waitScreen(t, tm, "╭─ Filter")
	tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(flowWait)).(Model)
	require.Equal(t, 100, fm.width)
	require.Equal(t, 30, fm.height)
	checkFrame(t, fm.View(), 100, 30)
}

func TestFlowFinishedEndsTheDashboard(t *testing.T) {
	ev, rd, lg := flowChannels(t)
	finished := make(chan struct{})
	var quits atomic.Int32
	m := New(Config{
		Network: "regtest", Events: ev, Privacy: rd, Log: lg, Wallet: walletFeed(t, newTestWallet(t)),
		Finished: finished, Quit: func() { quits.Add(1) },
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	waitScreen(t, tm, "Filter")
	close(finished)
	tm.WaitFinished(t, teatest.WithFinalTimeout(flowWait))
	require.Equal(t, int32(1), quits.Load(), "Quit called once when the session finished")
}

// typeKeys sends key presses to a test program (see keys).
func typeKeys(tm *teatest.TestModel, s string) {
	for _, k := range keys(s) {
		tm.Send(k)
	}
}

func TestFlowDetailSearchSortBitsHelp(t *testing.T) {
	ev, rd, lg := flowChannels(t)
	var quits atomic.Int32
	m := New(Config{Network: "regtest", Events: ev, Privacy: rd, Log: lg, Wallet: walletFeed(t, newTestWallet(t)),
		Quit: func() { quits.Add(1) }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitScreen(t, tm, "wallet 15", "fp 33", "[1/48]")

	// / narrows the table as it is typed; enter keeps the search
	typeKeys(tm, "/fp")
	waitScreen(t, tm, "[1/33]  /fp", "33 rows")
	typeKeys(tm, "\n")
	waitScreen(t, tm, "enter explain tx")
	// enter explains the row under the cursor, esc comes back
	typeKeys(tm, "j\n")
	waitScreen(t, tm, "Why it is a false positive", "hash functions probe bits")
	typeKeys(tm, "\x1b")
	waitScreen(t, tm, "[2/33]  /fp")
	// esc clears the search
	typeKeys(tm, "\x1b")
	waitScreen(t, tm, "[1/48] ─")
	// s cycles the order, S reverses it
	typeKeys(tm, "s")
	waitScreen(t, tm, "by height ↓")
	typeKeys(tm, "S")
	waitScreen(t, tm, "by height ↑")
	typeKeys(tm, "s")
	waitScreen(t, tm, "by amount ↑")
	// b shows the filter picture, b or esc closes it
	typeKeys(tm, "b")
	waitScreen(t, tm, "Filter #9 as sent to 127.0.0.1:18444", "bits newly set")
	typeKeys(tm, "b")
	// ? shows the help, ? closes it
	typeKeys(tm, "?")
	waitScreen(t, tm, "What the figures mean")
	typeKeys(tm, "?")
	// q quits from a detail view too
	typeKeys(tm, "\nq")

	fm := tm.FinalModel(t, teatest.WithFinalTimeout(flowWait)).(Model)
	require.True(t, fm.Quitting())
	require.EqualValues(t, 1, quits.Load())
	id, open := fm.Detail()
	require.True(t, open)
	require.Equal(t, fm.tableRow(0).txid.String(), id)
	require.Equal(t, sortAmount, fm.sortBy)
	require.True(t, fm.sortAsc)
	require.Empty(t, fm.Query())
}

func TestFlowSearchEditing(t *testing.T) {
	ev, rd, lg := flowChannels(t)
	tm := teatest.NewTestModel(t, New(Config{Network: "regtest", Events: ev, Privacy: rd, Log: lg}),
		teatest.WithInitialTermSize(80, 24))
	waitScreen(t, tm, "[1/48]")
	// keywords select verdicts; q is typed into a search, not quitting;
	// backspace, ctrl+w and ctrl+u edit it
	typeKeys(tm, "/wallet")
	waitScreen(t, tm, "15 rows")
	typeKeys(tm, " !")
	waitScreen(t, tm, "0 rows")
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	waitScreen(t, tm, "/wallet ", "15 rows")
	typeKeys(tm, "q")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlW})
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlW})
	waitScreen(t, tm, "48 rows")
	typeKeys(tm, "mempool")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	typeKeys(tm, "mempool\n")
	waitScreen(t, tm, "[1/1]  /mempool")
	typeKeys(tm, "q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(flowWait)).(Model)
	require.Equal(t, "mempool", fm.Query())
	require.Equal(t, 1, fm.tableLen())
	require.EqualValues(t, heightMempool, fm.tableRow(0).height)
}
