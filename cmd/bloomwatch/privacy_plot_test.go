package main

import (
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
