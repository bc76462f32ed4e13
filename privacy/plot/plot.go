package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/bloomwatch/bloomwatch/privacy"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrNoCharts is returned when there is no chart to draw.
var ErrNoCharts = errors.New("nothing to draw")

// ErrBadSeries is returned for a series whose slices do not line up (X,
// Y and, when set, YLo and YHi of one length).
var ErrBadSeries = errors.New("bad series")

// Figure geometry: one panel per chart, stacked, each with its legend
// under the data in columns across the full width, never over it and
// never a column beside it.
const (
	figureWidth = 9 * vg.Inch
	plotHeight  = 3.6 * vg.Inch
	// legendColumns is the number of legend columns under a plot.
	legendColumns = 2
	// legendWrap is the longest legend or note line, in characters,
	// before it wraps.
	legendWrap   = 62
	noteWrap     = 130
	legendGap    = 6  // points between the plot and its legend
	panelGap     = 18 // points between stacked panels
	thumbWidth   = 20 // points
	thumbGap     = 5  // points between a thumbnail and its text
	entryGap     = 3  // points between legend entries
	legendFont   = 10 // points
	noteFont     = 9  // points
	pointRadius  = 2.5
	refRadius    = 5
	capWidth     = 4 // points: error bar caps
	lineWidth    = 1.5
	refLineWidth = 1.5
)

// Tick labelling.
const (
	// maxDecadeLabels is the most labelled decades on a log axis: when
	// more decades are spanned, every second (third, ...) is labelled.
	maxDecadeLabels = 7
	// minorDecades is the most decades for which the 2..9 minor ticks
	// are drawn.
	minorDecades = 4
	// linearTickCount is the number of intervals a linear axis aims for.
	linearTickCount = 5
	// rotateNamedTicks is the number of named X ticks above which their
	// labels are turned to fit.
	rotateNamedTicks = 5
	namedTickAngle   = math.Pi / 6
	// logMargin widens a log axis spanning less than a decade.
	logMargin = 1.15
	// maxLogDecades is the most decades a log axis spans: a formula line
	// below its bottom is clipped there, never drawn at 0.
	maxLogDecades = 12
	// maxMarkers is the most markers a series draws: a longer one marks
	// every n-th point, so markers never hide its line.
	maxMarkers = 40
)

// Legend suffixes for what an axis cannot place.
const (
	allZeroNote   = " (all 0)"
	undefinedNote = " (%d undefined points not drawn)"
	zerosNote     = " (%d zeros not drawn on the log axis)"
	belowNote     = " (continues below the axis)"
	thinnedNote   = " (one point in %d marked)"
	zeroLimitNote = "a measured 0 on a log axis: its bar runs from the axis bottom to its upper bound"
	zeroXNote     = "x = 0 on the log X axis: drawn at its left edge"
	noPositive    = "no positive value: linear Y axis"
	zeroLineNote  = "linear Y axis: a line is 0 throughout, which a log axis cannot draw"
)

// zeroLineDecades is the widest span of positive values, in decades,
// for which a chart with a line of zeros is drawn on a linear axis: a
// wider one keeps its log axis and names the zero line in the legend.
const zeroLineDecades = 2

// narrowPositive reports whether the positive values of the series span
// less than zeroLineDecades.
func narrowPositive(series []merged) bool {
	lo, hi := yRange(series, true)
	return finite(lo) && finite(hi) && math.Log10(hi/lo) < zeroLineDecades
}

// zeroLine reports whether a line series (not markers) of the chart has
// finite values, all of them 0 or below: on a log axis it would vanish.
func zeroLine(c privacy.Chart) bool {
	for _, s := range c.Series {
		if s.Points || s.Reference {
			continue
		}
		seen, positive := false, false
		for _, v := range s.Y {
			if finite(v) {
				seen = true
				positive = positive || v > 0
			}
		}
		if seen && !positive {
			return true
		}
	}
	return false
}

// refColor is the colour of published reference markers.
var refColor = color.Gray{Y: 0x20}

