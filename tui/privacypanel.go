package tui

import (
	"fmt"
	"strings"
)

// privacyPanel is the live privacy meter in words: how many addresses
// that are not the wallet's an observer expects to match the latest
// filter, and all the filters sent so far combined (what colluding peers
// that compare them are left with), among how many candidates; the
// precision and entropy of a guess; and the collapse chart of that
// expected count after each filter sent.
type privacyPanel struct{}

// title implements panel.
func (privacyPanel) title(m *Model, w int) string {
	if m.st.haveReading {
		return "Privacy  (? explains)"
	}
	return "Privacy"
}

// privacyTableLines is the lines render needs for the full form (the
// figures, the chart caption and two chart rows and the axis).
const privacyTableLines = 12

// render implements panel: the figures as a table with the chart under
// them when it has the room, else one line (and the chart under it when
// h allows).
func (privacyPanel) render(m *Model, w, h int) []string {
	s, st := m.styles, m.st
	k := m.label
	if !st.haveReading {
		if m.cfg.Privacy == nil {
			return []string{m.paint(&s.Dim, "privacy meter not connected")}
		}
		return []string{m.paint(&s.Dim, "no privacy readings yet")}
	}
	r := st.reading
	if h < privacyTableLines || w < 50 {
		out := []string{joinFit(w, "  ", k("expected false positives ")+formatCount(r.ExpectedFP)+k(" latest filter"),
			formatCount(r.IntersectionFP)+k(" all combined"), k("of ")+fmtUint(r.Candidates)+k(" candidates"))}
		if h >= 4 {
			out = append(out, m.chartLines(w, h-2)...)
			out = append(out, m.paint(&s.Dim, m.axisLine(w)))
		}
		return out
	}
	const labelW = 30
	colW := max((w-labelW)/2, 12)
	row := func(label, a, b string) string {
		return k(fit(label, labelW)) + padLeft(a, colW-2) + "  " + padLeft(b, colW-2)
	}
	universe := k("among ") + fmtUint(r.Candidates) + k(" candidate addresses")
	x := extraOf(r)
	tagged := universe
	if tag := sourceTag(x.universeSource); tag != "" {
		tagged += k(" (" + tag + ")")
	}
	if r.Candidates == 0 {
		universe, tagged = k("candidate count not known yet"), k("candidate count not known yet")
	}
	// The wallet's size N (its addresses on chain, of those it watches)
	// in the longest form that fits beside the universe; the universe's
	// source tag goes first (the help view gives it whole).
	walletLine := joinFit(w, k(" · "), tagged, k("wallet size not known"))
	if r.WalletKnown {
		decoys := ""
		if r.Decoys > 0 {
			decoys = k(" +") + fmt.Sprint(r.Decoys) + k(" decoys")
		}
		long := k("wallet ") + fmt.Sprint(r.Members) + k(" on chain of ") + fmt.Sprint(r.Watched) + k(" watched") + decoys
		short := k("wallet ") + fmt.Sprint(r.Members) + k("/") + fmt.Sprint(r.Watched) + k(" on chain") + decoys
		walletLine = tagged
		for _, c := range [][2]string{{tagged, long}, {tagged, short}, {universe, long}, {universe, short}} {
			if width(c[0])+width(k(" · "))+width(c[1]) <= w {
				walletLine = c[0] + k(" · ") + c[1]
				break
			}
		}
	}
	sent := k(fmt.Sprintf("%d distinct filters of %d sent", r.Filters, st.readingsSeen))
	last := k("last ") + r.Reason + k(" at height ") + fmt.Sprint(r.Height)
	revealed := ""
	if r.Revealed > 0 {
		revealed = k("filteradd revealed ") + fmt.Sprint(r.Revealed)
	}
	added := k("observer: no earlier filter of this tweak to compare")
	if x.added >= 0 {
		added = k("observer: last reload added ") + fmt.Sprintf("%.1f ± %.1f", x.added, 1.96*x.addedErr) + k(" elements (95 %)")
	}
	out := []string{
		joinFit(w, "", walletLine),
		m.paint(&s.TableHeader, fit("", labelW)+padLeft("latest filter", colW-2)+"  "+padLeft("all combined", colW-2)),
		row("expected false positives", formatCount(r.ExpectedFP), formatCount(r.IntersectionFP)),
	}
	if x.ok {
		out = append(out, row("  if filters were independent", "", formatCount(x.independentFP)))
	}
	prec, ent := [2]string{"--", "--"}, [2]string{"--", "--"}
	if r.WalletKnown {
		prec = [2]string{fmt.Sprintf("%.3f", r.SinglePrecision), fmt.Sprintf("%.3f", r.Precision)}
		ent = [2]string{fmt.Sprintf("%.1f", r.SingleEntropy), fmt.Sprintf("%.1f", r.Entropy)}
	}
	out = append(out,
		row("precision (your share)", prec[0], prec[1]),
		row("entropy (bits of doubt)", ent[0], ent[1]),
		joinFit(w, k(" · "), sent, last, revealed))
	caption := "after each filter sent, log scale"
	if x.ok {
		out = append(out, joinFit(w, "", added))
		caption += "; dotted: independent"
	}
	out = append(out, m.paint(&s.Dim, fit(caption, w)))
	out = append(out, m.chartLines(w, h-len(out)-1)...)
	return append(out, m.paint(&s.Dim, m.axisLine(w)))
}

// sourceTag shortens Reading.UniverseSource to its first words (up to a
// colon or parenthesis) for the panel; the help view shows it whole.
func sourceTag(src string) string {
	if i := strings.IndexAny(src, ":("); i >= 0 {
		src = src[:i]
	}
	src = strings.TrimSpace(src)
	if width(src) > 24 {
		return "source: see ?"
	}
	return src
}

// chartLines returns the collapse curve (and the independent-filters
// reference, dotted), cached until a new reading or size.
func (m *Model) chartLines(w, h int) []string {
	if h <= 0 {
		return nil
	}
	c := m.chart
	if c.valid && c.gen == m.st.readingsGen && c.w == w && c.h == h {
		return c.lines
	}
	n := m.st.readings.len()
	vals := make([]float64, n)
	var ref []float64
	if n > 0 && extraOf(m.st.readings.at(0)).ok {
		ref = make([]float64, n)
	}
	for i := range vals {
		rd := m.st.readings.at(i)
		vals[i] = rd.IntersectionFP
		if ref != nil {
			ref[i] = extraOf(rd).independentFP
		}
	}
	lines := renderCurves(vals, ref, w, h)
	for i, l := range lines {
		lines[i] = m.paint(&m.styles.Chart, l)
	}
	*c = chartCache{gen: m.st.readingsGen, w: w, h: h, lines: lines, valid: true}
	return lines
}

// axisLine is the chart's x axis: the readings kept, first to last, with
// the heights they span when they fit.
func (m *Model) axisLine(w int) string {
	rd := m.st.readings
	n := rd.len()
	if n == 0 {
		return ""
	}
	first, last := rd.at(0), rd.at(n-1)
	dropped := m.st.readingsSeen - uint64(n)
	title := fmt.Sprintf("filters sent (heights %d-%d)", first.Height, last.Height)
	if width(title)+8+len(fmt.Sprint(n)) > w-chartLabelWidth {
		title = "filters sent"
	}
	return curveAxis(w, fmt.Sprint(dropped+1), fmt.Sprint(dropped+uint64(n)), title)
}
