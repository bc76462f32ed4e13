package tui

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/bloomwatch/bloomwatch/netparams"
)

// Panel names a dashboard panel that can take the focus.
type Panel int

// The focusable (scrollable) panels, in tab order.
const (
	// PanelMatched is the matched transactions table (focused first).
	PanelMatched Panel = iota
	// PanelPeers is the peer table.
	PanelPeers
	// PanelLog is the log pane.
	PanelLog
	numPanels
)

// String returns the panel's name.
func (p Panel) String() string {
	switch p {
	case PanelMatched:
		return "matched"
	case PanelPeers:
		return "peers"
	case PanelLog:
		return "log"
	}
	return "unknown"
}

// shared is the part of a Model its copies share: the done channel that
// releases the channel readers and the once that guards Config.Quit.
type shared struct {
	done     chan struct{}
	quitOnce sync.Once
}

// Model is the dashboard; it implements tea.Model. Create it with New.
// Copies of a Model share its event state (bubbletea keeps one), so run
// one Model in one program.
type Model struct {
	cfg    Config
	styles *Styles
	keys   KeyMap
	help   help.Model
	now    func() time.Time
	sh     *shared
	st     *state

	params *chaincfg.Params // the network's, for addresses (nil: unknown)

	width, height int
	focus         Panel
	hideFP        bool
	// offset is each scrollable panel's distance from its newest row
	// (the matched table's: its first visible row).
	offset [numPanels]int
	// cursor is the matched table's selected row (0 at the top).
	cursor int

	// the matched table's search and order
	searching bool
	query     string
	sortBy    sortMode
	sortAsc   bool

	// overlay replaces the panels: a transaction's detail (detail), the
	// filter picture or the help, scrolled by ovOff
	overlay overlay
	detail  *matchRow
	logLine string // the log line overlayLogLine shows
	ovOff   int

	wallet     walletSnapshot
	haveWallet bool
	walletErr  error
	walletGen  uint64 // bumped on every wallet change applied
	quitting   bool
	// caches shared by copies (View has a value receiver); Update
	// refreshes them so View finds them built
	chart      *chartCache
	tbl        *tableView
	details    *detailCache
	pics       *bitsCache
	paints     map[paintKey]string
	helpLine   map[helpLineKey]string
	eventsDone bool // the node's event channel was closed
}

// New returns a dashboard reading and calling what cfg names.
func New(cfg Config) Model {
	st := cfg.Styles
	if st == nil {
		st = DefaultStyles()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	h := help.New()
	h.Styles.ShortKey = st.Help.Bold(true)
	h.Styles.ShortDesc = st.Help
	h.Styles.FullKey = st.Help.Bold(true)
	h.Styles.FullDesc = st.Help
	var params *chaincfg.Params
	if n, err := netparams.Lookup(cfg.Network); err == nil {
		params = n.Params
	}
	return Model{
		cfg:      cfg,
		styles:   st,
		keys:     DefaultKeyMap(),
		help:     h,
		now:      now,
		sh:       &shared{done: make(chan struct{})},
		st:       newState(),
		params:   params,
		chart:    &chartCache{},
		tbl:      &tableView{},
		details:  &detailCache{},
		pics:     &bitsCache{},
		paints:   make(map[paintKey]string),
		helpLine: make(map[helpLineKey]string),
		width:    80,
		height:   24,
	}
}

// maxQuery caps a search's length.
const maxQuery = 100

// Init implements tea.Model: it arms the channel readers and the clock.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.waitEvents(), m.waitReadings(), m.waitWallet(), m.waitLog(), m.waitFinished(), tick())
}

// Update implements tea.Model.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	nm, cmd := m.update(msg)
	nm.refresh()
	return nm, cmd
}

// update applies one message.
func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.clampCursor()
		return m, nil
	case tea.KeyMsg:
		return m.handleKey(msg)
	case finishedMsg:
		m.quit()
		return m, tea.Quit
	case eventsMsg:
		following := m.cursor == 0
		sel := m.selected()
		for _, e := range msg.events {
			m.st.apply(e, m.hideFP)
		}
		m.keepSelection(sel, following)
		if msg.closed {
			m.eventsDone = true
			m.st.logf(m.now(), "node event stream closed")
			return m, nil
		}
		return m, m.waitEvents()
	case readingsMsg:
		for _, r := range msg.readings {
			m.st.addReading(r)
		}
		if msg.closed {
			return m, nil
		}
		return m, m.waitReadings()
	case logMsg:
		added := 0
		for _, l := range msg.lines {
			if l, ok := compactLog(cleanLog(l)); ok {
				m.st.log.push(l)
				added++
			}
		}
		if m.offset[PanelLog] > 0 {
			m.offset[PanelLog] += added
		}
		if msg.closed {
			return m, nil
		}
		return m, m.waitLog()
	case tickMsg:
		return m, tick()
	case walletMsg:
		for _, r := range msg.results {
			if r.Err != nil {
				m.walletErr = r.Err
				continue
			}
			m.wallet.apply(r.Change)
			m.haveWallet, m.walletErr = true, nil
			m.walletGen++
		}
		if msg.closed {
			return m, nil
		}
		return m, m.waitWallet()
	case reloadDoneMsg:
		m.st.logf(m.now(), "filter reload handed to the node")
		return m, nil
	}
	return m, nil
}

