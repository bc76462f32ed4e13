package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
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

// Figure geometry: one panel per chart, stacked, each with its legend in
// a column to the right of the data, never over it.
const (
	figureWidth = 11 * vg.Inch
	panelHeight = 4.2 * vg.Inch
	// legendShare bounds the legend column's share of the width.
	legendShare = 0.36
	// legendWrap is the longest legend or note line, in characters,
	// before it wraps.
	legendWrap   = 44
	legendGap    = 10 // points between the plot and the legend column
	panelGap     = 24 // points between stacked panels
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
	// maxSymLogDecades is the most decades a symmetric-log axis shows
	// above its linear part.
	maxSymLogDecades = 12
	// logMargin widens a log axis spanning less than a decade.
	logMargin = 1.15
)

// Legend suffixes for what a log axis cannot place.
const (
	allZeroNote   = " (all 0)"
	undefinedNote = " (%d undefined points not drawn)"
	symlogNote    = "Y axis: logarithmic above %s, linear from 0 to %s (zeros drawn at 0)"
	symlogXNote   = "X axis: logarithmic above %s, linear from 0 to %s (zeros drawn at 0)"
	noPositive    = "no positive value: linear Y axis"
)

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
	img := vgimg.New(figureWidth, panelHeight*vg.Length(len(charts)))
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
	img := vgsvg.New(figureWidth, panelHeight*vg.Length(len(charts)))
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

// newFigure builds every panel, or fails without drawing anything.
func newFigure(charts []privacy.Chart) (*figure, error) {
	if len(charts) == 0 {
		return nil, ErrNoCharts
	}
	fig := &figure{}
	for _, c := range charts {
		p, err := chartPanel(c)
		if err != nil {
			return nil, fmt.Errorf("chart %q: %w", c.Title, err)
		}
		fig.panels = append(fig.panels, p)
	}
	return fig, nil
}

// draw lays the panels out: the plots aligned in the left column, each
// legend in the right column beside its plot.
func (f *figure) draw(dc draw.Canvas) {
	legendW := f.legendWidth(dc)
	left := dc
	left.Max.X -= legendW
	plots := make([][]*gplot.Plot, len(f.panels))
	for i, p := range f.panels {
		plots[i] = []*gplot.Plot{p.plot}
	}
	canvases := gplot.Align(plots, draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(panelGap),
		PadTop: vg.Points(panelGap / 2), PadBottom: vg.Points(panelGap / 2)}, left)
	for i, p := range f.panels {
		c := canvases[i][0]
		p.plot.Draw(c)
		col := c
		col.Min.X, col.Max.X = left.Max.X+vg.Points(legendGap), dc.Max.X
		data := p.plot.DataCanvas(c)
		col.Max.Y = data.Max.Y
		p.drawLegend(col)
	}
}

// legendWidth returns the width of the legend column: the widest entry
// or note, at most legendShare of the figure.
func (f *figure) legendWidth(dc draw.Canvas) vg.Length {
	entrySty, noteSty := textStyle(legendFont), textStyle(noteFont)
	var w vg.Length
	for _, p := range f.panels {
		for _, e := range p.entries {
			w = max(w, vg.Points(thumbWidth+thumbGap)+entrySty.Rectangle(e.text).Max.X)
		}
		for _, n := range p.notes {
			w = max(w, noteSty.Rectangle(n).Max.X)
		}
	}
	w += vg.Points(legendGap)
	return min(w, vg.Length(legendShare)*(dc.Max.X-dc.Min.X))
}

// drawLegend draws the entries from the top of c, then the notes. Each
// entry's thumbnail sits beside the first line of its text.
func (p panel) drawLegend(c draw.Canvas) {
	sty, noteSty := textStyle(legendFont), textStyle(noteFont)
	sty.YAlign, noteSty.YAlign = draw.YTop, draw.YTop
	lineH := sty.Height("X")
	y := c.Max.Y
	for _, e := range p.entries {
		if e.thumb != nil {
			thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: c.Min.X, Y: y - lineH},
				Max: vg.Point{X: c.Min.X + vg.Points(thumbWidth), Y: y},
			}}
			e.thumb.Thumbnail(&thumb)
		}
		c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(thumbWidth+thumbGap), Y: y}, e.text)
		y -= sty.Height(e.text) + vg.Points(entryGap)
	}
	y -= vg.Points(entryGap)
	for _, n := range p.notes {
		c.FillText(noteSty, vg.Point{X: c.Min.X, Y: y}, n)
		y -= noteSty.Height(n) + vg.Points(entryGap)
	}
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

