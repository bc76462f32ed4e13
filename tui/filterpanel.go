package tui

import (
	"fmt"
	"math"
	"strings"
)

// filterPanel shows the loaded filter: its size, hash count and tweak,
// the loads and reloads, how full it is and its false-positive rates,
// each with its unit (per element tested, per transaction tested).
type filterPanel struct{}

// title implements panel.
func (filterPanel) title(m *Model, w int) string {
	if m.st.pic.ok {
		return joinFit(w, "  ", fmt.Sprintf("Filter #%d", m.st.pic.seq), "for "+m.st.filter.Reason, "(b: picture)")
	}
	return "Filter"
}

// render implements panel: five lines in the grid, one or two stacked.
func (filterPanel) render(m *Model, w, h int) []string {
	st := m.st
	if !st.haveFilter {
		if st.haveReading && st.reading.CF != nil {
			// Over BIP158 no bloom filter is sent: the privacy panel
			// gives the one BIP37 would load.
			return []string{m.paint(&m.styles.Dim, fit("BIP158: no bloom filter sent (Privacy: if BIP37)", w))}
		}
		return []string{m.paint(&m.styles.Dim, "no filter loaded yet")}
	}
	f, p := st.filter, st.pic
	k := m.label
	theory := f.FPRate
	if st.haveBlockFP {
		theory = st.theoryFP
	}
	// The observed rate is a sample: with the meter's reading it comes
	// with its 95 % interval.
	observed, ci := "--", ""
	if st.haveBlockFP {
		observed = fmtRate(st.observedFP)
	}
	if x := m.extra(); x.haveObserved {
		observed = fmtRate(x.observedTxFP)
		ci = fmtSci(x.observedLo, 1) + ", " + fmtSci(x.observedHi, 1)
	}
	last := st.lastReason
	if last == "" {
		last = "none"
	}
	size := fmtInt(int64(f.Bytes)) + " B"
	if p.ok {
		size += " = " + fmtUint(p.nBits) + " bits"
	}
	// A filter at BIP37's 36,000-byte cap cannot reach the target rate:
	// say so wherever the size shows, with the target beside the rate
	// it really has.
	capped := ""
	if f.Capped {
		capped = m.paint(&m.styles.Bad, "CAPPED (target "+fmtRate(f.TargetFPRate)+")")
		size += m.paint(&m.styles.Bad, " (cap)")
	}
	if h >= filterLinesGrid {
		l1 := joinFit(w, "  ", k("elements ")+fmt.Sprint(f.Elements), k("size ")+size, k("k ")+fmt.Sprint(f.HashFuncs),
			k("loads ")+fmt.Sprint(f.Loads))
		l2 := joinFit(w, "  ", k("tweak ")+fmt.Sprintf("%#08x", f.Tweak), k("flags ")+f.Flags,
			k("reloads ")+fmt.Sprint(st.reloads), k("last reload ")+last)
		l3 := k("fill ") + m.fillBar(p, w)
		l4 := joinFit(w, "  ", k("fp per element (theory) now ")+fmtRate(theory), k("at load ")+fmtRate(f.FPRate))
		if f.Capped {
			l4 = joinFit(w, "  ", k("fp now ")+fmtRate(theory), k("at load ")+fmtRate(f.FPRate), capped)
		}
		return []string{l1, l2, l3, l4, m.perTxLine(w, observed, ci)}
	}
	fill := "--"
	if p.ok {
		fill = fmtPct(p.fill)
	}
	if h >= 2 {
		l1 := joinFit(w, "  ", k("elements ")+fmt.Sprint(f.Elements), k("size ")+size, k("k ")+fmt.Sprint(f.HashFuncs),
			k("flags ")+f.Flags, k("reloads ")+fmt.Sprintf("%d (%s)", st.reloads, last), k("tweak ")+fmt.Sprintf("%#08x", f.Tweak))
		est := ""
		if p.ok && p.est >= 0 && !math.IsInf(p.est, 0) && !math.IsNaN(p.est) {
			est = fmt.Sprintf(" (est. %.0f)", p.est)
		}
		// "per tx tested" is the unit the help view (?) explains; the
		// longest form that fits: with the expected rate and the observed
		// one's 95 % interval, then without the interval, then alone.
		base := joinFit(w, "  ", k("fill ")+fill+est, k("fp ")+fmtRate(theory)+k("/element"), capped)
		var forms []string
		if m.extra().ok {
			if ci != "" {
				forms = append(forms, observed+k("/tx tested (expected ")+m.expectedTxFP()+k(") [")+ci+k("]"))
			}
			forms = append(forms, observed+k("/tx tested (expected ")+m.expectedTxFP()+k(")"))
		} else if ci != "" {
			forms = append(forms, observed+k("/tx tested [")+ci+k("]"))
		}
		forms = append(forms, observed+k("/tx tested"))
		l2 := base
		for _, f := range forms {
			if width(base)+2+width(f) <= w {
				l2 = base + "  " + f
				break
			}
		}
		return []string{l1, l2}
	}
	// "per tx tested" is the unit the help view (?) explains: false
	// positives per transaction the watcher tested (the observed rate).
	return []string{joinFit(w, "  ", fmt.Sprint(f.Elements)+k(" elements"), fmtInt(int64(f.Bytes))+k(" B"),
		k("k ")+fmt.Sprint(f.HashFuncs), k("fill ")+fill, k("fp ")+fmtRate(theory)+k("/element, ")+observed+k("/tx tested"),
		k("reloads ")+fmt.Sprint(st.reloads))}
}

