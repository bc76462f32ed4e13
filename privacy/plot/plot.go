package plot

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/bloomwatch/bloomwatch/privacy"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrNoCharts is returned when there is no chart to draw.
var ErrNoCharts = errors.New("nothing to draw")

// Figure geometry: one panel per chart, stacked.
const (
	figureWidth  = 9 * vg.Inch
	panelHeight  = 4.5 * vg.Inch
	pointRadius  = 2.5
	logTickPrec  = -1
	zeroDropNote = " (zeros not drawn on the log axis)"
)

// WritePNG draws the charts, stacked one panel per chart, as a PNG image
// on w. On a log axis, points at or below zero cannot be drawn and are
// left out (the panel's title says so); a chart with nothing positive
// falls back to a linear axis. It returns ErrNoCharts for no charts and
// writes nothing when a chart cannot be drawn.
func WritePNG(w io.Writer, charts []privacy.Chart) error {
	plots, err := panels(charts)
	if err != nil {
		return err
	}
	img := vgimg.New(figureWidth, panelHeight*vg.Length(len(charts)))
	drawPanels(draw.New(img), plots)
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("png: %w", err)
	}
	return nil
}

// WriteSVG draws the charts like WritePNG, as an SVG document on w. The
// fonts are not embedded: a viewer without the Liberation fonts draws the
// text in a substitute font.
func WriteSVG(w io.Writer, charts []privacy.Chart) error {
	plots, err := panels(charts)
	if err != nil {
		return err
	}
	img := vgsvg.New(figureWidth, panelHeight*vg.Length(len(charts)))
	drawPanels(draw.New(img), plots)
	if _, err := img.WriteTo(w); err != nil {
		return fmt.Errorf("svg: %w", err)
	}
	return nil
}

// panels builds one plot per chart, as the one-column grid gplot.Align
// lays out.
func panels(charts []privacy.Chart) ([][]*gplot.Plot, error) {
	if len(charts) == 0 {
		return nil, ErrNoCharts
	}
	plots := make([][]*gplot.Plot, len(charts))
	for i, c := range charts {
		p, err := chartPlot(c)
		if err != nil {
			return nil, fmt.Errorf("chart %q: %w", c.Title, err)
		}
		plots[i] = []*gplot.Plot{p}
	}
	return plots, nil
}

// drawPanels draws the panels stacked on dc, their axes aligned.
func drawPanels(dc draw.Canvas, plots [][]*gplot.Plot) {
	canvases := gplot.Align(plots, draw.Tiles{Rows: len(plots), Cols: 1}, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
}

// chartPlot builds one panel.
func chartPlot(c privacy.Chart) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Legend.Top = true
	logY := c.LogY && hasPositive(c.Series)
	if logY {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	dropped := false
	for i, s := range c.Series {
		xys := make(plotter.XYs, 0, len(s.X))
		for j := range s.X {
			y := s.Y[j]
			if math.IsNaN(y) || math.IsInf(y, 0) || logY && y <= 0 {
				dropped = true
				continue
			}
			xys = append(xys, plotter.XY{X: s.X[j], Y: y})
		}
		if len(xys) == 0 {
			continue
		}
		if s.Points {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle.Color = plotutil.Color(i)
			sc.GlyphStyle.Shape = plotutil.Shape(i)
			sc.GlyphStyle.Radius = vg.Points(pointRadius)
			p.Add(sc)
			p.Legend.Add(s.Name, sc)
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.LineStyle.Color = plotutil.Color(i)
		l.LineStyle.Dashes = plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	if dropped && logY {
		p.Title.Text += zeroDropNote
	}
	widenFlatAxis(p, logY)
	return p, nil
}

// hasPositive reports whether any series has a positive finite value.
func hasPositive(series []privacy.Series) bool {
	for _, s := range series {
		for _, y := range s.Y {
			if y > 0 && !math.IsInf(y, 0) {
				return true
			}
		}
	}
	return false
}

// logTicks marks powers of ten like gplot.LogTicks, and falls back to
// evenly spaced labels when the axis spans less than two powers of ten (a
// narrow range would otherwise carry no label at all).
type logTicks struct{}

// Ticks returns the tick marks for the axis range [min, max].
func (logTicks) Ticks(min, max float64) []gplot.Tick {
	ticks := gplot.LogTicks{Prec: logTickPrec}.Ticks(min, max)
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled >= 2 {
		return ticks
	}
	return gplot.DefaultTicks{}.Ticks(min, max)
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
