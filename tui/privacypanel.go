package tui

import (
	"fmt"
	"strings"

	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
)

// privacyPanel is the live privacy meter in words: how many addresses
// that are not the wallet's an observer expects to match the latest
// filter, and all the filters sent so far combined (what colluding peers
// that compare them are left with), among how many candidates; the
// precision and entropy of a guess; and the collapse chart of that
// expected count after each filter sent. Over BIP158 it shows what the
// peers learn of the blocks instead (cfLines).
type privacyPanel struct{}

// title implements panel.
func (privacyPanel) title(m *Model, w int) string {
	if m.st.haveReading && m.st.reading.CF != nil {
		return "Privacy · BIP158  (? explains)"
	}
	if m.st.haveReading {
		return "Privacy  (? explains)"
	}
	return "Privacy"
}

// chartMinLines is the room a chart needs: its caption, two rows of
// curve and the x axis. A chart never comes without its caption, and never
// before the figures it draws.
const chartMinLines = 4

// render implements panel: the figures first, then the collapse chart
// with its caption when the lines left can hold one. The figures are the
// table in the grid when it fits h, else two lines (one when h is 1); the
// stacked layout budgets two lines and the chart (panel.go).
func (privacyPanel) render(m *Model, w, h int) []string {
	s, st := m.styles, m.st
	if !st.haveReading {
		if m.cfg.Privacy == nil {
			return []string{m.paint(&s.Dim, "privacy meter not connected")}
		}
		return []string{m.paint(&s.Dim, "no privacy readings yet")}
	}
	if st.reading.CF != nil {
		// Over BIP158 no filter is sent: the figures are the blocks'.
		return m.cfLines(w, h)
	}
	out := m.privacyTable(w)
	if len(out) > h || w < 50 || !m.layout().grid {
		out = m.privacyShort(w, h)
	}
	if room := h - len(out); room >= chartMinLines {
		out = append(out, m.paint(&s.Dim, chartCaption(w, extraOf(st.reading).ok)))
		out = append(out, m.chartLines(w, room-2)...)
		out = append(out, m.paint(&s.Dim, m.axisLine(w)))
	}
	return out
}

// chartCaption says what the collapse chart draws, in the longest words
// that fit w cells; dotted adds the independent-filters reference.
func chartCaption(w int, dotted bool) string {
	captions := []string{
		"expected false positives, all combined, after each filter sent (log scale)",
		"expected false positives, all filters combined (log scale)",
		"expected fp, all combined (log)",
	}
	if dotted {
		captions = []string{
			"expected false positives, all combined, after each filter sent (log scale; dotted: if filters were independent)",
			"expected false positives, all combined (log scale; dotted: if filters were independent)",
			"expected false positives, all combined (log; dotted: if independent)",
			"expected fp, all filters combined (log; dotted: independent)",
			"expected fp, all combined (log; dotted: independent)",
			"expected fp, all combined (log)",
		}
	}
	for _, c := range captions {
		if width(c) <= w {
			return c
		}
	}
	return fit(captions[len(captions)-1], w)
}

// privacyTable is the figures as a table: the universe and the wallet's
// size, expected false positives, precision and entropy for the latest
// filter and all combined, the filters sent, the observer's estimate of
// the last reload and the behaviour attack's reading.
func (m *Model) privacyTable(w int) []string {
	s, st, k := m.styles, m.st, m.label
	r := st.reading
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
	if line := onPathLine(m, r, w); line != "" {
		out = append(out, line)
	}
	if x.ok {
		out = append(out, joinFit(w, "", added))
	}
	if r.Behaviour != nil {
		out = append(out, behaviourLines(k, w, r.Behaviour)...)
	}
	return out
}

