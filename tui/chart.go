package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas/runes"
)

// chartLabelWidth is the width of the chart's y-axis labels and axis.
const chartLabelWidth = 8

// maxDecades bounds the chart's y range: values further below its top
// are drawn on the bottom row.
const maxDecades = 12

// chartCache keeps the last rendered chart: the curve only changes with a
// new reading or a new size.
type chartCache struct {
	gen   uint64
	w, h  int
	lines []string
	valid bool
}

// logRange returns the decades [lo, hi] a log chart of values spans:
// from the smallest positive value's decade (at most maxDecades below
// the top) to the largest's, at least one decade.
func logRange(values []float64) (lo, hi int) {
	minV, maxV := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 && !math.IsInf(v, 0) {
			minV, maxV = math.Min(minV, v), math.Max(maxV, v)
		}
	}
	if maxV == 0 {
		return -2, 0
	}
	hi = int(math.Ceil(math.Log10(maxV) - 1e-9))
	lo = int(math.Floor(math.Log10(minV) + 1e-9))
	if lo >= hi {
		lo = hi - 1
	}
	return max(lo, hi-maxDecades), hi
}

// decadeLabel formats 10^d as a clean tick: 1e-4, 0.01, 0.1, 1, 10, 100,
// 1000, 1e4.
func decadeLabel(d int) string {
	switch {
	case d == -2:
		return "0.01"
	case d == -1:
		return "0.1"
	case d >= 0 && d <= 3:
		return "1" + strings.Repeat("0", d)
	}
	return fmt.Sprintf("1e%d", d)
}

// renderCurve draws values (oldest first) as a braille line chart of w x h
// cells on a log10 y scale with decade ticks on the left; values at or
// below the bottom decade (zero included) lie on the bottom row. More
// values than dot columns are sampled evenly, so the chart always spans
// every value so far.
func renderCurve(values []float64, w, h int) []string {
	return renderCurves(values, nil, w, h)
}

// renderCurves is renderCurve with a reference series (the same length
// as values, or nil) drawn dotted: a dot every fourth dot column, no
// joining line, so it reads apart from the solid curve in plain text.
func renderCurves(values, ref []float64, w, h int) []string {
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
	lo, hi := logRange(append(append([]float64(nil), values...), ref...))
	span := float64(hi - lo)
	dotsW, dotsH := plotW*2, h*4
	g := runes.NewPatternDotsGrid(dotsW, dotsH)
	y := func(v float64) int {
		if !(v > 0) || math.IsInf(v, 0) {
			return dotsH - 1
		}
		f := (math.Log10(v) - float64(lo)) / span
		f = min(max(f, 0), 1)
		return dotsH - 1 - int(math.Round(f*float64(dotsH-1)))
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
		if len(ref) == len(values) && x%4 == 0 {
			g.Set(x, y(ref[idx]))
		}
	}
	// ticks: every step-th decade from the top, at least two rows apart
	labels := make([]string, h)
	step := 1
	for (hi-lo)/step+1 > max((h+1)/2, 2) {
		step++
	}
	for d := hi; d >= lo; d -= step {
		row := int(math.Round(float64(hi-d) / span * float64(h-1)))
		if labels[row] == "" {
			labels[row] = decadeLabel(d)
		}
	}
	pat := g.BraillePatterns()
	lines := make([]string, h)
	for i := range lines {
		var b strings.Builder
		b.WriteString(padLeft(labels[i], chartLabelWidth-2))
		if labels[i] != "" {
			b.WriteString(" ┤")
		} else {
			b.WriteString(" │")
		}
		if i < len(pat) {
			b.WriteString(string(pat[i]))
		}
		lines[i] = b.String()
	}
	return lines
}

// curveAxis is the x axis under a curve of w cells: first and last label
// at the ends of the plot, the title in the middle.
func curveAxis(w int, first, last, title string) string {
	plotW := w - chartLabelWidth
	if plotW < 4 {
		return ""
	}
	prefix := strings.Repeat(" ", chartLabelWidth-2) + " └"
	mid := plotW - width(first) - width(last)
	if t := " " + title + " "; width(t)+2 <= mid {
		left := (mid - width(t)) / 2
		return prefix + first + strings.Repeat("─", left) + t + strings.Repeat("─", mid-left-width(t)) + last
	}
	if mid < 1 {
		return prefix + strings.Repeat("─", plotW)
	}
	return prefix + first + strings.Repeat("─", mid) + last
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