// WritePNG draws the charts, stacked one panel per chart, as a PNG image
// on w. Every series is drawn: on a log axis with zeros the axis becomes
// symmetric-logarithmic, and a series that cannot be placed is named in
// the legend. It returns ErrNoCharts for no charts and writes nothing when
// a chart cannot be drawn.
func WritePNG(w io.Writer, charts []privacy.Chart) error {
	fig, err := newFigure(charts)
	if err != nil {
		return err
	}
	img := vgimg.New(figureWidth, fig.height())
	fig.draw(draw.New(img))
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("png: %w", err)
	}
	return nil
}

// WriteSVG draws the charts like WritePNG, as an SVG document on w. The
// fonts are not embedded: a viewer without the Liberation fonts draws the
// text in a substitute font.
func WriteSVG(w io.Writer, charts []privacy.Chart) error {
	fig, err := newFigure(charts)
	if err != nil {
		return err
	}
	img := vgsvg.New(figureWidth, fig.height())
	fig.draw(draw.New(img))
	if _, err := img.WriteTo(w); err != nil {
		return fmt.Errorf("svg: %w", err)
	}
	return nil
}

// legendEntry is one line of a panel's legend.
type legendEntry struct {
	text  string
	thumb gplot.Thumbnailer
}

// panel is one chart ready to draw: the plot and its legend column.
type panel struct {
	plot    *gplot.Plot
	entries []legendEntry
	notes   []string
}

// figure is the panels of one image.
type figure struct {
	panels []panel
}

// newFigure builds every panel with something to draw, or fails without
// drawing anything. A series keeps one colour across the panels (by its
// group, or its name without one).
func newFigure(charts []privacy.Chart) (*figure, error) {
	if len(charts) == 0 {
		return nil, ErrNoCharts
	}
	fig := &figure{}
	cols := newColours()
	for _, c := range charts {
		if !drawable(c) {
			continue
		}
		p, err := chartPanel(c, cols)
		if err != nil {
			return nil, fmt.Errorf("chart %q: %w", c.Title, err)
		}
		fig.panels = append(fig.panels, p)
	}
	if len(fig.panels) == 0 {
		return nil, ErrNoCharts
	}
	return fig, nil
}

// drawable reports whether a chart has a point it can draw: a finite X
// and Y in some series (a log-Y chart of zeros only draws on a linear
// axis).
func drawable(c privacy.Chart) bool {
	for _, s := range c.Series {
		for j := range s.X {
			if j < len(s.Y) && finite(s.X[j]) && finite(s.Y[j]) {
				return true
			}
		}
	}
	return false
}

// colourMap hands out palette indexes across a figure: a key keeps the
// colour it got in an earlier panel; a new key takes the first colour no
// other series of its panel holds.
type colourMap struct {
	byKey map[string]int
}

// of returns key's colour index, avoiding those in used (the panel's),
// and marks it used.
func (m *colourMap) of(key string, used map[int]bool) int {
	i, ok := m.byKey[key]
	if !ok || used[i] {
		i = 0
		for used[i] {
			i++
		}
		if !ok {
			m.byKey[key] = i
		}
	}
	used[i] = true
	return i
}

// legendHeight returns the height of a panel's legend laid out in
// legendColumns columns under the plot, then its notes across.
func (p panel) legendHeight() vg.Length {
	sty, noteSty := textStyle(legendFont), textStyle(noteFont)
	var h vg.Length
	for row := 0; row*legendColumns < len(p.entries); row++ {
		var rh vg.Length
		for c := range legendColumns {
			if i := row*legendColumns + c; i < len(p.entries) {
				rh = max(rh, sty.Height(p.entries[i].text))
			}
		}
		h += rh + vg.Points(entryGap)
	}
	for _, n := range p.notes {
		h += noteSty.Height(n) + vg.Points(entryGap)
	}
	return h + vg.Points(legendGap)
}

// panelHeight returns a panel's height: the plot and its legend.
func (p panel) panelHeight() vg.Length { return plotHeight + p.legendHeight() }