// perTxLine is the Filter panel's line of false positives per
// transaction tested: expected and observed, the observed one a sample
// with its 95 % interval ci ("lo, hi"; empty before the meter has one),
// in the longest wording that fits w.
func (m *Model) perTxLine(w int, observed, ci string) string {
	k := m.label
	expected := m.extra().ok
	var forms []string
	switch {
	case expected && ci != "":
		forms = []string{
			k("fp per tx tested: expected ") + m.expectedTxFP() + k("  observed ") + observed + k(" (95 % ") + ci + k(")"),
			k("fp per tx tested: exp ") + m.expectedTxFP() + k("  obs ") + observed + k(" [") + ci + k("]"),
			k("fp/tx tested: exp ") + m.expectedTxFP() + k(" obs ") + observed + k(" [") + ci + k("]"),
		}
	case expected:
		forms = []string{k("fp per tx tested: expected ") + m.expectedTxFP() + k("  observed ") + observed}
	case ci != "":
		forms = []string{k("fp per tx tested (observed) ") + observed + k(" (95 % ") + ci + k(")")}
	default:
		forms = []string{k("fp per tx tested (observed) ") + observed}
	}
	for _, f := range forms {
		if width(f) <= w {
			return f
		}
	}
	return joinFit(w, "", forms[len(forms)-1])
}

// expectedTxFP is the privacy meter's expected false-positive rate per
// non-wallet transaction for the latest filter (the unit of the observed
// rate), or "--" before the first reading.
func (m *Model) expectedTxFP() string {
	if x := m.extra(); x.ok {
		return fmtRate(x.expectedTxFP)
	}
	return "--"
}

// extra returns the latest reading's corrected-model figures (ok false
// before the first reading).
func (m *Model) extra() meterExtra {
	if !m.st.haveReading {
		return meterExtra{}
	}
	return extraOf(m.st.reading)
}

// estText is " (est. elements 77)" for a decoded filter, else "".
func estText(p filterPicture) string {
	if !p.ok {
		return ""
	}
	if p.est < 0 || math.IsInf(p.est, 0) || math.IsNaN(p.est) {
		return " (est. elements: saturated)"
	}
	return fmt.Sprintf(" (est. elements %.0f)", p.est)
}

// fillBar draws the filter's fill as a bar with the percentage and m^ in
// w cells.
func (m *Model) fillBar(p filterPicture, w int) string {
	if !p.ok {
		return "--"
	}
	tail := " " + fmtPct(p.fill) + estText(p)
	barW := min(max(w-5-width(tail), 4), 30)
	full := int(math.Round(p.fill * float64(barW)))
	return m.paint(&m.styles.BarFull, strings.Repeat("█", full)) +
		m.paint(&m.styles.BarEmpty, strings.Repeat("░", barW-full)) + tail
}

// joinFit joins parts with sep, in order, skipping any part that would
// overflow w cells: a line never ends in a cut field.
func joinFit(w int, sep string, parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		switch {
		case out == "":
			if width(p) <= w {
				out = p
			}
		case width(out)+width(sep)+width(p) <= w:
			out += sep + p
		}
	}
	return out
}
