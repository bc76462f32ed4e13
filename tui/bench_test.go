package tui

import (
	"fmt"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// benchModel is a 160x48 dashboard holding rows matched transactions
// (every third a false positive), 500 log lines and the scripted readings.
func benchModel(b *testing.B, rows int) Model {
	// draw colours as a real terminal would
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.TrueColor)
	b.Cleanup(func() { lipgloss.SetColorProfile(prev) })
	m := New(Config{Network: "regtest", Now: fixedNow})
	evs := make([]spv.Event, 0, rows+1)
	for i := 0; i < rows; i++ {
		evs = append(evs, spv.MatchedTx{At: spv.At{Time: t0}, Txid: txid(i), Height: int32(i / 3),
			Relevant: i%3 != 0, FalsePositive: i%3 == 0, Amount: int64(i)})
	}
	evs = append(evs, spv.BlockProcessed{At: spv.At{Time: t0}, Height: int32(rows / 3), PeerHeight: int32(rows / 3)})
	lines := make([]string, MaxLogLines)
	for i := range lines {
		lines[i] = "03:04:05 INF spv: a log line of ordinary length for the benchmark"
	}
	m = feed(b, m, tea.WindowSizeMsg{Width: 160, Height: 48}, eventsMsg{events: evs},
		readingsMsg{readings: scriptedReadings(b)}, logMsg{lines: lines})
	got := m.matchedView().len()
	require.Equal(b, min(rows, MaxMatched), got, "model holds %d rows, want %d", got, rows)
	v := m.View()
	require.Contains(b, v, "\x1b[", "benchmark view has no colours")
	return m
}

// benchView measures View, scrolled to the middle of the table so the
// visible rows come from the inside of the ring.
func benchView(b *testing.B, rows int) {
	m := benchModel(b, rows)
	m.offset[PanelMatched] = rows / 2
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(m.View()) == 0 {
			require.NotEqual(b, 0, len(m.View()), "empty view")
		}
	}
}

// BenchmarkView10 is the baseline: View with 10 matched transactions.
func BenchmarkView10(b *testing.B) { benchView(b, 10) }

// BenchmarkView10k is View with 10,000 matched transactions.
func BenchmarkView10k(b *testing.B) { benchView(b, 10_000) }

// BenchmarkView10kHideFP is View with 10,000 rows and false positives
// hidden.
func BenchmarkView10kHideFP(b *testing.B) {
	m := benchModel(b, 10_000)
	m = feed(b, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{'f'}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkUpdateEvents measures folding one batch of 1,000 events.
func BenchmarkUpdateEvents(b *testing.B) {
	evs := make([]spv.Event, 1000)
	for i := range evs {
		evs[i] = spv.BlockProcessed{At: spv.At{Time: t0.Add(time.Duration(i) * time.Millisecond)}, Height: int32(i + 1), PeerHeight: 5000}
	}
	m := New(Config{Network: "regtest", Now: fixedNow})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nm, _ := m.Update(eventsMsg{events: evs})
		m = nm.(Model)
	}
}

// BenchmarkView10kSearchedSorted is View with 10,000 rows searched for
// the wallet's and sorted by amount.
func BenchmarkView10kSearchedSorted(b *testing.B) {
	m := benchModel(b, 10_000)
	m = feed(b, m, keys("/wallet\nss")...)
	require.NotEqual(b, 0, m.tableLen(), "not searched and sorted")
	require.Equal(b, sortAmount, m.sortBy, "not searched and sorted")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkSearchKeystroke10k is one search keystroke over 10,000 rows:
// Update narrows and re-sorts the table.
func BenchmarkSearchKeystroke10k(b *testing.B) {
	m := benchModel(b, 10_000)
	m = feed(b, m, keys("s/")...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := []rune{'a', 'b'}[i%2]
		nm, _ := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		nm, _ = nm.(Model).Update(tea.KeyMsg{Type: tea.KeyBackspace})
		m = nm.(Model)
	}
}

// BenchmarkViewOverlays is View with the detail view of a row and with the
// picture of a full-size (36,000-byte) filter.
func BenchmarkViewOverlays(b *testing.B) {
	m := benchModel(b, 10_000)
	f, err := bip37.NewFilter(30_000, 0.0001, 7, bip37.UpdateAll)
	require.NoError(b, err)
	for i := 0; i < 30_000; i++ {
		f.Add([]byte(fmt.Sprint("element", i)))
	}
	m = feed(b, m, eventsMsg{events: []spv.Event{filterLoaded(spv.At{Time: t0}, f, 9, 1, transcript.ReasonManual, 30_000, 3)}})
	for _, c := range []struct {
		name  string
		press string
	}{{"detail", "\n"}, {"bits36000", "b"}} {
		b.Run(c.name, func(b *testing.B) {
			v := feed(b, m, keys(c.press)...)
			require.NotEqual(b, overlayNone, v.overlay, "no overlay")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = v.View()
			}
		})
	}
}

// BenchmarkFilterLoaded36000 is the Update that decodes a full-size
// filterload and renders its picture (what the picture costs, once per
// filterload, off View).
func BenchmarkFilterLoaded36000(b *testing.B) {
	m := benchModel(b, 10)
	m = feed(b, m, keys("b")...)
	f, err := bip37.NewFilter(30_000, 0.0001, 7, bip37.UpdateAll)
	require.NoError(b, err)
	ev := eventsMsg{events: []spv.Event{filterLoaded(spv.At{Time: t0}, f, 9, 1, transcript.ReasonManual, 30_000, 3)}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nm, _ := m.Update(ev)
		m = nm.(Model)
	}
}