// height returns the figure's height.
func (f *figure) height() vg.Length {
	h := vg.Points(panelGap / 2)
	for _, p := range f.panels {
		h += p.panelHeight() + vg.Points(panelGap)
	}
	return h
}

// draw lays the panels out from the top: each plot across the full
// width, its legend under it.
func (f *figure) draw(dc draw.Canvas) {
	y := dc.Max.Y - vg.Points(panelGap/2)
	for _, p := range f.panels {
		c := dc
		c.Max.Y, c.Min.Y = y, y-plotHeight
		p.plot.Draw(c)
		leg := dc
		leg.Max.Y = c.Min.Y - vg.Points(legendGap)
		leg.Min.Y = y - p.panelHeight()
		data := p.plot.DataCanvas(c)
		leg.Min.X = data.Min.X
		p.drawLegend(leg)
		y -= p.panelHeight() + vg.Points(panelGap)
	}
}

// drawLegend draws the entries in columns from the top of c, then the
// notes across. Each entry's thumbnail sits beside the first line of its
// text.
func (p panel) drawLegend(c draw.Canvas) {
	sty, noteSty := textStyle(legendFont), textStyle(noteFont)
	sty.YAlign, noteSty.YAlign = draw.YTop, draw.YTop
	lineH := sty.Height("X")
	colW := (c.Max.X - c.Min.X) / legendColumns
	y := c.Max.Y
	for row := 0; row*legendColumns < len(p.entries); row++ {
		var rh vg.Length
		for col := range legendColumns {
			i := row*legendColumns + col
			if i >= len(p.entries) {
				break
			}
			e := p.entries[i]
			x := c.Min.X + vg.Length(col)*colW
			if e.thumb != nil {
				thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
					Min: vg.Point{X: x, Y: y - lineH},
					Max: vg.Point{X: x + vg.Points(thumbWidth), Y: y},
				}}
				e.thumb.Thumbnail(&thumb)
			}
			c.FillText(sty, vg.Point{X: x + vg.Points(thumbWidth+thumbGap), Y: y}, e.text)
			rh = max(rh, sty.Height(e.text))
		}
		y -= rh + vg.Points(entryGap)
	}
	for _, n := range p.notes {
		c.FillText(noteSty, vg.Point{X: c.Min.X, Y: y}, n)
		y -= noteSty.Height(n) + vg.Points(entryGap)
	}
}

// Caption returns the figure's caption: each drawn panel's title and
// notes (what it measured, the command that made it), and the charts
// left out for having nothing to draw. It is written beside the image
// (privacy experiment --png writes NAME.caption.txt), so that provenance
// never takes the legend's room.
func Caption(charts []privacy.Chart) string {
	var b strings.Builder
	n := 0
	for _, c := range charts {
		if !drawable(c) {
			continue
		}
		n++
		fmt.Fprintf(&b, "Panel %d: %s.", n, c.Title)
		for _, note := range c.Notes {
			b.WriteString(" " + strings.TrimSuffix(note, ".") + ".")
		}
		b.WriteString("\n")
	}
	for _, c := range charts {
		if !drawable(c) {
			fmt.Fprintf(&b, "Not drawn (no data): %s.\n", c.Title)
		}
	}
	return b.String()
}

// textStyle returns the plain text style at size points.
func textStyle(size vg.Length) text.Style {
	return text.Style{Font: font.From(gplot.DefaultFont, size), Handler: gplot.DefaultTextHandler}
}

