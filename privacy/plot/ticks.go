package plot

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
)

// Axis ticks and their labels: round numbers printed as a reader writes
// them (1e-4, 0.01, 250; never 0.00010000000000005), at most one label per
// decade on a log axis, fewer when the axis spans many.

// Number formatting.
const (
	// plainMinExp and plainMaxExp bound the powers of ten printed in
	// full (0.001 to 10000); others are printed as 1e-4, 1e5.
	plainMinExp = -3
	plainMaxExp = 4
	// plainMax is the largest magnitude printed without an exponent.
	plainMax = 1e6
	// sigDigits removes float noise before a number is printed.
	sigDigits = 12
	// decadeSlack absorbs rounding when a value sits on a decade.
	decadeSlack = 1e-9
	// minorPerDecade is 2..9 times each power of ten.
	minorPerDecade = 9
)

// cleanNumber prints v as a reader would: 0, 0.25, 250, 1e-4, 2.5e6.
func cleanNumber(v float64) string {
	if v == 0 {
		return "0" // and -0
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', sigDigits, 64), 64)
	e := math.Floor(math.Log10(math.Abs(v)) + decadeSlack)
	m, _ := strconv.ParseFloat(strconv.FormatFloat(v/math.Pow(10, e), 'g', sigDigits, 64), 64)
	if math.Abs(m) == 1 {
		if e >= plainMinExp && e <= plainMaxExp {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return fmt.Sprintf("%.0fe%d", m, int(e))
	}
	if math.Abs(v) >= math.Pow(10, plainMinExp) && math.Abs(v) < plainMax {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(m, 'f', -1, 64) + "e" + strconv.Itoa(int(e))
}

// niceStep returns the round step (1, 2, 2.5 or 5 times a power of ten)
// at or above raw.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-decadeSlack) {
			return m * mag
		}
	}
	return 10 * mag
}

// niceRange widens [lo, hi] to multiples of its tick step.
func niceRange(lo, hi float64) (float64, float64) {
	step := niceStep((hi - lo) / linearTickCount)
	return math.Floor(lo/step+decadeSlack) * step, math.Ceil(hi/step-decadeSlack) * step
}

// linearTicks labels round values of a linear axis.
type linearTicks struct{}

// Ticks implements gplot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []gplot.Tick {
	return powerLabels(consistentLabels(roundTicks(lo, hi)))
}

// roundTicks returns labelled ticks at round values in [lo, hi].
func roundTicks(lo, hi float64) []gplot.Tick {
	step := niceStep((hi - lo) / linearTickCount)
	var out []gplot.Tick
	for i := math.Ceil(lo/step - decadeSlack); i*step <= hi+step*decadeSlack; i++ {
		v := i * step
		out = append(out, gplot.Tick{Value: v, Label: cleanNumber(v)})
	}
	return out
}

// decadeTicks returns the ticks at 10^e for e in [lo, hi] (labelled every
// step-th decade, on multiples of step) and, when few decades are
// spanned, unlabelled minor ticks at 2..9 times each, within [from, to].
func decadeTicks(lo, hi int, from, to float64) []gplot.Tick {
	step := max((hi-lo+maxDecadeLabels-1)/maxDecadeLabels, 1)
	in := func(v float64) bool { return v >= from*(1-decadeSlack) && v <= to*(1+decadeSlack) }
	var out []gplot.Tick
	for e := lo; e <= hi; e++ {
		v := math.Pow(10, float64(e))
		if in(v) {
			t := gplot.Tick{Value: v}
			if ((e%step)+step)%step == 0 {
				t.Label = cleanNumber(v)
			}
			out = append(out, t)
		}
		if hi-lo <= minorDecades {
			for m := 2; m <= minorPerDecade; m++ {
				if mv := float64(m) * v; in(mv) {
					out = append(out, gplot.Tick{Value: mv})
				}
			}
		}
	}
	return out
}

// logTicks marks the decades of a log axis; an axis within less than a
// decade gets round values instead, so it is never left without labels.
type logTicks struct{}

// Ticks implements gplot.Ticker.
func (logTicks) Ticks(min, max float64) []gplot.Tick {
	lo := int(math.Ceil(math.Log10(min) - decadeSlack))
	hi := int(math.Floor(math.Log10(max) + decadeSlack))
	ticks := decadeTicks(lo, hi, min, max)
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled >= 2 {
		return powerLabels(consistentLabels(ticks))
	}
	return powerLabels(consistentLabels(roundTicks(min, max)))
}

// consistentLabels prints every label of an axis alike: when one needs a
// power of ten (1e-4), all do (1e-2, 1e0, 1e2), never 100 beside 1e-4.
func consistentLabels(ticks []gplot.Tick) []gplot.Tick {
	exp := false
	for _, t := range ticks {
		if strings.Contains(t.Label, "e") {
			exp = true
		}
	}
	if !exp {
		return ticks
	}
	for i, t := range ticks {
		if t.Label == "" || t.Value == 0 {
			continue
		}
		ticks[i].Label = expNumber(t.Value)
	}
	return ticks
}

// expNumber prints v as a power-of-ten number: 1e-4, 2.5e3, 1e0.
func expNumber(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', sigDigits, 64), 64)
	e := math.Floor(math.Log10(math.Abs(v)) + decadeSlack)
	m, _ := strconv.ParseFloat(strconv.FormatFloat(v/math.Pow(10, e), 'g', sigDigits, 64), 64)
	return strconv.FormatFloat(m, 'f', -1, 64) + "e" + strconv.Itoa(int(e))
}
