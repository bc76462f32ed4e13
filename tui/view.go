package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/charmbracelet/lipgloss"
)

// layout is where the panels go at the current size.
type layout struct {
	grid bool
	// rows are the visible data rows of each scrollable panel.
	rows   [numPanels]int
	chartH int
	helpH  int
	bodyH  int
	// grid only
	leftW, rightW, topH, bottomH, privacyH int
}

// Fixed panel sizes.
const (
	headerLines      = 2
	filterLines      = 3
	walletLinesGrid  = 2
	privacyLinesGrid = 4
	fullHelpLines    = 4
	maxStackedChart  = 8
)

// layout computes the layout for the current size, focus and help state.
func (m *Model) layout() layout {
	var l layout
	l.helpH = 1
	if m.help.ShowAll {
		l.helpH = fullHelpLines
	}
	l.helpH = min(l.helpH, max(m.height, 0))
	l.bodyH = max(m.height-headerLines-l.helpH, 0)
	if m.width >= GridWidth {
		l.grid = true
		l.leftW = max(m.width*2/5, 60)
		l.rightW = m.width - l.leftW
		l.bottomH = min(max(l.bodyH/3, 5), 14)
		l.topH = max(l.bodyH-l.bottomH, 0)
		l.privacyH = max(l.topH-(filterLines+2)-(walletLinesGrid+2), 0)
		l.chartH = max(l.privacyH-2-privacyLinesGrid, 0)
		l.rows[PanelMatched] = max(l.topH-3, 0)
		l.rows[PanelPeers] = max(l.bottomH-3, 0)
		l.rows[PanelLog] = max(l.bottomH-2, 0)
		return l
	}
	// stacked: titles, the filter's 3 lines, the wallet's line, the
	// privacy line, the table and peer headers
	fixed := (1 + filterLines) + 2 + 2 + 2 + 2 + 1
	rem := max(l.bodyH-fixed, 0)
	if rem >= 4 {
		l.chartH = min(rem/4, maxStackedChart)
		rem -= l.chartH
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
	if l.grid {
		lines = append(lines, m.gridView(l)...)
	} else {
		lines = append(lines, m.stackedView(l)...)
	}
	lines = lines[:min(len(lines), m.height-l.helpH)]
	for len(lines) < m.height-l.helpH {
		lines = append(lines, "")
	}
	helpLines := strings.Split(m.help.View(m.keys), "\n")
	for i := 0; i < l.helpH; i++ {
		s := ""
		if i < len(helpLines) {
			s = helpLines[i]
		}
		lines = append(lines, s)
	}
	var b strings.Builder
	for i, s := range lines[:m.height] {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(fit(s, m.width))
	}
	return b.String()
}

// stackedView renders the panels one above the other.
func (m *Model) stackedView(l layout) []string {
	w := m.width
	var out []string
	add := func(title string, focused bool, body []string, n int) {
		out = append(out, m.rule(title, focused, w))
		for i := 0; i < n; i++ {
			s := ""
			if i < len(body) {
				s = body[i]
			}
			out = append(out, fit(s, w))
		}
	}
	add("Filter", false, m.filterLines(), filterLines)
	add("Wallet", false, m.walletLines(false), 1)
	priv := append(m.privacyLines(false), m.chartLines(w, l.chartH)...)
	add("Privacy", false, priv, 1+l.chartH)
	add(m.matchedTitle(), m.focus == PanelMatched, m.matchedLines(w, l.rows[PanelMatched]), 1+l.rows[PanelMatched])
	add(m.peersTitle(), m.focus == PanelPeers, m.peerLines(l.rows[PanelPeers]), 1+l.rows[PanelPeers])
	add(m.logTitle(), m.focus == PanelLog, m.logLines(l.rows[PanelLog]), l.rows[PanelLog])
	return out
}

// gridView renders the panels in a grid.
func (m *Model) gridView(l layout) []string {
	left := m.box("Filter", false, l.leftW, filterLines+2, m.filterLines())
	left = append(left, m.box("Wallet", false, l.leftW, walletLinesGrid+2, m.walletLines(true))...)
	priv := append(m.privacyLines(true), m.chartLines(l.leftW-2, l.chartH)...)
	left = append(left, m.box("Privacy", false, l.leftW, l.privacyH, priv)...)
	right := m.box(m.matchedTitle(), m.focus == PanelMatched, l.rightW, l.topH,
		m.matchedLines(l.rightW-2, l.rows[PanelMatched]))
	out := joinColumns(left, right, l.leftW, l.rightW, l.topH)
	peers := m.box(m.peersTitle(), m.focus == PanelPeers, l.leftW, l.bottomH,
		m.peerLines(l.rows[PanelPeers]))
	logs := m.box(m.logTitle(), m.focus == PanelLog, l.rightW, l.bottomH, m.logLines(l.rows[PanelLog]))
	return append(out, joinColumns(peers, logs, l.leftW, l.rightW, l.bottomH)...)
}

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
	head := m.paint(bs, "── ") + m.paint(ts, title) + " "
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

// headerView is the top bar: network, peers, heights, sync progress.
func (m *Model) headerView(w int) []string {
	s, st := m.styles, m.st
	k := func(l string) string { return m.paint(&s.HeaderKey, l) }
	net := m.cfg.Network
	if net == "" {
		net = "?"
	}
	peers := fmt.Sprintf("%d", len(st.peerList))
	if dl := st.downloadPeer(); dl != "" {
		peers += " (download " + dl + ")"
	}
	state := "syncing"
	switch {
	case m.eventsDone:
		state = m.paint(&s.Bad, "node stopped")
	case st.synced:
		state = m.paint(&s.Wallet, "synced")
	case !st.started && st.headerHeight == 0:
		state = "connecting"
	}
	// line 1 takes the parts, in priority order, that fit
	parts := []string{
		m.paint(&s.Header, " bloomwatch "),
		k("net ") + net,
		k("peers ") + peers,
		k("tip ") + fmt.Sprint(st.blockHeight),
		state,
		k("headers ") + fmt.Sprint(st.headerHeight),
		k("peer height ") + fmt.Sprint(st.peerHeight),
	}
	if !st.lastBlock.IsZero() {
		parts = append(parts, k("last block ")+ago(m.now().Sub(st.lastBlock)))
	}
	line1 := parts[0] + parts[1]
	for _, p := range parts[2:] {
		if width(line1)+2+width(p) > w {
			continue
		}
		line1 += "  " + p
	}

	frac := st.progress()
	info := fmt.Sprintf(" %3.0f%%  %d/%d", frac*100, st.blockHeight, st.peerHeight)
	if r, ok := st.rate(); ok && !st.synced {
		info += fmt.Sprintf("  %.1f blk/s  ETA %s", r, eta(float64(st.peerHeight-st.blockHeight)/r))
	} else if st.synced {
		info += "  ETA done"
	} else {
		info += "  -- blk/s  ETA --"
	}
	barW := max(w-width(info)-9, 4)
	full := int(math.Round(frac * float64(barW)))
	bar := " blocks " + m.paint(&s.BarFull, strings.Repeat("█", full)) + m.paint(&s.BarEmpty, strings.Repeat("░", barW-full))
	return []string{line1, bar + info}
}

// ago formats a non-negative duration coarsely.
func ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return eta(d.Seconds()) + " ago"
}