// wrap breaks s into lines of at most n characters at spaces.
func wrap(s string, n int) string {
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case len(line)+1+len(word) <= n:
				line += " " + word
			default:
				lines = append(lines, line)
				line = word
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// axisScale is an axis's scale.
type axisScale int

const (
	scaleLinear axisScale = iota
	scaleLog
)

// merged is a series drawn once for every series with the same points
// (their names joined in one legend entry).
type merged struct {
	s     privacy.Series
	names []string
}

// sameSeries reports whether a and b draw the same thing.
func sameSeries(a, b privacy.Series) bool {
	return a.Points == b.Points && a.Reference == b.Reference && a.Span == b.Span && a.Band == b.Band &&
		slices.Equal(a.X, b.X) && slices.Equal(a.Y, b.Y) && slices.Equal(a.YLo, b.YLo) && slices.Equal(a.YHi, b.YHi)
}

// mergeIdentical folds series with the same points into one.
func mergeIdentical(in []privacy.Series) []merged {
	var out []merged
next:
	for _, s := range in {
		for i := range out {
			if sameSeries(out[i].s, s) {
				out[i].names = append(out[i].names, s.Name)
				continue next
			}
		}
		out = append(out, merged{s: s, names: []string{s.Name}})
	}
	return out
}

// finite reports whether v is a number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// yRange returns the Y range to show: on a log axis from the smallest
// positive measurement, bound or published figure (a line alone sets it
// only in a chart without any), at most maxLogDecades below the largest
// value; on a linear axis every finite value.
func yRange(series []merged, logY bool) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	lineLo := math.Inf(1)
	for _, m := range series {
		s := m.s
		for j := range s.Y {
			for _, v := range []float64{s.Y[j], at(s.YLo, j), at(s.YHi, j)} {
				if !finite(v) || (logY && v <= 0) {
					continue
				}
				hi = math.Max(hi, v)
				if !logY || s.Points || s.Reference {
					lo = math.Min(lo, v)
				} else {
					lineLo = math.Min(lineLo, v)
				}
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo = lineLo
	}
	if logY && finite(hi) && finite(lo) {
		lo = math.Max(lo, hi/math.Pow(10, maxLogDecades))
	}
	return lo, hi
}

// at returns v[i], or NaN when v is shorter.
func at(v []float64, i int) float64 {
	if i < len(v) {
		return v[i]
	}
	return math.NaN()
}

// anyPositive reports whether a chart has a positive value in get.
func anyPositive(c privacy.Chart, get func(privacy.Series) []float64) bool {
	for _, s := range c.Series {
		for _, v := range get(s) {
			if finite(v) && v > 0 {
				return true
			}
		}
	}
	return false
}

// seriesColours is the series palette: Okabe and Ito's colour-blind-safe
// set, the pale yellow last, so that any two series of a panel differ in
// hue, not only in shade.
var seriesColours = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xFF}, // black
	color.RGBA{R: 0xC9, G: 0xB8, B: 0x00, A: 0xFF}, // dark yellow
}

// pairShade is how far the second series of a pair is blended toward
// white.
const pairShade = 0.5

// lighter returns c blended pairShade of the way to white.
func lighter(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(float64(v>>8) + pairShade*(255-float64(v>>8))) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xFF}
}

// palette returns colour i of the series palette.
func palette(i int) color.Color { return seriesColours[i%len(seriesColours)] }