// refresh rebuilds what View reads that the last message may have made
// stale: the matched table (searched or sorted), the open detail and the
// filter picture. View then only slices them.
func (m *Model) refresh() {
	m.table()
	m.clampCursor()
	if m.width <= 0 || m.height <= 0 {
		return
	}
	l := m.layout()
	switch m.overlay {
	case overlayDetail, overlayHelp, overlayLogLine:
		m.clampOverlay()
	case overlayBits:
		w, h := m.width, max(l.bodyH-1, 0)
		if l.grid {
			w, h = m.width-2, max(l.bodyH-2, 0)
		}
		m.bitsLines(w, h)
	}
}

// handleKey applies one key press: to the search input while one is
// typed, to the overlay when one is open, else to the panels.
func (m Model) handleKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys
	if msg.Type == tea.KeyCtrlC {
		m.quit()
		return m, tea.Quit
	}
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !m.searching {
		// keys typed fast can arrive in one read ("/fp"): one at a time
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			var cmd tea.Cmd
			m, cmd = m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
			cmds = append(cmds, cmd)
		}
		return m, tea.Batch(cmds...)
	}
	switch {
	case m.searching:
		return m.searchKey(msg)
	case m.overlay != overlayNone:
		return m.overlayKey(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		m.quit()
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.overlay, m.ovOff = overlayHelp, 0
	case key.Matches(msg, k.Focus):
		m.focus = (m.focus + 1) % numPanels
	case key.Matches(msg, k.Back):
		m.focus = (m.focus + numPanels - 1) % numPanels
	case key.Matches(msg, k.FP):
		m.hideFP = !m.hideFP
		m.cursor, m.offset[PanelMatched] = 0, 0
	case key.Matches(msg, k.Reload):
		m.st.logf(m.now(), "manual filter reload requested")
		if m.cfg.Reload != nil {
			return m, reload(m.cfg.Reload)
		}
	case key.Matches(msg, k.Open):
		if r := m.selected(); r != nil && m.focus == PanelMatched {
			m.overlay, m.detail, m.ovOff = overlayDetail, r, 0
		}
		if l, ok := m.bottomLogLine(); ok && m.focus == PanelLog {
			m.overlay, m.logLine, m.ovOff = overlayLogLine, l, 0
		}
	case key.Matches(msg, k.Close):
		if m.query != "" {
			m.query = ""
			m.cursor, m.offset[PanelMatched] = 0, 0
		}
	case key.Matches(msg, k.Search):
		m.focus, m.searching = PanelMatched, true
	case key.Matches(msg, k.Sort):
		m.sortBy = (m.sortBy + 1) % numSorts
		m.cursor, m.offset[PanelMatched] = 0, 0
	case key.Matches(msg, k.Reverse):
		m.sortAsc = !m.sortAsc
		m.cursor, m.offset[PanelMatched] = 0, 0
	case key.Matches(msg, k.Bits):
		m.overlay = overlayBits
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.PageUp):
		m.move(-m.page())
	case key.Matches(msg, k.PageDown):
		m.move(m.page())
	case key.Matches(msg, k.Top):
		m.move(-1 << 30)
	case key.Matches(msg, k.Bottom):
		m.move(1 << 30)
	}
	return m, nil
}

// searchKey applies a key while a search is typed: enter keeps it, esc
// drops it, the arrows move the cursor, backspace, ctrl+w and ctrl+u
// delete a character, a word or everything, and printable characters
// are added; the rows narrow as it is typed.
func (m Model) searchKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys
	q := m.query
	switch {
	case key.Matches(msg, k.Apply):
		m.searching = false
		return m, nil
	case key.Matches(msg, k.Close):
		m.searching, q = false, ""
	case msg.Type == tea.KeyUp:
		m.move(-1)
		return m, nil
	case msg.Type == tea.KeyDown:
		m.move(1)
		return m, nil
	case msg.Type == tea.KeyBackspace:
		if r := []rune(q); len(r) > 0 {
			q = string(r[:len(r)-1])
		}
	case msg.Type == tea.KeyCtrlW:
		q = strings.TrimRight(q, " ")
		q = q[:strings.LastIndexByte(q, ' ')+1]
	case msg.Type == tea.KeyCtrlU:
		q = ""
	case msg.Type == tea.KeyRunes || msg.Type == tea.KeySpace:
		add := string(msg.Runes)
		if msg.Type == tea.KeySpace {
			add = " "
		}
		if utf8.RuneCountInString(q)+utf8.RuneCountInString(add) <= maxQuery {
			q += sanitize(add)
		}
	}
	if q != m.query {
		m.query = q
		m.cursor, m.offset[PanelMatched] = 0, 0
	}
	return m, nil
}

