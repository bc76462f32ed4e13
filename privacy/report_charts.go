package privacy

import (
	"fmt"
	"strings"

	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// maxNamedEvents is the most events whose names label the X axis; a
// longer curve gets plain step numbers.
const maxNamedEvents = 12

// Charts returns the report's figures: the false-positive anonymity set
// after each event (measured, with its 95 % band, and expected, per set
// stage, on a log axis), the adversary's precision (with the truth only:
// without it precision is not known), and, with saturation, the
// server-side false-positive rate block by block. Stages whose curves are
// identical (the both-forms test on a universe without public keys, an
// intersection of one filter) are drawn once, named together; each stage
// has one colour for its markers, band and line.
func (r *Report) Charts() []Chart {
	fp := Chart{Title: "collapse curve: false-positive anonymity set after each event", XLabel: "event",
		YLabel: "false positives", LogY: true}
	if r.HasTruth {
		fp.Notes = append(fp.Notes, "markers: measured (the truth known), band: its 95 % interval (Poisson); lines: the joint model's expectation")
	} else {
		fp.YLabel = "candidates"
		fp.Notes = append(fp.Notes, "no --truth: markers are the whole matched set (the wallet's own included), lines the expected chance matches f x |A|")
	}
	var sets []Curve
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
		sets = append(sets, c)
	}
	if len(sets) == 0 {
		return out
	}
	fp.XTicks = eventTicks(sets[0].Points)
	for _, g := range groupCurves(sets, fpKey) {
		fp.Series = append(fp.Series, fpSeries(g, r.HasTruth)...)
	}
	charts := []Chart{fp}
	if r.HasTruth {
		prec := Chart{Title: "adversary precision after each event", XLabel: "event", YLabel: "precision",
			XTicks: fp.XTicks, Notes: []string{"markers: measured, band: 95 % interval (the false-positive count's Garwood interval mapped through N/(N+F), N fixed by the truth); lines: expected E[N/(N+F)]"}}
		for _, g := range groupCurves(sets, precisionKey) {
			prec.Series = append(prec.Series, precisionSeries(g)...)
		}
		charts = append(charts, prec)
	}
	return append(charts, out...)
}

// curveGroup is stages whose curves are identical in what a chart draws.
type curveGroup struct {
	name  string
	curve Curve
}

// groupCurves merges the curves whose key is equal, keeping the order
// of their first stage; a merged group is named "a = b".
func groupCurves(curves []Curve, key func(Curve) string) []curveGroup {
	var out []curveGroup
	index := map[string]int{}
	for _, c := range curves {
		k := key(c)
		if i, ok := index[k]; ok {
			out[i].name += " = " + c.Stage
			continue
		}
		index[k] = len(out)
		out = append(out, curveGroup{name: c.Stage, curve: c})
	}
	return out
}

// fpKey is what the collapse chart draws of a curve.
func fpKey(c Curve) string {
	var b strings.Builder
	for _, p := range c.Points {
		fmt.Fprintf(&b, "%d/%d/%d/%x/%x;", p.Step, p.Matched, p.FalsePositives, p.ExpectedFP, p.ExpectedFPLower)
	}
	return b.String()
}

// precisionKey is what the precision chart draws of a curve.
func precisionKey(c Curve) string {
	var b strings.Builder
	for _, p := range c.Points {
		fmt.Fprintf(&b, "%d/%d/%d/%x;", p.Step, p.TruePositives, p.FalsePositives, p.ExpectedPrecision)
	}
	return b.String()
}

// fpSeries returns one group's series of the collapse chart: the
// measured false positives with their band (or, without the truth, the
// matched set), and the expectation, in one colour.
func fpSeries(g curveGroup, truth bool) []Series {
	var x, measured, lo, hi, expected []float64
	for _, p := range g.curve.Points {
		x = append(x, float64(p.Step))
		expected = append(expected, p.ExpectedFP)
		if truth && p.FalsePositivesCI != nil {
			measured = append(measured, float64(p.FalsePositives))
			lo, hi = append(lo, p.FalsePositivesCI.Lo), append(hi, p.FalsePositivesCI.Hi)
		} else {
			measured = append(measured, float64(p.Matched))
		}
	}
	m := Series{Name: g.name + ": measured", X: x, Y: measured, Points: true, Group: g.name}
	if truth && len(lo) == len(x) {
		m.YLo, m.YHi, m.Band = lo, hi, true
	} else {
		m.Name = g.name + ": matched (wallet included)"
	}
	return []Series{m, {Name: g.name + ": expected", X: x, Y: expected, Group: g.name}}
}

// precisionSeries returns one group's precision: measured with its band,
// and expected.
func precisionSeries(g curveGroup) []Series {
	var x, y, lo, hi, expected []float64
	for _, p := range g.curve.Points {
		x = append(x, float64(p.Step))
		y, expected = append(y, p.Precision), append(expected, p.ExpectedPrecision)
		iv := stats.Interval{Lo: p.Precision, Hi: p.Precision}
		if p.PrecisionCI != nil {
			iv = *p.PrecisionCI
		}
		lo, hi = append(lo, iv.Lo), append(hi, iv.Hi)
	}
	return []Series{
		{Name: g.name + ": measured", X: x, Y: y, YLo: lo, YHi: hi, Band: true, Points: true, Group: g.name},
		{Name: g.name + ": expected", X: x, Y: expected, Group: g.name},
	}
}

// eventTicks names the events on the X axis ("2 new-key") when there are
// few enough to read, else nil (plain numbers).
func eventTicks(pts []Point) []Tick {
	if len(pts) > maxNamedEvents {
		return nil
	}
	var out []Tick
	for _, p := range pts {
		label := fmt.Sprintf("%d %s", p.Step, p.Kind)
		if reason := reasonOf(p.Label); reason != "" {
			label = fmt.Sprintf("%d %s", p.Step, reason)
		}
		out = append(out, Tick{Value: float64(p.Step), Label: label})
	}
	return out
}

// reasonOf returns the reason in an event label ("filterload peer
// (new-key)"), or "".
func reasonOf(label string) string {
	i, j := strings.Index(label, "("), strings.Index(label, ")")
	if i < 0 || j < i {
		return ""
	}
	return label[i+1 : j]
}