// refGlyphs are the hollow glyphs of published figures, one per
// reference of a chart, so that two references never look alike.
var refGlyphs = []draw.GlyphDrawer{draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// chartPanel builds one panel: every series drawn, the legend and the
// notes on reading the marks collected (the chart's own notes go to the
// caption), colours from cols.
func chartPanel(c privacy.Chart, cols *colourMap) (panel, error) {
	for _, s := range c.Series {
		if len(s.X) != len(s.Y) || (s.YLo != nil && len(s.YLo) != len(s.Y)) || (s.YHi != nil && len(s.YHi) != len(s.Y)) {
			return panel{}, fmt.Errorf("%w: %q: %d x, %d y, %d lo, %d hi", ErrBadSeries, s.Name, len(s.X), len(s.Y), len(s.YLo), len(s.YHi))
		}
	}
	p := gplot.New()
	p.Title.Text = c.Title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	pn := panel{plot: p}
	series := mergeIdentical(c.Series)
	yScale, xScale := scaleLinear, scaleLinear
	if c.LogY {
		switch {
		case !anyPositive(c, func(s privacy.Series) []float64 { return s.Y }):
			pn.notes = append(pn.notes, noPositive)
		case zeroLine(c) && narrowPositive(series):
			pn.notes = append(pn.notes, zeroLineNote)
		default:
			yScale = scaleLog
		}
	}
	if c.LogX && anyPositive(c, func(s privacy.Series) []float64 { return s.X }) {
		xScale = scaleLog
	}
	yLo, yHi := yRange(series, yScale == scaleLog)
	if yScale == scaleLog {
		yLo, yHi = logBounds(yLo, yHi)
	}
	xLo := math.Inf(1)
	if xScale == scaleLog {
		for _, m := range series {
			for _, x := range m.s.X {
				if finite(x) && x > 0 {
					xLo = math.Min(xLo, x)
				}
			}
		}
		xLo = math.Pow(10, math.Floor(math.Log10(xLo)))
	}
	d := drawer{p: p, yScale: yScale, xScale: xScale, yLo: yLo, yHi: yHi, xLo: xLo}
	refs := 0
	var zeroX, zeroY bool
	// Colours first: one per group, or per series name without one, the
	// same in every panel of the figure (a measurement and its formula,
	// or one policy across panels, share theirs); published figures
	// without a group are grey.
	colours := make([]int, len(series))
	light := make([]bool, len(series))
	used := map[int]bool{}
	for i, m := range series {
		s := m.s
		if s.Reference && s.Group == "" {
			continue
		}
		if s.Pair != "" {
			if j := slices.IndexFunc(series[:i], func(o merged) bool { return o.s.Pair == s.Pair }); j >= 0 {
				colours[i], light[i] = colours[j], true // the pair's second: the light shade
				continue
			}
			colours[i] = cols.of("pair:"+s.Pair, used)
			continue
		}
		key := s.Group
		if key == "" {
			key = "name:" + m.names[0]
		}
		if j := slices.IndexFunc(series[:i], func(o merged) bool { return o.s.Group != "" && o.s.Group == s.Group }); j >= 0 {
			colours[i] = colours[j] // the group's colour, taken once
			continue
		}
		colours[i] = cols.of(key, used)
	}
	// Bands go under every line and marker: they are drawn first.
	for i, m := range series {
		if m.s.Band && len(m.s.YLo) > 0 {
			if err := d.bandOf(m.s, palette(colours[i])); err != nil {
				return panel{}, err
			}
		}
	}
	for i, m := range series {
		s := m.s
		ci := colours[i]
		col := palette(ci)
		if s.Reference && s.Group == "" {
			col = refColor
		}
		var glyph draw.GlyphDrawer = plotutil.Shape(ci)
		if light[i] {
			col, glyph = lighter(col), plotutil.Shape(ci+1)
		}
		if s.Reference {
			glyph = refGlyphs[refs%len(refGlyphs)]
			refs++
		}
		name := strings.Join(m.names, "; ")
		if len(m.names) > 1 {
			name = strings.Join(m.names, " = ")
		}
		if s.Reference {
			name = "published: " + name
			if s.Source != "" {
				name += " (" + s.Source + ")"
			}
		}
		res, err := d.add(s, col, glyph)
		if err != nil {
			return panel{}, err
		}
		zeroX, zeroY = zeroX || res.zeroX, zeroY || res.zeroY
		if res.allZero && yScale == scaleLog {
			name += allZeroNote
		}
		if res.undefined > 0 {
			name += fmt.Sprintf(undefinedNote, res.undefined)
		}
		if res.zeros > 0 && !res.allZero {
			name += fmt.Sprintf(zerosNote, res.zeros)
		}
		if res.below {
			name += belowNote
		}
		if res.every > 1 {
			name += fmt.Sprintf(thinnedNote, res.every)
		}
		pn.entries = append(pn.entries, legendEntry{text: wrap(name, legendWrap), thumb: res.thumb})
	}
	if zeroY {
		pn.notes = append(pn.notes, zeroLimitNote)
	}
	if zeroX {
		pn.notes = append(pn.notes, zeroXNote)
	}
	for i := range pn.notes {
		pn.notes[i] = wrap(pn.notes[i], noteWrap)
	}
	setYAxis(p, yScale, yLo, yHi)
	setXAxis(p, c, xScale, xLo)
	pt := newPowerText()
	p.X.Tick.Label.Handler, p.Y.Tick.Label.Handler = pt, pt
	return pn, nil
}

// logBounds widens [lo, hi] to whole decades (a margin when they span
// less than one).
func logBounds(lo, hi float64) (float64, float64) {
	if !finite(lo) || !finite(hi) {
		return 1, 10
	}
	if lo == hi {
		return lo / 2, hi * 2
	}
	if math.Log10(hi/lo) < 1 {
		return lo / logMargin, hi * logMargin
	}
	return math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
}

// drawer adds series to a plot whose axes are fixed in advance.
type drawer struct {
	p              *gplot.Plot
	yScale, xScale axisScale
	yLo, yHi, xLo  float64
}

// added is what drawing a series found.
type added struct {
	thumb                   gplot.Thumbnailer
	undefined, zeros, every int
	allZero, below          bool
	zeroX, zeroY            bool
}

// thumbs draws several thumbnails in one legend entry.
type thumbs []gplot.Thumbnailer

// Thumbnail implements gplot.Thumbnailer.
func (t thumbs) Thumbnail(c *draw.Canvas) {
	for _, x := range t {
		x.Thumbnail(c)
	}
}

// add draws one series in colour col: a line (clipped at a log axis's
// bottom), a shaded band, markers with error bars, or a published
// figure; a measured 0 on a log axis as a bar from the bottom to its
// upper bound.
func (d *drawer) add(s privacy.Series, col color.Color, glyph draw.GlyphDrawer) (added, error) {
	var r added
	var xys plotter.XYs
	var lo, hi []float64
	r.allZero = len(s.Y) > 0
	for j := range s.X {
		x, y := s.X[j], s.Y[j]
		if !finite(x) || !finite(y) {
			r.undefined++
			continue
		}
		if y != 0 {
			r.allZero = false
		}
		if d.xScale == scaleLog && x <= 0 {
			x, r.zeroX = d.xLo, true
		}
		if d.yScale == scaleLog && y <= 0 {
			if !s.Points && !s.Reference {
				r.zeros++
				continue
			}
		}
		if d.yScale == scaleLog && y > 0 && y < d.yLo {
			r.below = true
		}
		xys = append(xys, plotter.XY{X: x, Y: y})
		lo, hi = append(lo, at(s.YLo, j)), append(hi, at(s.YHi, j))
	}
	if len(xys) == 0 {
		return r, nil
	}
	width := vg.Points(lineWidth)
	var th thumbs
	if s.Band && len(s.YLo) > 0 {
		// The band itself was drawn under every series (bandOf); its
		// legend shows it, and no error bars are drawn.
		th = append(th, bandThumb{col})
		lo, hi = make([]float64, len(lo)), make([]float64, len(hi))
		for i := range lo {
			lo[i], hi[i] = math.NaN(), math.NaN()
		}
	}
	switch {
	case s.Reference && s.Span:
		l, err := plotter.NewLine(xys)
		if err != nil {
			return r, err
		}
		l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(2 * refLineWidth), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
		d.p.Add(l)
		th = append(th, l)
	case s.Points || s.Reference:
		if err := d.errorBars(xys, lo, hi, col, &r); err != nil {
			return r, err
		}
		marks, every := thin(xys, maxMarkers)
		r.every = every
		var pos plotter.XYs
		for _, pt := range marks {
			if d.yScale == scaleLog && pt.Y <= 0 {
				continue // drawn as a bar from the bottom (errorBars)
			}
			pos = append(pos, pt)
		}
		sc, err := plotter.NewScatter(pos)
		if err != nil && len(pos) > 0 {
			return r, err
		}
		if sc == nil {
			sc = &plotter.Scatter{}
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Shape: glyph, Radius: vg.Points(pointRadius)}
		if s.Reference {
			sc.GlyphStyle.Radius = vg.Points(refRadius)
		}
		if len(pos) > 0 {
			d.p.Add(sc)
		}
		th = append(th, sc)
	default:
		l, err := plotter.NewLine(xys)
		if err != nil {
			return r, err
		}
		l.LineStyle = draw.LineStyle{Color: col, Width: width}
		d.p.Add(l)
		th = append(th, l)
	}
	r.thumb = th
	return r, nil
}

// thin returns at most n of pts, evenly spaced, and the step taken.
func thin(pts plotter.XYs, n int) (plotter.XYs, int) {
	if len(pts) <= n {
		return pts, 1
	}
	every := (len(pts) + n - 1) / n
	var out plotter.XYs
	for i := 0; i < len(pts); i += every {
		out = append(out, pts[i])
	}
	return out, every
}

// clampY keeps an interval bound inside the Y axis.
func (d *drawer) clampY(v float64) float64 {
	if d.yScale == scaleLog {
		return math.Min(math.Max(v, d.yLo), d.yHi)
	}
	return v
}

// errorBars draws each point's interval in col; a measured 0 on a log
// axis becomes a bar from the axis bottom to its upper bound, capped by
// a downward triangle.
func (d *drawer) errorBars(xys plotter.XYs, lo, hi []float64, col color.Color, r *added) error {
	var bars plotter.XYs
	var errs plotter.YErrors
	var limits plotter.XYs
	for i, pt := range xys {
		l, h := lo[i], hi[i]
		if !finite(l) || !finite(h) {
			continue
		}
		y := pt.Y
		if d.yScale == scaleLog && y <= 0 {
			if h <= 0 {
				continue
			}
			r.zeroY = true
			y = d.yLo
			limits = append(limits, plotter.XY{X: pt.X, Y: d.clampY(h)})
		}
		l, h = d.clampY(l), d.clampY(h)
		bars = append(bars, plotter.XY{X: pt.X, Y: y})
		errs = append(errs, struct{ Low, High float64 }{math.Max(0, y-l), math.Max(0, h-y)})
	}
	if len(bars) > 0 {
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{bars, errs})
		if err != nil {
			return err
		}
		eb.LineStyle.Color = col
		eb.CapWidth = vg.Points(capWidth)
		d.p.Add(eb)
	}
	if len(limits) > 0 {
		sc, err := plotter.NewScatter(limits)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Shape: downTriangle{}, Radius: vg.Points(pointRadius + 1)}
		d.p.Add(sc)
	}
	return nil
}