// yScale is how a chart's Y axis maps values.
type yScale int

const (
	scaleLinear yScale = iota
	scaleLog
	scaleSymLog
)

// chooseYScale picks the Y scale: log when asked and every value is
// positive, symmetric-log when asked and some values are zero or less,
// linear otherwise. It returns the smallest positive value.
func chooseYScale(c privacy.Chart) (yScale, float64) {
	minPos, nonPos := math.Inf(1), false
	for _, s := range c.Series {
		for k, vals := range [][]float64{s.Y, s.YLo, s.YHi} {
			for _, v := range vals {
				switch {
				case math.IsNaN(v) || math.IsInf(v, 0):
				case v > 0:
					minPos = math.Min(minPos, v)
				case k == 1 && s.Band:
					// A band's lower bound of 0 is drawn at the
					// axis floor.
				default:
					nonPos = true
				}
			}
		}
	}
	switch {
	case !c.LogY:
		return scaleLinear, minPos
	case math.IsInf(minPos, 1):
		return scaleLinear, minPos
	case nonPos:
		return scaleSymLog, minPos
	}
	return scaleLog, minPos
}

// chooseXScale picks the X scale: log when asked and every x is
// positive, symmetric-log (threshold: the smallest positive x's decade)
// when asked and some x is 0 or less.
func chooseXScale(c privacy.Chart) (yScale, float64) {
	if !c.LogX {
		return scaleLinear, 0
	}
	minPos, nonPos := math.Inf(1), false
	for _, s := range c.Series {
		for _, x := range s.X {
			switch {
			case math.IsNaN(x) || math.IsInf(x, 0):
			case x > 0:
				minPos = math.Min(minPos, x)
			default:
				nonPos = true
			}
		}
	}
	switch {
	case math.IsInf(minPos, 1):
		return scaleLinear, 0
	case nonPos:
		return scaleSymLog, math.Pow(10, math.Floor(math.Log10(minPos)))
	}
	return scaleLog, 0
}

