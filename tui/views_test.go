package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// goldenSizes are the terminal sizes every view's golden file is kept at.
var goldenSizes = [][2]int{{80, 24}, {120, 30}, {120, 40}, {160, 48}}

// keys turns a string into key presses: one rune each, with "\n" for
// enter and "\x1b" for esc.
func keys(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		switch r {
		case '\n':
			out = append(out, tea.KeyMsg{Type: tea.KeyEnter})
		case '\x1b':
			out = append(out, tea.KeyMsg{Type: tea.KeyEsc})
		case ' ':
			out = append(out, tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
		default:
			out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		}
	}
	return out
}

// goldenViews renders the scripted session at each golden size after the
// key presses and checks the frame and its golden file (one per size,
// named after the test).
func goldenViews(t *testing.T, press string, check func(t *testing.T, m Model, plain string)) {
	w := newTestWallet(t)
	for _, sz := range goldenSizes {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := scriptedModel(t, sz[0], sz[1], w)
			m = feed(t, m, keys(press)...)
			v := m.View()
			checkFrame(t, v, sz[0], sz[1])
			plain := ansi.Strip(v)
			if check != nil {
				check(t, m, plain)
			}
			golden.RequireEqual(t, []byte(plain))
		})
	}
}

func TestGoldenMain(t *testing.T) {
	goldenViews(t, "", func(t *testing.T, _ Model, v string) {
		require.Contains(t, v, "Matched")
		require.NotContains(t, v, "e-0", "no padded exponents")
	})
}

func TestGoldenDetailFalsePositive(t *testing.T) {
	// search the false positives, keep the search, open the first
	goldenViews(t, "/fp\n\n", func(t *testing.T, m Model, v string) {
		id, ok := m.Detail()
		require.True(t, ok)
		r := m.st.byTxid[m.detail.txid]
		require.Equal(t, r.txid.String(), id)
		require.Equal(t, verdictFP, r.verdict)
		require.Contains(t, v, "false positive")
		all := ansi.Strip(strings.Join(m.detailLines(m.detailWidth()), "\n"))
		require.Contains(t, all, "hash functions probe bits")
		require.Contains(t, all, "← matched the filter")
	})
}

func TestGoldenDetailWalletSpend(t *testing.T) {
	// the second wallet row is a spend of the wallet's previous payment
	goldenViews(t, "/wallet\nj\n", func(t *testing.T, m Model, v string) {
		require.Equal(t, verdictWallet, m.detail.verdict)
		require.Negative(t, m.detail.amount)
		require.Contains(t, v, "spends your output")
	})
}

func TestGoldenDetailWalletPayment(t *testing.T) {
	goldenViews(t, "/wallet\njj\n", func(t *testing.T, m Model, v string) {
		require.Equal(t, verdictWallet, m.detail.verdict)
		require.Positive(t, m.detail.amount)
		require.Contains(t, v, "pays your address")
	})
}

func TestGoldenFilterPicture(t *testing.T) {
	goldenViews(t, "b", func(t *testing.T, m Model, v string) {
		require.Contains(t, v, "Filter #9 as sent to 127.0.0.1:18444")
		require.Contains(t, v, "bits newly set")
		require.Contains(t, v, "m^ = ")
	})
}

func TestGoldenSearchTyping(t *testing.T) {
	// a number (a height or part of a txid) and a verdict keyword
	goldenViews(t, "/99 fp", func(t *testing.T, m Model, v string) {
		require.True(t, m.searching)
		require.Contains(t, v, "/99 fp")
		require.Positive(t, m.tableLen())
		require.EqualValues(t, 99, m.tableRow(0).height)
		for i := 0; i < m.tableLen(); i++ {
			require.Equal(t, verdictFP, m.tableRow(i).verdict)
		}
	})
}

func TestGoldenSortedByAmount(t *testing.T) {
	goldenViews(t, "ss", func(t *testing.T, m Model, v string) {
		require.Equal(t, sortAmount, m.sortBy)
		require.Contains(t, v, "by amount ↓")
		for i := 1; i < m.tableLen(); i++ {
			require.GreaterOrEqual(t, amountKey(m.tableRow(i-1)), amountKey(m.tableRow(i)))
		}
		require.EqualValues(t, 91_000_000, m.tableRow(0).amount)
	})
}

func TestGoldenFullHelp(t *testing.T) {
	goldenViews(t, "?", func(t *testing.T, m Model, v string) {
		require.Contains(t, v, "Expected false positives: addresses")
		require.Contains(t, v, "explain tx")
		require.Contains(t, v, "reload filter")
	})
}

// TestNoTruncatedFieldsAt120 checks that no field of the filter, wallet
// and privacy panels is cut at 120 columns (a cut field ends in …).
func TestNoTruncatedFieldsAt120(t *testing.T) {
	m := scriptedModel(t, 120, 40, newTestWallet(t))
	l := m.layout()
	for _, p := range []panel{filterP, walletP, privacyP} {
		for _, line := range p.render(&m, l.leftW-2, 40) {
			require.LessOrEqual(t, width(line), l.leftW-2, "%q", ansi.Strip(line))
			require.False(t, strings.HasSuffix(ansi.Strip(line), "…"), "%q", ansi.Strip(line))
		}
	}
}