// overlayKey applies a key while a detail or the filter picture is open.
func (m Model) overlayKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		m.quit()
		return m, tea.Quit
	case key.Matches(msg, k.Close),
		m.overlay == overlayHelp && key.Matches(msg, k.Help),
		m.overlay == overlayBits && key.Matches(msg, k.Bits):
		m.overlay, m.detail, m.ovOff = overlayNone, nil, 0
	case key.Matches(msg, k.Bits):
		m.overlay, m.ovOff = overlayBits, 0
	case key.Matches(msg, k.Reload):
		m.st.logf(m.now(), "manual filter reload requested")
		if m.cfg.Reload != nil {
			return m, reload(m.cfg.Reload)
		}
	case m.overlay == overlayBits:
	case key.Matches(msg, k.Up):
		m.ovOff--
	case key.Matches(msg, k.Down):
		m.ovOff++
	case key.Matches(msg, k.PageUp):
		m.ovOff -= m.detailPage()
	case key.Matches(msg, k.PageDown):
		m.ovOff += m.detailPage()
	case key.Matches(msg, k.Top):
		m.ovOff = 0
	case key.Matches(msg, k.Bottom):
		m.ovOff = 1 << 30
	}
	m.clampOverlay()
	return m, nil
}

// detailPage is an overlay's visible line count less one.
func (m *Model) detailPage() int {
	l := m.layout()
	h := l.bodyH - 1
	if l.grid {
		h = l.bodyH - 2
	}
	return max(h-1, 1)
}

// overlayLines returns the line count of the open scrollable overlay.
func (m *Model) overlayLines() int {
	switch {
	case m.overlay == overlayDetail && m.detail != nil:
		return len(m.detailLines(m.detailWidth()))
	case m.overlay == overlayHelp:
		return len(m.helpLines(m.detailWidth()))
	case m.overlay == overlayLogLine:
		return len(logLineLines(m.logLine, m.detailWidth()))
	}
	return 0
}

// clampOverlay keeps an overlay's scroll inside its lines.
func (m *Model) clampOverlay() {
	n := m.overlayLines()
	m.ovOff = min(max(m.ovOff, 0), max(n-m.detailPage()-1, 0))
}

// move moves the focused panel: the matched table's cursor by delta
// rows, or the peers' and the log's scroll.
func (m *Model) move(delta int) {
	if m.focus == PanelMatched {
		m.cursor = min(max(m.cursor+delta, 0), max(m.tableLen()-1, 0))
		m.clampCursor()
		return
	}
	m.scroll(delta * m.down())
}

// down returns the offset change of one step down in the focused panel:
// the table and the peers grow downwards from the top (offset counts rows
// scrolled down), the log grows upwards from the bottom (offset counts
// lines scrolled up).
func (m *Model) down() int {
	if m.focus == PanelLog {
		return -1
	}
	return 1
}

// quit calls Config.Quit once and releases the channel readers.
func (m *Model) quit() {
	m.quitting = true
	m.sh.quitOnce.Do(func() {
		close(m.sh.done)
		if m.cfg.Quit != nil {
			m.cfg.Quit()
		}
	})
}

// scroll moves the focused panel's offset by delta rows, clamped to its
// content.
func (m *Model) scroll(delta int) {
	p := m.focus
	n := m.rowCount(p)
	l := m.layout()
	vis := l.rows[p]
	maxOff := max(n-vis, 0)
	if p == PanelLog {
		// lines are wrapped: a page holds fewer lines than rows
		maxOff = m.logMaxOffset(m.logWidth(l), vis)
	}
	off := m.offset[p]
	if delta > 0 && off+delta > maxOff {
		off = maxOff
	} else {
		off = min(max(off+delta, 0), maxOff)
	}
	m.offset[p] = off
}

// page returns the focused panel's visible row count (one page).
func (m *Model) page() int {
	return max(m.layout().rows[m.focus]-1, 1)
}

// rowCount returns the number of rows a scrollable panel holds.
func (m *Model) rowCount(p Panel) int {
	switch p {
	case PanelMatched:
		return m.tableLen()
	case PanelPeers:
		return len(m.st.peerList)
	case PanelLog:
		return m.st.log.len()
	}
	return 0
}

// matchedView returns the rows the matched table shows.
func (m *Model) matchedView() *ring[*matchRow] {
	if m.hideFP {
		return m.st.own
	}
	return m.st.all
}

// HideFalsePositives reports whether the matched table hides false
// positives (toggled by f).
func (m Model) HideFalsePositives() bool { return m.hideFP }

// Cursor returns the matched table's cursor row (0 at the top).
func (m Model) Cursor() int { return m.cursor }

// Detail returns the txid of the transaction the detail view shows, and
// false when none is open.
func (m Model) Detail() (string, bool) {
	if m.overlay != overlayDetail || m.detail == nil {
		return "", false
	}
	return m.detail.txid.String(), true
}

// Query returns the matched table's search ("" when none).
func (m Model) Query() string { return m.query }

// Focus returns the focused panel.
func (m Model) Focus() Panel { return m.focus }

// Matched returns the number of matched transactions seen: the wallet's
// and the false positives.
func (m Model) Matched() (own, falsePositives int) { return m.st.nOwn, m.st.nFP }

// Quitting reports whether the user asked to quit.
func (m Model) Quitting() bool { return m.quitting }