// eta formats seconds as 12s, 3m04s or 2h05m.
func eta(sec float64) string {
	if math.IsInf(sec, 0) || math.IsNaN(sec) || sec < 0 {
		return "--"
	}
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// filterLines is the filter panel.
func (m *Model) filterLines() []string {
	s, st := m.styles, m.st
	if !st.haveFilter {
		return []string{m.paint(&s.Dim, "no filter loaded yet")}
	}
	f := st.filter
	k := func(l string) string { return m.paint(&s.Label, l) }
	l1 := k("elements ") + fmt.Sprint(f.Elements) + k("  bytes ") + fmt.Sprint(f.Bytes) +
		k("  hash funcs ") + fmt.Sprint(f.HashFuncs) + k("  tweak ") + fmt.Sprintf("%#08x", f.Tweak)
	last := st.lastReason
	if last == "" {
		last = "none"
	}
	l2 := k("flags ") + f.Flags + k("  loads ") + fmt.Sprint(f.Loads) + k("  reloads ") + fmt.Sprint(st.reloads) +
		k("  last reload ") + last
	theory := f.FPRate
	if st.haveBlockFP {
		theory = st.theoryFP
	}
	observed := "--"
	if st.haveBlockFP {
		observed = fmtRate(st.observedFP)
	}
	l3 := k("fp theoretical ") + fmtRate(theory) + k("  observed ") + observed + k("  at load ") + fmtRate(f.FPRate)
	return []string{l1, l2, l3}
}

// fmtRate formats a probability.
func fmtRate(f float64) string {
	if f == 0 {
		return "0"
	}
	return fmt.Sprintf("%.2e", f)
}

// fmtBTC formats satoshis as BTC with 8 decimals; signed adds a + to
// positive amounts.
func fmtBTC(sat int64, signed bool) string {
	sign, mag := "", uint64(sat)
	if sat < 0 {
		sign, mag = "-", uint64(-(sat+1))+1 // no overflow at math.MinInt64
	} else if signed && sat > 0 {
		sign = "+"
	}
	return fmt.Sprintf("%s%d.%08d", sign, mag/1e8, mag%1e8)
}

// formatCount formats an expected set size.
func formatCount(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "--"
	case v == 0:
		return "0"
	case v < 0.01:
		return fmt.Sprintf("%.0e", v)
	case v < 100:
		return fmt.Sprintf("%.2f", v)
	case v < 1e6:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2e", v)
}

// walletLines is the wallet panel: one line stacked, two in the grid.
func (m *Model) walletLines(grid bool) []string {
	s := m.styles
	k := func(l string) string { return m.paint(&s.Label, l) }
	if m.cfg.Wallet == nil {
		return []string{m.paint(&s.Dim, "no wallet")}
	}
	if !m.haveWallet {
		if m.walletErr != nil {
			return []string{m.paint(&s.Bad, "wallet: "+m.walletErr.Error())}
		}
		return []string{m.paint(&s.Dim, "reading wallet…")}
	}
	w := m.wallet
	l1 := k("confirmed ") + fmtBTC(int64(w.balance.Confirmed), false) +
		k("  unconfirmed ") + fmtBTC(int64(w.balance.Unconfirmed), false)
	if w.balance.Immature != 0 {
		l1 += k("  immature ") + fmtBTC(int64(w.balance.Immature), false)
	}
	l2 := k("utxos ") + fmt.Sprint(w.utxos) + k("  addresses used ") + fmt.Sprintf("%d/%d", w.used, w.addresses)
	if !grid {
		return []string{l1 + "  " + l2}
	}
	l2 += k("  elements ") + fmt.Sprint(w.stats.Elements) + k("  blocks ") + fmt.Sprint(w.stats.BlocksApplied)
	if m.walletErr != nil {
		l2 = m.paint(&s.Bad, "wallet: "+m.walletErr.Error())
	}
	return []string{l1, l2}
}

// privacyLines is the privacy panel's figures: one line stacked, four in
// the grid (the fourth captions the chart).
func (m *Model) privacyLines(grid bool) []string {
	s, st := m.styles, m.st
	k := func(l string) string { return m.paint(&s.Label, l) }
	if !st.haveReading {
		if m.cfg.Privacy == nil {
			return []string{m.paint(&s.Dim, "privacy meter not connected")}
		}
		return []string{m.paint(&s.Dim, "no privacy readings yet")}
	}
	r := st.reading
	if !grid {
		return []string{k("anon set ") + formatCount(r.ExpectedFP) + k("  ∩ ") + formatCount(r.IntersectionFP) +
			k(" (") + fmt.Sprint(r.Filters) + k(" filters)  precision ") + fmt.Sprintf("%.3f", r.Precision) +
			k("  entropy ") + fmt.Sprintf("%.1f bits", r.Entropy)}
	}
	l1 := k("anon set ") + formatCount(r.ExpectedFP) + k(" (latest filter)  ∩ ") + formatCount(r.IntersectionFP) +
		k(" over ") + fmt.Sprint(r.Filters) + k(" filters")
	l2 := k("precision ") + fmt.Sprintf("%.3f", r.Precision) + k("  entropy ") + fmt.Sprintf("%.1f bits", r.Entropy) +
		k("  candidates ") + fmt.Sprint(r.Candidates) + k("  members ") + fmt.Sprintf("%.1f", r.Members)
	l3 := k("fp ") + fmtRate(r.FPRate) + k("  revealed ") + fmt.Sprint(r.Revealed) +
		k("  last ") + string(r.Kind) + " " + r.Reason + k(" at height ") + fmt.Sprint(r.Height)
	l4 := m.paint(&s.Dim, fmt.Sprintf("collapse: ∩ set after each of %d filters sent (log)", st.readings.len()))
	return []string{l1, l2, l3, l4}
}

// chartLines returns the collapse curve, cached until a new reading or
// size.
func (m *Model) chartLines(w, h int) []string {
	if h <= 0 {
		return nil
	}
	c := m.chart
	if c.valid && c.gen == m.st.readingsGen && c.w == w && c.h == h {
		return c.lines
	}
	vals := make([]float64, m.st.readings.len())
	for i := range vals {
		vals[i] = m.st.readings.at(i).IntersectionFP
	}
	lines := renderCurve(vals, w, h)
	for i, l := range lines {
		lines[i] = m.paint(&m.styles.Chart, l)
	}
	*c = chartCache{gen: m.st.readingsGen, w: w, h: h, lines: lines, valid: true}
	return lines
}

// matchedTitle is the matched panel's title with the counts.
func (m *Model) matchedTitle() string {
	t := fmt.Sprintf("Matched txs  wallet %d  false positives %d", m.st.nOwn, m.st.nFP)
	if m.hideFP {
		t += " (hidden)"
	}
	if n := m.matchedView().len(); n > 0 {
		t += fmt.Sprintf("  [%d/%d]", m.offset[PanelMatched]+1, n)
	}
	return t
}

// Matched table column widths.
const (
	colHeight  = 8
	colAmount  = 14
	colConf    = 6
	colVerdict = 10
	colTxidMax = 64
)

// matchedLines renders the table header and up to n rows, newest first,
// from the panel's offset.
func (m *Model) matchedLines(w, n int) []string {
	s := m.styles
	txW := min(max(w-colHeight-colAmount-colConf-colVerdict-4, 8), colTxidMax)
	row := func(tx, h, amt, conf, verdict string) string {
		return fit(tx, txW) + " " + padLeft(h, colHeight) + " " + padLeft(amt, colAmount) + " " +
			padLeft(conf, colConf) + " " + verdict
	}
	out := []string{m.paint(&s.TableHeader, row("txid", "height", "amount", "conf", "verdict"))}
	v := m.matchedView()
	off := min(m.offset[PanelMatched], max(v.len()-n, 0))
	tip := m.st.blockHeight
	for i := off; i < v.len() && i < off+n; i++ {
		r := v.last(i)
		h, conf := fmt.Sprint(r.height), "0"
		switch r.height {
		case heightMempool:
			h = "mempool"
		case heightReorged:
			h = "reorged"
		}
		if r.height >= 0 && tip >= r.height {
			conf = fmt.Sprint(tip - r.height + 1)
		}
		var verdict, amt string
		switch r.verdict {
		case verdictWallet:
			verdict, amt = m.paint(&s.Wallet, "wallet"), fmtBTC(r.amount, true)
		case verdictFP:
			verdict, amt = m.paint(&s.FalsePositive, "false pos"), "-"
		default:
			verdict, amt = m.paint(&s.Dim, "seen"), "-"
		}
		out = append(out, row(r.txid.String(), h, amt, conf, verdict))
	}
	if v.len() == 0 {
		out = append(out, m.paint(&s.Dim, "no matched transactions yet"))
	}
	return out
}

// peersTitle is the peers panel's title.
func (m *Model) peersTitle() string {
	return fmt.Sprintf("Peers %d", len(m.st.peerList))
}

// services abbreviates a peer's service flags: N network, B bloom, W
// witness, L network-limited, C compact filters.
func services(f wire.ServiceFlag) string {
	var b strings.Builder
	for _, x := range []struct {
		flag wire.ServiceFlag
		c    byte
	}{{wire.SFNodeNetwork, 'N'}, {wire.SFNodeBloom, 'B'}, {wire.SFNodeWitness, 'W'},
		{wire.SFNodeNetworkLimited, 'L'}, {wire.SFNodeCF, 'C'}} {
		if f&x.flag != 0 {
			b.WriteByte(x.c)
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

// peerLines renders the peer header and up to n peers from the offset
// (the panel cuts the user agent to its width).
func (m *Model) peerLines(n int) []string {
	s := m.styles
	row := func(mark, addr, svc, height, ping, ban, agent string) string {
		return mark + " " + fit(addr, 21) + " " + fit(svc, 5) + " " + padLeft(height, 7) + " " +
			padLeft(ping, 7) + " " + padLeft(ban, 4) + " " + agent
	}
	out := []string{m.paint(&s.TableHeader, row(" ", "address", "svc", "height", "ping", "ban", "agent"))}
	peers := m.st.peerList
	off := min(m.offset[PanelPeers], max(len(peers)-n, 0))
	for i := off; i < len(peers) && i < off+n; i++ {
		p := peers[i]
		mark := " "
		if p.Download {
			mark = m.paint(&s.Wallet, "*")
		}
		ban := padLeft(fmt.Sprint(p.BanScore), 4)
		if p.BanScore > 0 {
			ban = m.paint(&s.Bad, ban)
		}
		out = append(out, row(mark, p.Addr, services(p.Services), fmt.Sprint(max(p.LastBlock, p.StartHeight)),
			fmt.Sprintf("%dms", p.PingTime.Milliseconds()), ban, p.UserAgent))
	}
	if len(peers) == 0 {
		out = append(out, m.paint(&s.Dim, "no peers"))
	}
	return out
}

// logTitle is the log panel's title.
func (m *Model) logTitle() string {
	t := "Log"
	if off := m.offset[PanelLog]; off > 0 {
		t += fmt.Sprintf("  (%d newer below)", off)
	}
	return t
}

// logLines returns the n log lines ending offset lines before the newest.
func (m *Model) logLines(n int) []string {
	lg := m.st.log
	off := min(m.offset[PanelLog], max(lg.len()-n, 0))
	end := lg.len() - off
	start := max(end-n, 0)
	out := make([]string, 0, n)
	for i := start; i < end; i++ {
		out = append(out, lg.at(i))
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
