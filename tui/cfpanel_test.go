package tui

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/spv"
)

// cfPeers are the BIP158 session's peers: the download peer served most
// blocks, the second the rest.
var cfPeers = []privacy.PeerBlocks{{Peer: scriptPeer, Blocks: 14}, {Peer: "127.0.0.1:18445", Blocks: 2}}

// cfReading is a BIP158 session's last reading as the session computes
// it: 100 blocks scanned from height 21 with 6,090 queries each (filters
// of 40 items), 16 fetched whole of which 3 were false positives, and the
// meter's reading of scriptFilter(40), the BIP37 alternative, among
// 10,000 candidates.
func cfReading(t testing.TB) privacy.Reading {
	alt, err := privacy.MeasureFilter(privacy.MeterConfig{}, scriptFilter(40),
		privacy.WalletCounts{OnChain: 2, Watched: 40, Elements: 40}, 10_000, "test universe")
	require.NoError(t, err)
	const scanned, wallet, fps, queries = 100, 13, 3, 6090
	var expected float64
	for range scanned - wallet {
		expected += privacy.BlockFPRate(queries, 40)
	}
	return privacy.Reading{WalletKnown: true, Members: 2, Watched: 40, Candidates: 10_000, CF: &privacy.CFReading{
		FiltersFrom: 21, Scanned: scanned, Fetched: wallet + fps, PerPeer: cfPeers, WalletBlocks: wallet,
		FalsePositiveBlocks: fps, Queries: queries, ExpectedFPBlocks: expected,
		FPBlocksCI: stats.PoissonInterval(fps, stats.ConfidenceLevel), BIP37: alt,
	}}
}

// cfModel is a dashboard of w x h cells after a BIP158 session: two
// compact-filter peers, headers to 120, 100 blocks delivered, and the
// session's reading.
func cfModel(t testing.TB, w, h int) Model {
	at := func(d time.Duration) spv.At { return spv.At{Time: t0.Add(d)} }
	evs := []spv.Event{
		spv.PeerConnected{At: at(0), Peer: spv.PeerInfo{Addr: scriptPeer, UserAgent: "/btcd:0.25.0/",
			Services: wire.SFNodeNetwork | wire.SFNodeCF | wire.SFNodeWitness, StartHeight: 120, LastBlock: 120,
			PingTime: 3 * time.Millisecond, Download: true, Transport: "v2"}},
		spv.PeerConnected{At: at(0), Peer: spv.PeerInfo{Addr: "127.0.0.1:18445", UserAgent: "/btcd:0.25.0/",
			Services: wire.SFNodeNetwork | wire.SFNodeCF, StartHeight: 120, PingTime: 40 * time.Millisecond, Transport: "v1"}},
		spv.HeadersProgress{At: at(0), Height: 120, PeerHeight: 120},
	}
	for h := int32(21); h <= 120; h++ {
		evs = append(evs, spv.BlockProcessed{At: at(time.Duration(h) * 100 * time.Millisecond), Height: h, PeerHeight: 120,
			CF: &spv.CFBlock{FilterItems: 40, Queries: 6090, Fetched: h%7 == 0}})
	}
	m := New(Config{Network: "regtest", Now: fixedNow})
	return feed(t, m, tea.WindowSizeMsg{Width: w, Height: h}, eventsMsg{events: evs},
		readingsMsg{readings: []privacy.Reading{cfReading(t)}}, logMsg{lines: scriptedLog()})
}

