package plot

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// TestLogTicksNarrowRange checks that a log axis spanning less than a
// power of ten still gets at least two labelled ticks.
func TestLogTicksNarrowRange(t *testing.T) {
	for _, r := range [][2]float64{{50, 200}, {84, 104}, {1, 1e6}} {
		labelled := 0
		for _, tk := range (logTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled < 2 {
			t.Errorf("range %v: %d labelled ticks, want >= 2", r, labelled)
		}
	}
}

// TestFlatSeriesAxisWidened checks that a chart whose data is one value
// gets a non-degenerate Y range on both scales.
func TestFlatSeriesAxisWidened(t *testing.T) {
	for _, logY := range []bool{false, true} {
		c := privacy.Chart{LogY: logY, Series: []privacy.Series{{Name: "flat", X: []float64{0, 1, 2}, Y: []float64{84, 84, 84}}}}
		p, err := chartPlot(c)
		if err != nil {
			t.Fatal(err)
		}
		if !(p.Y.Min < 84 && p.Y.Max > 84) {
			t.Errorf("logY=%v: Y range [%v, %v] does not surround 84", logY, p.Y.Min, p.Y.Max)
		}
	}
}

// testCharts is a log chart with a zero and a NaN to drop, beside a
// linear chart of points.
func testCharts() []privacy.Chart {
	return []privacy.Chart{
		{Title: "log", XLabel: "x", YLabel: "y", LogY: true, Series: []privacy.Series{
			{Name: "line", X: []float64{0, 1, 2, 3}, Y: []float64{1000, 10, 0, math.NaN()}},
			{Name: "points", X: []float64{0, 1}, Y: []float64{500, 5}, Points: true},
		}},
		{Title: "linear", XLabel: "x", YLabel: "y", Series: []privacy.Series{
			{Name: "points", X: []float64{0, 1, 2}, Y: []float64{0.1, 0.5, 0.9}, Points: true},
		}},
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
			if err := tc.write(&a, testCharts()); err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(a.Bytes(), []byte(tc.prefix)) {
				t.Errorf("output starts %q, want %q", a.Bytes()[:min(a.Len(), 8)], tc.prefix)
			}
			if err := tc.write(&b, testCharts()); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("the same charts drew different bytes")
			}
			var empty bytes.Buffer
			if err := tc.write(&empty, nil); !errors.Is(err, ErrNoCharts) || empty.Len() != 0 {
				t.Errorf("no charts: err = %v, %d bytes written", err, empty.Len())
			}
		})
	}
}

// TestZerosDroppedOnLogAxis checks that the title says when a log axis
// left points out, and that a chart with nothing positive stays linear.
func TestZerosDroppedOnLogAxis(t *testing.T) {
	p, err := chartPlot(testCharts()[0])
	if err != nil {
		t.Fatal(err)
	}
	if p.Title.Text != "log"+zeroDropNote {
		t.Errorf("title %q", p.Title.Text)
	}
	zeros := privacy.Chart{Title: "zeros", LogY: true, Series: []privacy.Series{{X: []float64{0, 1}, Y: []float64{0, 0}}}}
	if p, err = chartPlot(zeros); err != nil {
		t.Fatal(err)
	}
	if p.Title.Text != "zeros" || p.Y.Min != -1 || p.Y.Max != 1 {
		t.Errorf("all-zero log chart: title %q, Y [%v, %v], want a linear axis around 0", p.Title.Text, p.Y.Min, p.Y.Max)
	}
}