// bandOf shades the series' YLo..YHi along its drawable points.
func (d *drawer) bandOf(s privacy.Series, col color.Color) error {
	var xys plotter.XYs
	var lo, hi []float64
	for j := range s.X {
		x, y := s.X[j], s.Y[j]
		if !finite(x) || !finite(y) || (d.xScale == scaleLog && x <= 0) {
			continue
		}
		xys, lo, hi = append(xys, plotter.XY{X: x, Y: y}), append(lo, at(s.YLo, j)), append(hi, at(s.YHi, j))
	}
	if len(xys) < 2 {
		return nil
	}
	_, err := d.band(xys, lo, hi, col)
	return err
}

// bandThumb is a band's legend thumbnail: a light box.
type bandThumb struct{ col color.Color }

// Thumbnail implements gplot.Thumbnailer.
func (b bandThumb) Thumbnail(c *draw.Canvas) {
	r, g, bl, _ := b.col.RGBA()
	c.SetColor(color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: bandAlpha})
	var p vg.Path
	p.Move(vg.Point{X: c.Min.X, Y: c.Min.Y})
	p.Line(vg.Point{X: c.Max.X, Y: c.Min.Y})
	p.Line(vg.Point{X: c.Max.X, Y: c.Max.Y})
	p.Line(vg.Point{X: c.Min.X, Y: c.Max.Y})
	p.Close()
	c.Fill(p)
}

