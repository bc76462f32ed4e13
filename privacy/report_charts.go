package privacy

// Charts returns the report's figures: the false-positive anonymity set
// after each event (measured and expected, per set stage, on a log axis),
// the adversary's precision, and, with saturation, the server-side
// false-positive rate block by block.
func (r *Report) Charts() []Chart {
	fp := Chart{Title: "collapse curve: false-positive anonymity set after each event", XLabel: "event",
		YLabel: "false positives", LogY: true}
	prec := Chart{Title: "adversary precision after each event", XLabel: "event", YLabel: "precision"}
	var out []Chart
	for _, c := range r.Curves {
		if c.Stage == StageSaturation {
			sat := Chart{Title: "server-side filter after each block (saturation replay)", XLabel: "block height",
				YLabel: "false-positive rate", LogY: true}
			var x, y []float64
			for _, p := range c.Points {
				x, y = append(x, float64(p.Height)), append(y, p.FPRate)
			}
			sat.Series = []Series{{Name: "server filter (X/n)^k", X: x, Y: y, Points: true}}
			out = append(out, sat)
			continue
		}
		var x, measured, expected, precision []float64
		for _, p := range c.Points {
			x = append(x, float64(p.Step))
			expected = append(expected, p.ExpectedFP)
			if r.HasTruth {
				measured = append(measured, float64(p.FalsePositives))
				precision = append(precision, p.Precision)
			} else {
				measured = append(measured, float64(p.Matched))
				precision = append(precision, p.ExpectedPrecision)
			}
		}
		name := c.Stage + " measured"
		if !r.HasTruth {
			name = c.Stage + " matched (no truth)"
		}
		fp.Series = append(fp.Series, Series{Name: name, X: x, Y: measured, Points: true},
			Series{Name: c.Stage + " expected", X: x, Y: expected})
		prec.Series = append(prec.Series, Series{Name: c.Stage, X: x, Y: precision})
	}
	return append([]Chart{fp, prec}, out...)
}