// privacyShort is the figures in two lines (one when h is 1): expected
// false positives, precision and entropy, each for the latest filter and
// all combined ("--" while the wallet's size is not known), and the
// candidates they are counted among.
func (m *Model) privacyShort(w, h int) []string {
	k := m.label
	r := m.st.reading
	p1, p2, e1, e2 := "--", "--", "--", "--"
	if r.WalletKnown {
		p1, p2 = fmt.Sprintf("%.3f", r.SinglePrecision), fmt.Sprintf("%.3f", r.Precision)
		e1, e2 = fmt.Sprintf("%.1f", r.SingleEntropy), fmt.Sprintf("%.1f", r.Entropy)
	}
	latest, all := formatCount(r.ExpectedFP), formatCount(r.IntersectionFP)
	if h < 2 {
		return []string{joinFit(w, "  ", k("fp ")+latest+k(" / ")+all,
			k("precision ")+p1+k(" / ")+p2, k("entropy ")+e1+k(" / ")+e2, k("(latest / all combined)"))}
	}
	l1 := [][2]string{
		{k("expected false positives ") + latest + k(" latest filter"), all + k(" all combined")},
		{k("expected false positives ") + latest + k(" latest"), all + k(" all combined")},
		{k("expected fp ") + latest + k(" latest"), all + k(" all combined")},
	}
	l2 := [][2]string{
		{k("precision ") + p1 + k(" / ") + p2 + "  " + k("entropy ") + e1 + k(" / ") + e2 + k(" bits"), k("(latest / all combined)")},
		{k("precision ") + p1 + k("/") + p2 + "  " + k("entropy ") + e1 + k("/") + e2 + k(" bits"), k("(latest/all combined)")},
		{k("precision ") + p1 + k("/") + p2 + "  " + k("entropy ") + e1 + k("/") + e2, k("(latest/all)")},
	}
	// the first wording whose two parts fit: a figure never loses the
	// words that say which filter it is for
	pick := func(vs [][2]string) [2]string {
		for _, v := range vs {
			if width(v[0])+2+width(v[1]) <= w {
				return v
			}
		}
		return vs[len(vs)-1]
	}
	a, b := pick(l1), pick(l2)
	return []string{
		joinFit(w, "  ", a[0], a[1], k("of ")+fmtUint(r.Candidates)+k(" candidates")),
		joinFit(w, "  ", b[0], b[1]),
	}
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

// behaviourLines is the behaviour attack's reading in words: the
// verdict with what it read, then what the client's timing named
// (blocks, then transactions) with its precision against your own truth
// beside what naming as many at random gives.
func behaviourLines(k func(string) string, w int, b *behaviour.Reading) []string {
	seen := k(fmt.Sprintf("%d reloads, %d re-fetches seen", b.Reloads, b.Refetches))
	blocks, txs := b.Blocks.Score(behaviour.SignalAny), b.Txs.Score(behaviour.SignalAny)
	if blocks.Suspects == 0 && txs.Suspects == 0 {
		return []string{joinFit(w, k(" · "), k("timing attack: names nothing yet"), seen)}
	}
	verdict := behaviourVerdict(blocks, txs)
	level := func(one, many string, s behaviour.Score) string {
		what := many
		if s.Suspects == 1 {
			what = one
		}
		return joinFit(w, "", k("  named ")+fmt.Sprintf("%d %s", s.Suspects, what)+k(": precision ")+fmt.Sprintf("%.2f", s.Precision)+
			k(", chance ≤ ")+fmt.Sprintf("%.2f", s.Chance.Hi))
	}
	return []string{
		joinFit(w, k(" · "), k("timing attack: ")+strings.Replace(verdict, "the wallet", "your wallet", 1), seen),
		level("block", "blocks", blocks), level("tx", "txs", txs),
	}
}

// behaviourVerdict is the timing attack's verdict over its two levels:
// "points at" if either level's does, then "avoids", then "no better
// than chance" if a level's test had the power to say so, else no
// verdict, with the suspects that cannot tell.
func behaviourVerdict(scores ...behaviour.Score) string {
	var chance bool
	var noPower []behaviour.Score
	for _, want := range []string{behaviour.VerdictPoints, behaviour.VerdictAvoids} {
		for _, s := range scores {
			if s.Verdict == want {
				return s.Verdict
			}
		}
	}
	for _, s := range scores {
		switch s.Verdict {
		case behaviour.VerdictChance:
			chance = true
		case behaviour.VerdictNoPower:
			noPower = append(noPower, s)
		}
	}
	switch {
	case chance:
		return behaviour.VerdictChance
	case len(noPower) > 0:
		return noPower[0].NoPowerText()
	}
	return behaviour.VerdictNoTruth
}
