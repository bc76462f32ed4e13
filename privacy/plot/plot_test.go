package plot

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// labels returns the labelled ticks of t over [lo, hi].
func labels(t gplot.Ticker, lo, hi float64) []string {
	var out []string
	for _, tk := range t.Ticks(lo, hi) {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

// TestCleanNumbers checks tick labels as a reader writes them: no float
// noise, powers of ten outside 0.001..10000 as 1e-4.
func TestCleanNumbers(t *testing.T) {
	tests := map[float64]string{
		0: "0", math.Copysign(0, -1): "0", 1e-4: "1e-4", 0.00010000000000005: "1e-4", 0.001: "0.001", 0.01: "0.01",
		1: "1", 250: "250", 1e4: "10000", 1e5: "1e5", 0.30000000000000004: "0.3", 2.5e6: "2.5e6", 1e-22: "1e-22", -1e-6: "-1e-6",
	}
	for v, want := range tests {
		got := cleanNumber(v)
		require.Equal(t, want, got, "cleanNumber(%g) = %q, want %q", v, got, want)
	}
}

// TestLogTicksOneLabelPerDecade checks that a log axis labels whole
// decades only, thins them when many are spanned, and still labels a
// range narrower than a decade.
func TestLogTicksOneLabelPerDecade(t *testing.T) {
	narrow := labels(logTicks{}, 84, 104)
	require.GreaterOrEqual(t, len(narrow), 2, "84..104: labels %v, want at least 2", narrow)
	for _, r := range [][2]float64{{1e-4, 10}, {1e-22, 1e3}, {1, 1e6}} {
		got := labels(logTicks{}, r[0], r[1])
		require.LessOrEqual(t, len(got), maxDecadeLabels+1, "%v: %d labels %v", r, len(got), got)
		require.GreaterOrEqual(t, len(got), 2, "%v: %d labels %v", r, len(got), got)
		seen := map[string]bool{}
		for _, l := range got {
			require.False(t, seen[l], "%v: label %q repeated or unclean in %v", r, l, got)
			require.False(t, strings.Contains(l, "00000") && !strings.HasPrefix(l, "1"), "%v: label %q repeated or unclean in %v", r, l, got)
			seen[l] = true
		}
	}
	got := labels(logTicks{}, 1e-4, 1)
	require.Contains(t, strings.Join(got, " "), "10^-4", "1e-4..1: labels %v lack 10^-4", got)
}

// TestLinearTicksAreRound checks round labels on a linear axis.
func TestLinearTicksAreRound(t *testing.T) {
	got := strings.Join(labels(linearTicks{}, 0, 600), " ")
	require.Equal(t, "0 200 400 600", got, "0..600: %q", got)
	got = strings.Join(labels(linearTicks{}, 0, 1), " ")
	require.Equal(t, "0 0.2 0.4 0.6 0.8 1", got, "0..1: %q", got)
}

// TestFlatSeriesAxisWidened checks that a chart whose data is one value
// gets a non-degenerate Y range on both scales.
func TestFlatSeriesAxisWidened(t *testing.T) {
	for _, logY := range []bool{false, true} {
		c := privacy.Chart{LogY: logY, Series: []privacy.Series{{Name: "flat", X: []float64{0, 1, 2}, Y: []float64{84, 84, 84}}}}
		p, err := chartPanel(c, newColours())
		require.NoError(t, err)
		require.True(t, p.plot.Y.Min < 84 && p.plot.Y.Max > 84, "logY=%v: Y range [%v, %v] does not surround 84", logY, p.plot.Y.Min, p.plot.Y.Max)
	}
}

// testCharts is a log chart with zeros, error bars, a reference marker
// and a NaN, beside a linear chart of points with named ticks.
func testCharts() []privacy.Chart {
	return []privacy.Chart{
		{Title: "log", XLabel: "x", YLabel: "y", LogY: true, Notes: []string{"measured here"}, Series: []privacy.Series{
			{Name: "line", X: []float64{0, 1, 2, 3}, Y: []float64{1000, 10, 0, math.NaN()}},
			{Name: "points", X: []float64{0, 1}, Y: []float64{500, 5}, YLo: []float64{400, 2}, YHi: []float64{600, 9}, Points: true},
			{Name: "zeros", X: []float64{0, 1}, Y: []float64{0, 0}, Points: true},
			{Name: "Nick 1.27", X: []float64{2}, Y: []float64{1.27}, Reference: true, Source: "Nick, ETH thesis 2015"},
		}},
		{Title: "linear", XLabel: "x", YLabel: "y", XTicks: []privacy.Tick{{Value: 0, Label: "a"}, {Value: 2, Label: "b"}},
			Series: []privacy.Series{{Name: "points", X: []float64{0, 1, 2}, Y: []float64{0.1, 0.5, 0.9}, Points: true}}},
	}
}

func TestWrite(t *testing.T) {
	tests := []struct {
		name   string
		write  func(*bytes.Buffer, []privacy.Chart) error
		prefix string
	}{
		{"png", func(b *bytes.Buffer, c []privacy.Chart) error { return WritePNG(b, c) }, "\x89PNG\r\n\x1a\n"},
		{"svg", func(b *bytes.Buffer, c []privacy.Chart) error { return WriteSVG(b, c) }, "<?xml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a, b bytes.Buffer
			require.NoError(t, tc.write(&a, testCharts()))
			require.True(t, bytes.HasPrefix(a.Bytes(), []byte(tc.prefix)), "output starts %q, want %q", a.Bytes()[:min(a.Len(), 8)], tc.prefix)
			require.NoError(t, tc.write(&b, testCharts()))
			require.Equal(t, b.Bytes(), a.Bytes(), "the same charts drew different bytes")
			var empty bytes.Buffer
			err := tc.write(&empty, nil)
			require.ErrorIs(t, err, ErrNoCharts, "no charts: err = %v, %d bytes written", err, empty.Len())
			require.Equal(t, 0, empty.Len(), "no charts: err = %v, %d bytes written", err, empty.Len())
			bad := []privacy.Chart{{Series: []privacy.Series{{X: []float64{1}, Y: []float64{1, 2}}}}}
			err = tc.write(&empty, bad)
			require.ErrorIs(t, err, ErrBadSeries, "bad series: err = %v, %d bytes written", err, empty.Len())
			require.Equal(t, 0, empty.Len(), "bad series: err = %v, %d bytes written", err, empty.Len())
		})
	}
}

// legendOf returns a panel's legend entries on one line each.
func legendOf(p panel) string {
	var legend []string
	for _, e := range p.entries {
		legend = append(legend, strings.ReplaceAll(e.text, "\n", " "))
	}
	return strings.Join(legend, " | ")
}

// TestNoSeriesDropped checks that zeros keep a log axis logarithmic (a
// measured 0 drawn as a bar from the bottom, noted), that an all-zero
// series and undefined points are named in the legend, that the published
// figure is labelled with its source, and that a chart with nothing
// positive stays linear with a note.
func TestNoSeriesDropped(t *testing.T) {
	p, err := chartPanel(testCharts()[0], newColours())
	require.NoError(t, err)
	_, ok := p.plot.Y.Scale.(gplot.LogScale)
	require.True(t, ok, "Y scale %T, want logarithmic", p.plot.Y.Scale)
	joined := legendOf(p)
	for _, want := range []string{"line (1 undefined points not drawn) (1 zeros not drawn on the log axis)", "zeros (all 0)", "published: Nick 1.27 (Nick, ETH thesis 2015)"} {
		require.Contains(t, joined, want, "legend %q lacks %q", joined, want)
	}
	require.Len(t, p.entries, 4, "%d legend entries for 4 series", len(p.entries))
	zeros := privacy.Chart{Title: "zeros", LogY: true, Series: []privacy.Series{{X: []float64{0, 1}, Y: []float64{0, 0}}}}
	p, err = chartPanel(zeros, newColours())
	require.NoError(t, err)
	require.Equal(t, float64(-1), p.plot.Y.Min, "all-zero log chart: Y [%v, %v], notes %v: want a linear axis around 0 with a note", p.plot.Y.Min, p.plot.Y.Max, p.notes)
	require.Equal(t, float64(1), p.plot.Y.Max, "all-zero log chart: Y [%v, %v], notes %v: want a linear axis around 0 with a note", p.plot.Y.Min, p.plot.Y.Max, p.notes)
	require.Contains(t, strings.Join(p.notes, " "), noPositive, "all-zero log chart: Y [%v, %v], notes %v: want a linear axis around 0 with a note", p.plot.Y.Min, p.plot.Y.Max, p.notes)
}

// TestLogAxisClipsFormula checks that a formula line falling to 1e-300
// does not stretch the axis: its bottom is set by the measurements and
// their bounds, whole decades, and the line is said to continue below.
func TestLogAxisClipsFormula(t *testing.T) {
	c := privacy.Chart{LogY: true, Series: []privacy.Series{
		{Name: "formula", X: []float64{1, 2, 3}, Y: []float64{100, 1e-10, 1e-300}},
		{Name: "measured", X: []float64{1, 2, 3}, Y: []float64{90, 0, 0}, YLo: []float64{80, 0, 0}, YHi: []float64{100, 3.7, 3.7}, Points: true},
	}}
	p, err := chartPanel(c, newColours())
	require.NoError(t, err)
	require.Equal(t, float64(1), p.plot.Y.Min, "Y range [%g, %g], want [1, 100]", p.plot.Y.Min, p.plot.Y.Max)
	require.Equal(t, float64(100), p.plot.Y.Max, "Y range [%g, %g], want [1, 100]", p.plot.Y.Min, p.plot.Y.Max)
	joined := legendOf(p)
	require.Contains(t, joined, "formula"+belowNote, "legend %q does not say the formula continues below", joined)
	require.Contains(t, strings.Join(p.notes, " "), "axis bottom", "notes %v do not explain the measured zeros", p.notes)
}

// TestIdenticalSeriesMerged checks that two series with the same points
// give one legend entry naming both, and that references get distinct
// glyphs.
func TestIdenticalSeriesMerged(t *testing.T) {
	c := privacy.Chart{Series: []privacy.Series{
		{Name: "a", X: []float64{1, 2}, Y: []float64{1, 1}, Points: true},
		{Name: "b", X: []float64{1, 2}, Y: []float64{1, 1}, Points: true},
		{Name: "c", X: []float64{1, 2}, Y: []float64{0.5, 1}, Points: true},
	}}
	p, err := chartPanel(c, newColours())
	require.NoError(t, err)
	got := legendOf(p)
	require.Len(t, p.entries, 2, "legend %q: want a = b merged and c", got)
	require.Contains(t, got, "a = b", "legend %q: want a = b merged and c", got)
}

// TestMarkersThinned checks that a long measured series marks at most
// maxMarkers points and says so.
func TestMarkersThinned(t *testing.T) {
	var x, y []float64
	for i := range 2120 {
		x, y = append(x, float64(i)), append(y, float64(i))
	}
	p, err := chartPanel(privacy.Chart{Series: []privacy.Series{{Name: "m", X: x, Y: y, Points: true}}}, newColours())
	require.NoError(t, err)
	got := legendOf(p)
	require.Contains(t, got, "one point in 53 marked", "legend %q", got)
}

// TestConsistentLabels checks that one axis prints its labels alike.
func TestConsistentLabels(t *testing.T) {
	got := strings.Join(labels(logTicks{}, 1e-4, 100), " ")
	require.Equal(t, "10^-4 10^-3 10^-2 10^-1 10^0 10^1 10^2", got, "1e-4..100: %q", got)
	got = strings.Join(labels(logTicks{}, 0.01, 100), " ")
	require.Equal(t, "0.01 0.1 1 10 100", got, "0.01..100: %q", got)
}

// TestBandOnLogAxis checks an interval drawn as a band: a lower bound of
// 0 (the interval of a count of 0) keeps the log axis logarithmic, with
// decade ticks, and the band has a legend entry with its series.
func TestBandOnLogAxis(t *testing.T) {
	band := privacy.Series{Name: "measured", X: []float64{0, 1, 2}, Y: []float64{700, 60, 2},
		YLo: []float64{650, 45, 0}, YHi: []float64{760, 77, 7.2}, Band: true, Points: true, Group: "g"}
	line := privacy.Series{Name: "expected", X: []float64{0, 1, 2}, Y: []float64{710, 66, 3.9}, Group: "g"}
	c := privacy.Chart{Title: "t", LogY: true, Series: []privacy.Series{band, line}}
	p, err := chartPanel(c, newColours())
	require.NoError(t, err)
	_, ok := p.plot.Y.Scale.(gplot.LogScale)
	require.True(t, ok, "y axis %T %v..%v, want log 1..1000", p.plot.Y.Scale, p.plot.Y.Min, p.plot.Y.Max)
	require.Equal(t, float64(1), p.plot.Y.Min, "y axis %T %v..%v, want log 1..1000", p.plot.Y.Scale, p.plot.Y.Min, p.plot.Y.Max)
	require.Equal(t, float64(1000), p.plot.Y.Max, "y axis %T %v..%v, want log 1..1000", p.plot.Y.Scale, p.plot.Y.Min, p.plot.Y.Max)
	require.Len(t, p.entries, 2, "legend %+v: want one entry per series", p.entries)
	require.False(t, p.entries[0].thumb == nil, "legend %+v: want one entry per series", p.entries)
	require.False(t, p.entries[1].thumb == nil, "legend %+v: want one entry per series", p.entries)
	var b bytes.Buffer
	err = WritePNG(&b, []privacy.Chart{c})
	require.NoError(t, err, "png")
	require.NotEqual(t, 0, b.Len(), "png: %v", err)
}

// TestPaperLayout checks what a printed figure needs: powers of ten as
// 10 with a raised exponent (the labels carry 10^5, drawn raised), the
// chart's notes in the caption and not in the legend, a chart with
// nothing to draw left out (and named in the caption), one colour per
// series across panels, and the legend under the plot, the plot taking
// the full width.
func TestPaperLayout(t *testing.T) {
	require.Equal(t, "10^5", powerLabel("1e5"))
	require.Equal(t, "2.5×10^-4", powerLabel("2.5e-4"))
	require.Equal(t, "250", powerLabel("250"))
	a := privacy.Series{Name: "policy a", X: []float64{1, 2}, Y: []float64{1, 2}}
	b := privacy.Series{Name: "policy b", X: []float64{1, 2}, Y: []float64{2, 3}}
	charts := []privacy.Chart{
		{Title: "first", Series: []privacy.Series{a, b}, Notes: []string{"measured here: bloomwatch privacy experiment x --seed 1"}},
		{Title: "empty", Series: []privacy.Series{{Name: "nothing", X: []float64{1}, Y: []float64{math.NaN()}}}},
		{Title: "second", Series: []privacy.Series{b, a}},
	}
	fig, err := newFigure(charts)
	require.NoError(t, err)
	require.Len(t, fig.panels, 2, "the empty chart is left out")
	for _, p := range fig.panels {
		require.NotContains(t, legendOf(p)+strings.Join(p.notes, " "), "measured here")
	}
	cap := Caption(charts)
	require.Contains(t, cap, "Panel 1: first. measured here: bloomwatch privacy experiment x --seed 1.")
	require.Contains(t, cap, "Not drawn (no data): empty.")
	colourOf := func(p panel, name string) any {
		for _, e := range p.entries {
			if e.text == name {
				for _, th := range e.thumb.(thumbs) {
					if l, ok := th.(*plotter.Line); ok {
						return l.LineStyle.Color
					}
				}
			}
		}
		return nil
	}
	for _, name := range []string{"policy a", "policy b"} {
		require.NotNil(t, colourOf(fig.panels[0], name))
		require.Equal(t, colourOf(fig.panels[0], name), colourOf(fig.panels[1], name), "%s keeps its colour", name)
	}
	img := vgimg.New(figureWidth, fig.height())
	fig.draw(draw.New(img))
	require.Greater(t, fig.height(), 2*plotHeight, "each legend takes room under its plot")
	_, err = newFigure(charts[1:2])
	require.ErrorIs(t, err, ErrNoCharts)
}

// TestPairedSeriesShareAHue: the two series of a pair are drawn in one
// hue, the second lighter, and the next series in another colour.
func TestPairedSeriesShareAHue(t *testing.T) {
	x := []float64{1, 2}
	c := privacy.Chart{Series: []privacy.Series{
		{Name: "none", X: x, Y: []float64{1, 2}, Points: true, Pair: "500 B"},
		{Name: "all", X: x, Y: []float64{2, 3}, Points: true, Pair: "500 B"},
		{Name: "other", X: x, Y: []float64{3, 4}, Points: true},
	}}
	p, err := chartPanel(c, newColours())
	require.NoError(t, err)
	colour := func(i int) any {
		for _, th := range p.entries[i].thumb.(thumbs) {
			if sc, ok := th.(*plotter.Scatter); ok {
				return sc.GlyphStyle.Color
			}
		}
		return nil
	}
	require.Equal(t, palette(0), colour(0))
	require.Equal(t, lighter(palette(0)), colour(1))
	require.Equal(t, palette(1), colour(2))
}