// TestCFPanelEverySize renders the privacy panel of a BIP158 session at
// every size: it says what the peers learn (R of S scanned), BIP37's
// price for the same wallet and where the anonymity set comes from, and
// none of the BIP37 meter's figures of a filter never sent; from 120x30
// on, the wallet and false-positive blocks with their expectation and
// interval, and the blocks per peer.
func TestCFPanelEverySize(t *testing.T) {
	rd := cfReading(t)
	cf := rd.CF
	for _, sz := range everySize {
		m := cfModel(t, sz[0], sz[1])
		v := m.View()
		checkFrame(t, v, sz[0], sz[1])
		plain := ansi.Strip(v)
		body := strings.Join(panelRows(plain, "Privacy · BIP158"), "\n")
		require.NotEmpty(t, body, "%dx%d: no BIP158 privacy panel:\n%s", sz[0], sz[1], plain)
		require.Contains(t, body, "peers learn", "%dx%d:\n%s", sz[0], sz[1], plain)
		require.Contains(t, body, "16 of 100", "%dx%d:\n%s", sz[0], sz[1], plain)
		require.Contains(t, body, "if BIP37", "%dx%d:\n%s", sz[0], sz[1], plain)
		require.Contains(t, body, fmtInt(int64(cf.BIP37.Bytes))+" B", "%dx%d:\n%s", sz[0], sz[1], plain)
		require.Contains(t, body, "privacy analyze --btcd-rpc", "%dx%d:\n%s", sz[0], sz[1], plain)
		require.NotContains(t, body, "latest filter", "%dx%d: BIP37 figures of no filter:\n%s", sz[0], sz[1], plain)
		if sz[0] >= GridWidth && sz[1] >= 30 {
			for _, want := range []string{"13 held a wallet payment", "3 false positives",
				"expected " + formatCount(cf.ExpectedFPBlocks),
				"[" + formatCount(cf.FPBlocksCI.Lo) + ", " + formatCount(cf.FPBlocksCI.Hi) + "]",
				"per peer: " + scriptPeer + " 14", "precision " + fmt.Sprintf("%.3f", cf.BIP37.Precision)} {
				require.Contains(t, body, want, "%dx%d:\n%s", sz[0], sz[1], plain)
			}
		}
		if os.Getenv("BLOOMWATCH_SHOW") != "" && (sz == [2]int{80, 24} || sz == [2]int{120, 30} || sz == [2]int{160, 48}) {
			t.Logf("%dx%d:\n%s", sz[0], sz[1], plain)
		}
	}
}

// TestCFPanelShowsPrecisionOnlyWithCandidates: without a universe the
// BIP37 alternative's precision and entropy say nothing, and the panel
// says "--" and why.
func TestCFPanelShowsPrecisionOnlyWithCandidates(t *testing.T) {
	rd := cfReading(t)
	alt := *rd.CF.BIP37
	m := cfModel(t, 160, 48)
	body := strings.Join(panelRows(ansi.Strip(m.View()), "Privacy · BIP158"), "\n")
	require.Contains(t, body, "precision "+fmt.Sprintf("%.3f", alt.Precision)+", entropy "+fmt.Sprintf("%.1f", alt.Entropy)+" bits")
	require.Contains(t, body, formatCount(alt.ExpectedFP)+" of 10,000 candidates")

	alt.Candidates = 0
	cf := *rd.CF
	cf.BIP37 = &alt
	rd.CF = &cf
	m = feed(t, m, readingsMsg{readings: []privacy.Reading{rd}})
	body = strings.Join(panelRows(ansi.Strip(m.View()), "Privacy · BIP158"), "\n")
	require.Contains(t, body, "precision --, entropy -- bits")
	require.Contains(t, body, "candidate count not known")
}

// TestCFHelpExplainsBIP158: over BIP158 the help view explains the
// panel's figures first; over BIP37 it does not mention them.
func TestCFHelpExplainsBIP158(t *testing.T) {
	help := ansi.Strip(feed(t, cfModel(t, 120, 40), keys("?")...).View())
	require.Contains(t, help, "Privacy over BIP158")
	help = ansi.Strip(feed(t, scriptedModel(t, 120, 40, nil), keys("?")...).View())
	require.NotContains(t, help, "Privacy over BIP158")
}

// TestCFPerPeerSaysHowManyMore: the peers that do not fit the line are
// counted, not dropped silently, and the line never passes its width.
func TestCFPerPeerSaysHowManyMore(t *testing.T) {
	m := cfModel(t, 120, 30)
	var pp []privacy.PeerBlocks
	for i := range 6 {
		pp = append(pp, privacy.PeerBlocks{Peer: fmt.Sprintf("127.0.0.1:1844%d", i), Blocks: 10 - i})
	}
	line := ansi.Strip(m.cfPerPeer(58, pp))
	require.LessOrEqual(t, ansi.StringWidth(line), 58)
	require.Contains(t, line, "127.0.0.1:18440 10")
	shown := strings.Count(line, "127.0.0.1:")
	require.Less(t, shown, 6)
	require.Contains(t, line, fmt.Sprintf("+%d more", 6-shown))
	all := ansi.Strip(m.cfPerPeer(400, pp))
	require.Equal(t, 6, strings.Count(all, "127.0.0.1:"))
	require.NotContains(t, all, "more")
}