// chartPanel builds one panel: every series drawn, the legend and notes
// collected.
func chartPanel(c privacy.Chart) (panel, error) {
	p := gplot.New()
	p.Title.Text = c.Title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	pn := panel{plot: p}
	scale, minPos := chooseYScale(c)
	var thresh float64
	switch scale {
	case scaleLog:
		p.Y.Scale = gplot.LogScale{}
	case scaleSymLog:
		thresh = symLogThreshold(c, minPos)
		p.Y.Scale = symLogScale{thresh: thresh}
		t := cleanNumber(thresh)
		pn.notes = append(pn.notes, wrap(fmt.Sprintf(symlogNote, t, t), legendWrap))
	}
	if c.LogY && scale == scaleLinear {
		pn.notes = append(pn.notes, noPositive)
	}
	xScale, xThresh := chooseXScale(c)
	switch xScale {
	case scaleLog:
		p.X.Scale = gplot.LogScale{}
	case scaleSymLog:
		p.X.Scale = symLogScale{thresh: xThresh}
		t := cleanNumber(xThresh)
		pn.notes = append(pn.notes, wrap(fmt.Sprintf(symlogXNote, t, t), legendWrap))
	}
	drawable := func(x, y float64) bool {
		if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
		return (scale != scaleLog || y > 0) && (xScale != scaleLog || x > 0)
	}
	color := 0
	groupColor := map[string]int{}
	// Bands go under every line and marker: they are added first, the
	// series after them (pending), in order.
	var bands []gplot.Plotter
	var pending []func() error
	for _, s := range c.Series {
		if len(s.X) != len(s.Y) || (s.YLo != nil && len(s.YLo) != len(s.Y)) || (s.YHi != nil && len(s.YHi) != len(s.Y)) {
			return panel{}, fmt.Errorf("%w: %q: %d x, %d y, %d lo, %d hi", ErrBadSeries, s.Name, len(s.X), len(s.Y), len(s.YLo), len(s.YHi))
		}
		var xys plotter.XYs
		var errs plotter.YErrors
		undefined, allZero := 0, len(s.Y) > 0
		for j := range s.X {
			if !drawable(s.X[j], s.Y[j]) {
				undefined++
				continue
			}
			if s.Y[j] != 0 {
				allZero = false
			}
			xys = append(xys, plotter.XY{X: s.X[j], Y: s.Y[j]})
			if s.Band && s.YLo != nil && s.YHi != nil {
				continue
			}
			if s.YLo != nil && s.YHi != nil {
				lo, hi := s.YLo[j], s.YHi[j]
				if scale == scaleLog {
					lo = math.Max(lo, minPos)
				}
				errs = append(errs, struct{ Low, High float64 }{math.Max(0, s.Y[j]-lo), math.Max(0, hi-s.Y[j])})
			}
		}
		name := s.Name
		if s.Reference {
			name = "published: " + name
			if s.Source != "" {
				name += " (" + s.Source + ")"
			}
		}
		if allZero && scale != scaleLinear {
			name += allZeroNote
		}
		if undefined > 0 {
			name += fmt.Sprintf(undefinedNote, undefined)
		}
		name = wrap(name, legendWrap)
		if len(xys) == 0 {
			pn.entries = append(pn.entries, legendEntry{text: name})
			continue
		}
		ci, grouped := groupColor[s.Group]
		if !grouped || s.Group == "" {
			ci = color
			if !s.Reference {
				color++
			}
			if s.Group != "" {
				groupColor[s.Group] = ci
			}
		}
		if s.Band && s.YLo != nil && s.YHi != nil {
			band, err := bandPolygon(s, scale, minPos, drawable, ci)
			if err != nil {
				return panel{}, err
			}
			if band != nil {
				bands = append(bands, band)
			}
		}
		entry := len(pn.entries)
		pn.entries = append(pn.entries, legendEntry{text: name})
		pending = append(pending, func() error {
			thumb, err := addSeries(p, s, xys, errs, ci)
			pn.entries[entry].thumb = thumb
			return err
		})
	}
	p.Add(bands...)
	for _, add := range pending {
		if err := add(); err != nil {
			return panel{}, err
		}
	}
	for _, n := range c.Notes {
		pn.notes = append(pn.notes, wrap(n, legendWrap))
	}
	setYAxis(p, scale, thresh)
	setXAxis(p, c, xScale, xThresh)
	return pn, nil
}

// bandAlpha is the opacity of an interval band.
const bandAlpha = 0x40

// bandPolygon returns the shaded band of a series' YLo..YHi over its
// drawable points, in colour i, or nil when fewer than two points can be
// drawn. On a log axis a lower bound at or below 0 is drawn at the
// decade of the smallest positive value (the axis floor).
func bandPolygon(s privacy.Series, scale yScale, minPos float64, drawable func(x, y float64) bool, i int) (*plotter.Polygon, error) {
	floor := math.Pow(10, math.Floor(math.Log10(minPos)))
	var upper, lower plotter.XYs
	for j := range s.X {
		lo, hi := s.YLo[j], s.YHi[j]
		if !drawable(s.X[j], s.Y[j]) || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(hi, 0) {
			continue
		}
		if scale == scaleLog && lo <= 0 {
			lo = floor
		}
		upper = append(upper, plotter.XY{X: s.X[j], Y: hi})
		lower = append(lower, plotter.XY{X: s.X[j], Y: lo})
	}
	if len(upper) < 2 {
		return nil, nil
	}
	ring := append(plotter.XYs{}, upper...)
	for j := len(lower) - 1; j >= 0; j-- {
		ring = append(ring, lower[j])
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil, err
	}
	r, g, b, _ := plotutil.Color(i).RGBA()
	poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: bandAlpha}
	poly.LineStyle.Width = 0
	return poly, nil
}