// band shades the area between lo and hi along xys in a light col.
func (d *drawer) band(xys plotter.XYs, lo, hi []float64, col color.Color) (gplot.Thumbnailer, error) {
	var poly plotter.XYs
	for i, pt := range xys {
		if finite(lo[i]) {
			poly = append(poly, plotter.XY{X: pt.X, Y: d.clampY(lo[i])})
		}
	}
	for i := len(xys) - 1; i >= 0; i-- {
		if finite(hi[i]) {
			poly = append(poly, plotter.XY{X: xys[i].X, Y: d.clampY(hi[i])})
		}
	}
	pg, err := plotter.NewPolygon(poly)
	if err != nil {
		return nil, err
	}
	r, g, b, _ := col.RGBA()
	pg.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: bandAlpha}
	pg.LineStyle.Width = 0
	d.p.Add(pg)
	return pg, nil
}

// bandAlpha is the opacity of an interval band.
const bandAlpha = 0x40

// downTriangle is a triangle pointing down: an upper limit.
type downTriangle struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (downTriangle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
	r := sty.Radius
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r/2})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r/2})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Close()
	c.Stroke(p)
}

// setYAxis sets the Y range and ticks for the scale.
func setYAxis(p *gplot.Plot, scale axisScale, lo, hi float64) {
	if scale == scaleLog {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Min, p.Y.Max = lo, hi
		p.Y.Tick.Marker = logTicks{}
		return
	}
	widenFlatAxis(p)
	l, h := niceRange(p.Y.Min, p.Y.Max)
	p.Y.Min, p.Y.Max = l, h
	p.Y.Tick.Marker = linearTicks{}
}

