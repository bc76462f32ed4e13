package tui

import (
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
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

	width, height int
	focus         Panel
	hideFP        bool
	// offset is each scrollable panel's distance from its newest row.
	offset [numPanels]int

	wallet     walletSnapshot
	haveWallet bool
	walletErr  error
	polling    bool // a wallet poll is in flight
	pollAgain  bool // poll again when it returns
	quitting   bool
	chart      *chartCache // shared by copies: View has a value receiver
	paints     map[paintKey]string
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
	return Model{
		cfg:    cfg,
		styles: st,
		keys:   DefaultKeyMap(),
		help:   h,
		now:    now,
		sh:     &shared{done: make(chan struct{})},
		st:     newState(),
		chart:  &chartCache{},
		paints: make(map[paintKey]string),
		width:  80,
		height: 24,
	}
}

// Init implements tea.Model: it arms the channel readers, the clock and
// the first wallet poll.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.waitEvents(), m.waitReadings(), m.waitLog(), m.waitFinished(), tick(),
		func() tea.Msg { return pollNowMsg{} })
}

// Update implements tea.Model.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		return m, nil
	case tea.KeyMsg:
		return m.handleKey(msg)
	case finishedMsg:
		m.quit()
		return m, tea.Quit
	case eventsMsg:
		poll := false
		for _, e := range msg.events {
			added, changed := m.st.apply(e, m.hideFP)
			poll = poll || changed
			if added > 0 && m.offset[PanelMatched] > 0 {
				m.offset[PanelMatched] += added
			}
		}
		var cmds []tea.Cmd
		if msg.closed {
			m.eventsDone = true
			m.st.logf(m.now(), "node event stream closed")
		} else {
			cmds = append(cmds, m.waitEvents())
		}
		if poll {
			cmds = append(cmds, m.requestPoll())
		}
		return m, tea.Batch(cmds...)
	case readingsMsg:
		for _, r := range msg.readings {
			m.st.addReading(r)
		}
		if msg.closed {
			return m, nil
		}
		return m, m.waitReadings()
	case logMsg:
		for _, l := range msg.lines {
			m.st.log.push(cleanLog(l))
		}
		if m.offset[PanelLog] > 0 {
			m.offset[PanelLog] += len(msg.lines)
		}
		if msg.closed {
			return m, nil
		}
		return m, m.waitLog()
	case tickMsg:
		return m, tea.Batch(tick(), m.requestPoll())
	case pollNowMsg:
		return m, m.requestPoll()
	case walletMsg:
		m.polling = false
		if msg.err != nil {
			m.walletErr = msg.err
		} else {
			m.wallet, m.haveWallet, m.walletErr = msg.snap, true, nil
		}
		if m.pollAgain {
			m.pollAgain = false
			return m, m.requestPoll()
		}
		return m, nil
	case reloadDoneMsg:
		m.st.logf(m.now(), "filter reload handed to the node")
		return m, nil
	}
	return m, nil
}

// requestPoll starts a wallet poll unless one is in flight, in which case
// another follows it.
func (m *Model) requestPoll() tea.Cmd {
	if m.cfg.Wallet == nil || m.quitting {
		return nil
	}
	if m.polling {
		m.pollAgain = true
		return nil
	}
	m.polling = true
	return pollWallet(m.cfg.Wallet)
}

// handleKey applies one key press.
func (m Model) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		m.quit()
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.help.ShowAll = !m.help.ShowAll
	case key.Matches(msg, k.Focus):
		m.focus = (m.focus + 1) % numPanels
	case key.Matches(msg, k.Back):
		m.focus = (m.focus + numPanels - 1) % numPanels
	case key.Matches(msg, k.FP):
		m.hideFP = !m.hideFP
		m.offset[PanelMatched] = 0
	case key.Matches(msg, k.Reload):
		m.st.logf(m.now(), "manual filter reload requested")
		if m.cfg.Reload != nil {
			return m, reload(m.cfg.Reload)
		}
	case key.Matches(msg, k.Up):
		m.scroll(-m.down())
	case key.Matches(msg, k.Down):
		m.scroll(m.down())
	case key.Matches(msg, k.PageUp):
		m.scroll(-m.down() * m.page())
	case key.Matches(msg, k.PageDown):
		m.scroll(m.down() * m.page())
	case key.Matches(msg, k.Top):
		m.scroll(-m.down() << 30)
	case key.Matches(msg, k.Bottom):
		m.scroll(m.down() << 30)
	}
	return m, nil
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
	vis := m.layout().rows[p]
	maxOff := max(n-vis, 0)
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
		return m.matchedView().len()
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

// Focus returns the focused panel.
func (m Model) Focus() Panel { return m.focus }

// Matched returns the number of matched transactions seen: the wallet's
// and the false positives.
func (m Model) Matched() (own, falsePositives int) { return m.st.nOwn, m.st.nFP }

// Quitting reports whether the user asked to quit.
func (m Model) Quitting() bool { return m.quitting }