func TestCoalescedKeys(t *testing.T) {
	// a terminal may hand several typed keys over in one read
	m := scriptedModel(t, 120, 40, nil)
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/fp")}, tea.KeyMsg{Type: tea.KeyEnter})
	require.Equal(t, "fp", m.Query())
	require.False(t, m.HideFalsePositives(), "f went into the search")
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jj")})
	require.Equal(t, 2, m.Cursor())
	// a paste into the search is taken whole
	m = feed(t, m, keys("\x1b/")...)
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("wallet"), Paste: true})
	require.Equal(t, "wallet", m.Query())
}

func TestFilterPictureHeatmap(t *testing.T) {
	// a full-size filter does not fit one dot per bit: a heatmap
	f, err := bip37.NewFilter(30_000, 0.0001, 7, bip37.UpdateAll)
	require.NoError(t, err)
	require.Equal(t, bip37.MaxFilterSize, f.Size())
	for i := 0; i < 20_000; i++ {
		f.Add([]byte(fmt.Sprint("element", i)))
	}
	for _, sz := range goldenSizes {
		m := scriptedModel(t, sz[0], sz[1], nil)
		m = feed(t, m, eventsMsg{events: []spv.Event{filterLoaded(spv.At{Time: t0}, f, 10, 100, transcript.ReasonManual, 20_000, 11)}})
		m = feed(t, m, keys("b")...)
		v := m.View()
		checkFrame(t, v, sz[0], sz[1])
		plain := ansi.Strip(v)
		require.Contains(t, plain, "a cell per ")
		require.Contains(t, plain, "since filter #9 to the same peer: another size")
		require.Contains(t, plain, "288,000 bits")
	}
	// the shades follow the share of bits set
	require.Equal(t, ' ', shade(0, 64))
	require.Equal(t, '░', shade(16, 64))
	require.Equal(t, '▒', shade(32, 64))
	require.Equal(t, '▓', shade(48, 64))
	require.Equal(t, '█', shade(64, 64))
}

func TestDetailCoinbaseScriptSigMatch(t *testing.T) {
	// a coinbase whose scriptSig push matched: the input says so
	f := scriptFilter(40)
	cb := wire.NewMsgTx(1)
	var push []byte
	for i := 0; ; i++ {
		push = []byte(fmt.Sprint("extranonce", i))
		if f.Matches(push) {
			break
		}
	}
	script := append([]byte{byte(len(push))}, push...)
	cb.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), script, nil))
	cb.AddTxOut(wire.NewTxOut(50_000, p2wpkh(program("miner", 1))))
	m := scriptedModel(t, 120, 40, nil)
	m = feed(t, m, eventsMsg{events: []spv.Event{matched(spv.At{Time: t0}, cb, 100, false, 0, f, 0)}})
	m = feed(t, m, keys("\n")...)
	require.Equal(t, bip37.MatchInputScript, m.detail.why.Kind)
	all := ansi.Strip(strings.Join(m.detailLines(m.detailWidth()), "\n"))
	require.Contains(t, all, "coinbase (new coins)  ← matched the filter")
	require.Contains(t, all, "a data push of input #0's scriptSig")
}

// TestPrivacyPanelBehaviour: the privacy panel shows the behaviour
// attack's reading (what the client's timing named, its precision
// beside chance, the verdict) when the meter has one.
func TestPrivacyPanelBehaviour(t *testing.T) {
	m := scriptedModel(t, 160, 48, nil)
	r := m.st.reading
	r.Behaviour = &behaviour.Reading{HasTruth: true, Reloads: 9, Refetches: 4,
		Blocks: behaviour.Level{Scores: []behaviour.Score{{Signal: behaviour.SignalAny, Suspects: 9, Hits: 9,
			Precision: 1, Chance: stats.Interval{Hi: 0.44}, Verdict: behaviour.VerdictPoints}}},
		Txs: behaviour.Level{Scores: []behaviour.Score{{Signal: behaviour.SignalAny, Suspects: 11, Hits: 9,
			Precision: 0.82, Chance: stats.Interval{Hi: 0.18}, Verdict: behaviour.VerdictPoints}}}}
	m.st.reading = r
	plain := ansi.Strip(strings.Join(privacyP.render(&m, 100, 30), "\n"))
	require.Contains(t, plain, "timing attack: points at your wallet · 9 reloads, 4 re-fetches seen")
	plain = ansi.Strip(strings.Join(privacyP.render(&m, 60, 30), "\n")) // the demo's panel width
	require.Contains(t, plain, "timing attack: points at your wallet\n")
	require.Contains(t, plain, "  named 9 blocks: precision 1.00, chance ≤ 0.44")
	require.Contains(t, plain, "  named 11 txs: precision 0.82, chance ≤ 0.18")
	r.Behaviour = &behaviour.Reading{Reloads: 2}
	m.st.reading = r
	plain = ansi.Strip(strings.Join(privacyP.render(&m, 100, 30), "\n"))
	require.Contains(t, plain, "timing attack: names nothing yet")
}
