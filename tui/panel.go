package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// panel is the contract every part of the dashboard follows: it renders
// from the model's state (never its own copy) at the size the root gives
// it, and keeps nothing but caches. The root owns the state, the focus,
// the keys and the one WindowSizeMsg; a panel only draws.
//
// title is the panel's frame title (with its counts) in at most w cells;
// render returns at most h lines for a body of w x h cells (the frame
// cuts and pads them),
// drawing only what fits: a panel given fewer lines shows a shorter form
// of the same figures.
type panel interface {
	title(m *Model, w int) string
	render(m *Model, w, h int) []string
}

// The panels. Each lives in its own file.
var (
	filterP  panel = filterPanel{}
	walletP  panel = walletPanel{}
	privacyP panel = privacyPanel{}
	matchedP panel = matchedPanel{}
	peersP   panel = peersPanel{}
	logP     panel = logPanel{}
	detailP  panel = detailPanel{}
	bitsP    panel = bitsPanel{}
	helpP    panel = helpPanel{}
	logLineP panel = logLinePanel{}
)

// overlay names what replaces the panels' body.
type overlay uint8

// The overlays: none (the panels), a matched transaction's detail, the
// filter picture, the help, one log line read whole.
const (
	overlayNone overlay = iota
	overlayDetail
	overlayBits
	overlayHelp
	overlayLogLine
)

// layout is where the panels go at the current size.
type layout struct {
	grid bool
	// rows are the visible data rows of each scrollable panel.
	rows  [numPanels]int
	helpH int
	bodyH int
	// stacked: the body lines of the filter and privacy panels
	filterH, privacyH int
	// grid: column widths, the top and bottom band heights, the box
	// heights of the left column
	leftW, rightW, topH, bottomH, filterBox, walletBox, privacyBox int
}

// Fixed panel sizes.
const (
	headerLines     = 2
	filterLinesGrid = 5
	walletLinesGrid = 2
	// stackedChartMinRows is the spare rows a stacked layout needs before
	// it draws the collapse chart (below that the table gets them).
	stackedChartMinRows = 16
	maxStackedChart     = 8
	// stackedPrivacyLines are the privacy figures' lines when stacked:
	// expected false positives, then precision and entropy.
	stackedPrivacyLines = 2
	// tallStacked is the height from which a stacked filter panel takes
	// two lines.
	tallStacked = 30
)

// layout computes the layout for the current size, focus and help state.
func (m *Model) layout() layout {
	var l layout
	l.helpH = min(m.footerHeight(), max(m.height, 0))
	l.bodyH = max(m.height-headerLines-l.helpH, 0)
	if m.width >= GridWidth {
		l.grid = true
		l.leftW = max(m.width*2/5, 60)
		l.rightW = m.width - l.leftW
		l.bottomH = min(max(l.bodyH/4, 5), 12)
		l.topH = max(l.bodyH-l.bottomH, 0)
		l.filterBox = filterLinesGrid + 2
		l.walletBox = walletLinesGrid + 2
		l.privacyBox = max(l.topH-l.filterBox-l.walletBox, 0)
		l.rows[PanelMatched] = max(l.topH-3, 0)
		l.rows[PanelPeers] = max(l.bottomH-3, 0)
		l.rows[PanelLog] = max(l.bottomH-2, 0)
		return l
	}
	// stacked: six title rules, the filter's lines, the wallet's line,
	// the privacy figures, the table and peer headers
	l.filterH = 1
	if m.height >= tallStacked {
		l.filterH = 2
	}
	l.privacyH = stackedPrivacyLines
	fixed := 6 + l.filterH + 1 + l.privacyH + 2
	rem := max(l.bodyH-fixed, 0)
	if rem >= stackedChartMinRows {
		// the chart with its caption and axis (privacyPanel draws one
		// only when it has chartMinLines)
		chart := min(max(rem/4, chartMinLines), maxStackedChart)
		l.privacyH += chart
		rem -= chart
	}
	for p := Panel(0); p < numPanels; p++ {
		if p != m.focus && rem > 0 {
			l.rows[p] = 1
			rem--
		}
	}
	l.rows[m.focus] = rem
	return l
}

// View implements tea.Model. It renders exactly width x height cells and
// only the visible rows of each panel.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	l := m.layout()
	lines := make([]string, 0, m.height)
	lines = append(lines, m.headerView(m.width)...)
	switch {
	case m.overlay == overlayDetail && m.detail != nil:
		lines = append(lines, m.overlayView(l, detailP)...)
	case m.overlay == overlayBits:
		lines = append(lines, m.overlayView(l, bitsP)...)
	case m.overlay == overlayHelp:
		lines = append(lines, m.overlayView(l, helpP)...)
	case m.overlay == overlayLogLine:
		lines = append(lines, m.overlayView(l, logLineP)...)
	case l.grid:
		lines = append(lines, m.gridView(l)...)
	default:
		lines = append(lines, m.stackedView(l)...)
	}
	lines = lines[:min(len(lines), m.height-l.helpH)]
	for len(lines) < m.height-l.helpH {
		lines = append(lines, "")
	}
	lines = append(lines, m.footerView(m.width, l.helpH)...)
	var b strings.Builder
	for i, s := range lines[:m.height] {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(fit(s, m.width))
	}
	return b.String()
}

