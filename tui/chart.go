package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas/runes"
)

// chartLabelWidth is the width of the chart's y-axis labels and axis.
const chartLabelWidth = 8

// chartCache keeps the last rendered chart: the curve only changes with a
// new reading or a new size.
type chartCache struct {
	gen   uint64
	w, h  int
	lines []string
	valid bool
}

// logScale maps an anonymity set size to the chart's y scale.
func logScale(v float64) float64 {
	if !(v > 0) { // also NaN
		return 0
	}
	return math.Log10(1 + v)
}

// renderCurve draws values (oldest first) as a braille line chart of w x h
// cells, y on a log10(1+v) scale from 0 to the largest value, with labels
// on the left. More values than dot columns are sampled evenly, so the
// chart always spans every event so far.
func renderCurve(values []float64, w, h int) []string {
	if h <= 0 || w <= 0 {
		return nil
	}
	plotW := w - chartLabelWidth
	if plotW < 2 || len(values) == 0 {
		lines := make([]string, h)
		if len(values) == 0 {
			lines[h/2] = "  (no readings yet)"
		}
		return lines
	}
	top := 0.0
	for _, v := range values {
		top = math.Max(top, logScale(v))
	}
	if top == 0 {
		top = 1
	}
	dotsW, dotsH := plotW*2, h*4
	g := runes.NewPatternDotsGrid(dotsW, dotsH)
	y := func(v float64) int {
		return dotsH - 1 - int(math.Round(logScale(v)/top*float64(dotsH-1)))
	}
	cols := min(dotsW, len(values))
	px, py := -1, -1
	for c := 0; c < cols; c++ {
		idx, x := c, 0
		if cols > 1 {
			idx = int(math.Round(float64(c) * float64(len(values)-1) / float64(cols-1)))
			x = int(math.Round(float64(c) * float64(dotsW-1) / float64(cols-1)))
		}
		cur := y(values[idx])
		if px < 0 {
			g.Set(x, cur)
		} else {
			line(g, px, py, x, cur)
		}
		px, py = x, cur
	}
	pat := g.BraillePatterns()
	lines := make([]string, h)
	topLabel := axisLabel(math.Pow(10, top) - 1)
	for i := range lines {
		label := ""
		switch i {
		case 0:
			label = topLabel
		case h - 1:
			label = "0"
		}
		var b strings.Builder
		b.WriteString(padLeft(label, chartLabelWidth-2))
		b.WriteString(" ┤")
		if i < len(pat) {
			b.WriteString(string(pat[i]))
		}
		lines[i] = b.String()
	}
	return lines
}

// padLeft right-aligns s in w cells; a wider s is returned whole (callers
// size their columns for their values, and cutting could split an escape
// sequence).
func padLeft(s string, w int) string {
	sw := width(s)
	if sw >= w {
		return s
	}
	return strings.Repeat(" ", w-sw) + s
}

// line sets the dots from (x0, y0) to (x1, y1), x0 <= x1, with no gaps:
// each column gets the vertical run from the previous column's y.
func line(g *runes.PatternDotsGrid, x0, y0, x1, y1 int) {
	if x1 == x0 {
		for yy := min(y0, y1); yy <= max(y0, y1); yy++ {
			g.Set(x0, yy)
		}
		return
	}
	last := y0
	for xx := x0; xx <= x1; xx++ {
		yy := y0 + int(math.Round(float64(y1-y0)*float64(xx-x0)/float64(x1-x0)))
		for v := min(last, yy); v <= max(last, yy); v++ {
			g.Set(xx, v)
		}
		last = yy
	}
}

// axisLabel formats the chart's top value in at most chartLabelWidth-2
// cells.
func axisLabel(v float64) string {
	if v >= 1e6 {
		return fmt.Sprintf("%.0e", v)
	}
	return formatCount(v)
}