// addSeries adds one series' plotters and returns its legend thumbnail.
func addSeries(p *gplot.Plot, s privacy.Series, xys plotter.XYs, errs plotter.YErrors, i int) (gplot.Thumbnailer, error) {
	if len(errs) == len(xys) && len(errs) > 0 {
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errs})
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color = plotutil.Color(i)
		if s.Reference {
			eb.LineStyle.Color = refColor
		}
		eb.CapWidth = vg.Points(capWidth)
		p.Add(eb)
	}
	if s.Points || s.Reference {
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Radius = vg.Points(pointRadius)
		if s.Reference {
			sc.GlyphStyle.Color = refColor
			sc.GlyphStyle.Shape = draw.RingGlyph{}
			sc.GlyphStyle.Radius = vg.Points(refRadius)
		}
		p.Add(sc)
		return sc, nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.LineStyle.Color = plotutil.Color(i)
	l.LineStyle.Dashes = plotutil.Dashes(i)
	l.LineStyle.Width = vg.Points(lineWidth)
	p.Add(l)
	return l, nil
}

// symLogThreshold returns the decade where a symmetric-log axis turns
// linear: the smallest positive value's, or maxSymLogDecades below the
// largest value's when that is higher (values under it are drawn in the
// linear part, next to 0).
func symLogThreshold(c privacy.Chart, minPos float64) float64 {
	maxV := minPos
	for _, s := range c.Series {
		for _, vals := range [][]float64{s.Y, s.YHi} {
			for _, v := range vals {
				if !math.IsInf(v, 0) && !math.IsNaN(v) {
					maxV = math.Max(maxV, v)
				}
			}
		}
	}
	lo := math.Floor(math.Log10(minPos))
	return math.Pow(10, math.Max(lo, math.Ceil(math.Log10(maxV))-maxSymLogDecades))
}

// setYAxis sets the Y range and ticks for the scale.
func setYAxis(p *gplot.Plot, scale yScale, thresh float64) {
	widenFlatAxis(p, scale == scaleLog)
	switch scale {
	case scaleLog:
		if math.Log10(p.Y.Max/p.Y.Min) < 1 {
			// Less than a decade: a margin, not whole decades, which
			// would squeeze the data into a corner.
			p.Y.Min, p.Y.Max = p.Y.Min/logMargin, p.Y.Max*logMargin
		} else {
			p.Y.Min = math.Pow(10, math.Floor(math.Log10(p.Y.Min)))
			p.Y.Max = math.Pow(10, math.Ceil(math.Log10(p.Y.Max)))
		}
		p.Y.Tick.Marker = logTicks{}
	case scaleSymLog:
		p.Y.Min = math.Min(0, p.Y.Min)
		p.Y.Max = math.Max(p.Y.Max, thresh)
		p.Y.Max = math.Pow(10, math.Ceil(math.Log10(p.Y.Max)))
		p.Y.Tick.Marker = symLogTicks{thresh: thresh}
	default:
		lo, hi := niceRange(p.Y.Min, p.Y.Max)
		p.Y.Min, p.Y.Max = lo, hi
		p.Y.Tick.Marker = linearTicks{}
	}
}

// setXAxis sets the X ticks: named events, decades or round numbers.
func setXAxis(p *gplot.Plot, c privacy.Chart, scale yScale, thresh float64) {
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
	case scale == scaleSymLog:
		p.X.Min = math.Min(0, p.X.Min)
		p.X.Max = math.Pow(10, math.Ceil(math.Log10(math.Max(p.X.Max, thresh))))
		p.X.Tick.Marker = symLogTicks{thresh: thresh}
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
func widenFlatAxis(p *gplot.Plot, logY bool) {
	if p.Y.Min != p.Y.Max {
		return
	}
	v := p.Y.Min
	switch {
	case logY:
		p.Y.Min, p.Y.Max = v/2, v*2
	case v == 0:
		p.Y.Min, p.Y.Max = -1, 1
	default:
		p.Y.Min, p.Y.Max = v-math.Abs(v)/2, v+math.Abs(v)/2
	}
}