// overlayView renders one panel over the whole body: boxed in the grid,
// under a title rule when stacked.
func (m *Model) overlayView(l layout, p panel) []string {
	if l.grid {
		return m.box(p.title(m, titleRoom(m.width)), true, m.width, l.bodyH, p.render(m, m.width-2, l.bodyH-2))
	}
	if l.bodyH <= 0 {
		return nil
	}
	out := []string{m.rule(p.title(m, titleRoom(m.width)), true, m.width)}
	return append(out, p.render(m, m.width, l.bodyH-1)...)
}

// stackedView renders the panels one above the other.
func (m *Model) stackedView(l layout) []string {
	w := m.width
	out := make([]string, 0, l.bodyH)
	add := func(p panel, focused bool, n int) {
		out = append(out, m.rule(p.title(m, titleRoom(w)), focused, w))
		body := p.render(m, w, n)
		for i := 0; i < n; i++ {
			s := ""
			if i < len(body) {
				s = body[i]
			}
			out = append(out, fit(s, w))
		}
	}
	add(filterP, false, l.filterH)
	add(walletP, false, 1)
	add(privacyP, false, l.privacyH)
	add(matchedP, m.focus == PanelMatched, 1+l.rows[PanelMatched])
	add(peersP, m.focus == PanelPeers, 1+l.rows[PanelPeers])
	add(logP, m.focus == PanelLog, l.rows[PanelLog])
	return out
}

// gridView renders the panels in a grid.
func (m *Model) gridView(l layout) []string {
	left := m.boxPanel(filterP, false, l.leftW, l.filterBox)
	left = append(left, m.boxPanel(walletP, false, l.leftW, l.walletBox)...)
	left = append(left, m.boxPanel(privacyP, false, l.leftW, l.privacyBox)...)
	right := m.boxPanel(matchedP, m.focus == PanelMatched, l.rightW, l.topH)
	out := joinColumns(left, right, l.leftW, l.rightW, l.topH)
	peers := m.boxPanel(peersP, m.focus == PanelPeers, l.leftW, l.bottomH)
	logs := m.boxPanel(logP, m.focus == PanelLog, l.rightW, l.bottomH)
	return append(out, joinColumns(peers, logs, l.leftW, l.rightW, l.bottomH)...)
}

// boxPanel renders a panel in a box of w x h cells.
func (m *Model) boxPanel(p panel, focused bool, w, h int) []string {
	if h <= 2 || w < 4 {
		return m.box(p.title(m, titleRoom(w)), focused, w, h, nil)
	}
	return m.box(p.title(m, titleRoom(w)), focused, w, h, p.render(m, w-2, h-2))
}

// titleRoom is the room a title has in a frame w cells wide (the
// corners, the focus mark and the spaces around it).
func titleRoom(w int) int { return max(w-8, 1) }

// joinColumns puts two columns of lines side by side, h lines tall; the
// lines of a are wa cells wide and those of b wb cells (box makes them so).
func joinColumns(a, b []string, wa, wb, h int) []string {
	out := make([]string, h)
	for i := range out {
		x, y := "", ""
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if i >= len(a) {
			x = strings.Repeat(" ", wa)
		}
		if i >= len(b) {
			y = strings.Repeat(" ", wb)
		}
		out[i] = x + y
	}
	return out
}

// rule is a stacked panel's title line.
func (m *Model) rule(title string, focused bool, w int) string {
	bs, ts := &m.styles.Border, &m.styles.Title
	if focused {
		bs, ts = &m.styles.FocusedBorder, &m.styles.FocusedTitle
		title = "▶ " + title
	}
	head := m.paint(bs, "── ") + m.paint(ts, fit(title, min(width(title), max(w-4, 1)))) + " "
	return head + m.paint(bs, strings.Repeat("─", max(w-width(head), 0)))
}

// box frames body in a rounded border of w x h cells with a title.
func (m *Model) box(title string, focused bool, w, h int, body []string) []string {
	if h <= 0 || w < 4 {
		return make([]string, max(h, 0))
	}
	bs, ts := &m.styles.Border, &m.styles.Title
	if focused {
		bs, ts = &m.styles.FocusedBorder, &m.styles.FocusedTitle
		title = "▶ " + title
	}
	t := fit(" "+title+" ", min(width(title)+2, w-4))
	out := make([]string, 0, h)
	out = append(out, m.paint(bs, "╭─")+m.paint(ts, t)+m.paint(bs, strings.Repeat("─", max(w-3-width(t), 0))+"╮"))
	side := m.paint(bs, "│")
	for i := 0; i < h-2; i++ {
		s := ""
		if i < len(body) {
			s = body[i]
		}
		out = append(out, side+fit(s, w-2)+side)
	}
	if h >= 2 {
		out = append(out, m.paint(bs, "╰"+strings.Repeat("─", w-2)+"╯"))
	}
	return out
}

// paintCacheMax bounds the paint cache; it is emptied when full.
const paintCacheMax = 4096

// paintKey is one styled string.
type paintKey struct {
	style *lipgloss.Style
	text  string
}

// paint renders text with style, memoized: most of what the dashboard
// styles (labels, borders, verdicts) is the same from frame to frame, and
// lipgloss's Render dominates View's cost otherwise.
func (m *Model) paint(style *lipgloss.Style, text string) string {
	k := paintKey{style, text}
	if v, ok := m.paints[k]; ok {
		return v
	}
	v := style.Render(text)
	if len(m.paints) >= paintCacheMax {
		clear(m.paints)
	}
	m.paints[k] = v
	return v
}

// label paints a field name.
func (m *Model) label(s string) string { return m.paint(&m.styles.Label, s) }
