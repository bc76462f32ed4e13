package tui

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// headerView is the top bar, two lines of w cells: the network, peers,
// heights and sync state, then the block progress bar with its rate and
// ETA. It is not a framed panel: it is always there, overlays included.
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
	state, short := "syncing", ""
	switch {
	case m.eventsDone:
		state = m.paint(&s.Bad, "node stopped")
	case st.synced:
		state = m.paint(&s.Wallet, "synced")
	case st.awaiting > 0:
		state = m.paint(&s.Bad, fmt.Sprintf("at the tip, %d %s awaiting a check", st.awaiting, plural(st.awaiting, "block", "blocks")))
		short = m.paint(&s.Bad, fmt.Sprintf("%d awaiting check", st.awaiting))
	case !st.started && st.headerHeight == 0:
		state = "connecting"
	}
	// line 1 takes the parts, in priority order, that fit
	peersPart := k("peers ") + peers
	parts := []string{
		m.paint(&s.Header, " bloomwatch "),
		k("net ") + net,
		k("tip ") + fmt.Sprint(st.blockHeight),
		state,
		peersPart,
		k("headers ") + fmt.Sprint(st.headerHeight),
		k("peer height ") + fmt.Sprint(st.bestHeight()),
	}
	if !st.lastBlock.IsZero() {
		parts = append(parts, k("last block ")+ago(m.now().Sub(st.lastBlock)))
	}
	// When the peers do not fit, the short state, then the download peer
	// alone ("download ADDR", without the count) make room for them:
	// the user needs to see which peer the blocks come from.
	line1 := fitParts(parts, w)
	if short != "" && !strings.Contains(line1, peersPart) {
		parts[3] = short
		line1 = fitParts(parts, w)
	}
	if dl := st.downloadPeer(); dl != "" && !strings.Contains(line1, peersPart) {
		peersPart = k("download ") + dl
		parts[4] = peersPart
		line1 = fitParts(parts, w)
	}

	frac := st.progress()
	info := fmt.Sprintf(" %3.0f%%  %d/%d", frac*100, st.blockHeight, st.bestHeight())
	if r, ok := st.rate(); ok && !st.synced {
		info += fmt.Sprintf("  %.1f blk/s  ETA %s", r, eta(float64(st.bestHeight()-st.blockHeight)/r))
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

// fitParts joins parts[0] and parts[1] with each later part, in order,
// that still fits in w cells.
func fitParts(parts []string, w int) string {
	line := parts[0] + parts[1]
	for _, p := range parts[2:] {
		if width(line)+2+width(p) > w {
			continue
		}
		line += "  " + p
	}
	return line
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