// setXAxis sets the X ticks: named events, decades or round numbers.
func setXAxis(p *gplot.Plot, c privacy.Chart, scale axisScale, lo float64) {
	if scale == scaleLog {
		p.X.Scale = gplot.LogScale{}
		p.X.Min = math.Min(p.X.Min, lo)
		if p.X.Min <= 0 {
			p.X.Min = lo
		}
		p.X.Min, p.X.Max = logBounds(p.X.Min, p.X.Max)
	}
	switch {
	case len(c.XTicks) > 0:
		var ticks []gplot.Tick
		gap := math.Inf(1)
		for i, t := range c.XTicks {
			ticks = append(ticks, gplot.Tick{Value: t.Value, Label: t.Label})
			p.X.Min, p.X.Max = math.Min(p.X.Min, t.Value), math.Max(p.X.Max, t.Value)
			if i > 0 {
				gap = math.Min(gap, math.Abs(t.Value-c.XTicks[i-1].Value))
			}
		}
		if !math.IsInf(gap, 1) && gap > 0 && scale == scaleLinear {
			// Categories: half a step of margin so the outer ones do
			// not sit on the axis ends.
			p.X.Min, p.X.Max = p.X.Min-gap/2, p.X.Max+gap/2
		}
		p.X.Tick.Marker = gplot.ConstantTicks(ticks)
		if len(ticks) > rotateNamedTicks {
			p.X.Tick.Label.Rotation = namedTickAngle
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
		}
	case scale == scaleLog:
		p.X.Tick.Marker = logTicks{}
	default:
		p.X.Tick.Marker = linearTicks{}
	}
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min-1, p.X.Max+1
	}
}

// widenFlatAxis gives a Y axis whose data is one value a range around it,
// so a flat curve is drawn with labelled ticks instead of on a zero-width
// axis.
func widenFlatAxis(p *gplot.Plot) {
	if p.Y.Min != p.Y.Max {
		return
	}
	v := p.Y.Min
	if v == 0 {
		p.Y.Min, p.Y.Max = -1, 1
		return
	}
	p.Y.Min, p.Y.Max = v-math.Abs(v)/2, v+math.Abs(v)/2
}

// newColours returns an empty colour map.
func newColours() *colourMap { return &colourMap{byKey: map[string]int{}} }
