package experiments

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/table"
)

// WriteTable writes the result as a plain-text table (what `bloomwatch
// privacy experiment` prints): its name, title, seed and parameters, how
// the verdicts were decided, then each row's measurement with its 95 %
// interval and the interval's kind, the formula's and the published
// figure, the verdict, and its source and note; then a legend of the
// interval kinds used. A figure that is not known shows "-".
func (r *Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Name, r.Title)
	var params []string
	for _, p := range r.Params {
		params = append(params, p.Name+"="+p.Value)
	}
	fmt.Fprintf(&b, "seed=%d %s\n", r.Seed, strings.Join(params, " "))
	fmt.Fprintf(&b, "%s\n\n", r.Verdicts.describe())
	t := table.New(&b)
	fmt.Fprintln(t, "quantity\tmeasured\t95% interval\tkind\tformula\tpublished\tverdict\tsource / note")
	num, notKnown := table.Num, table.NotKnown
	var kinds []string
	for _, row := range r.Rows {
		measured, interval, formula, lit, verdict := num(row.Measured), notKnown, notKnown, notKnown, notKnown
		if row.Display != "" {
			measured = row.Display
		}
		if row.Interval != nil {
			interval = "[" + num(row.Interval[0]) + ", " + num(row.Interval[1]) + "]"
		}
		if row.Formula != nil {
			formula = num(*row.Formula)
		}
		if row.Literature != nil {
			lit = num(*row.Literature)
		}
		if row.Verdict != "" {
			verdict = row.Verdict
		} else if row.RelDiff != nil {
			verdict = fmt.Sprintf("%+.1f%% (computed vs reference, no test)", 100**row.RelDiff)
			if math.Abs(*row.RelDiff) > 10 {
				verdict = fmt.Sprintf("%.3gx the reference (computed, no test)", 1+*row.RelDiff)
			}
		}
		note := strings.TrimPrefix(row.Source+"; "+row.Note, "; ")
		note = strings.TrimSuffix(note, "; ")
		kind := row.IntervalKind
		if kind == "" {
			kind = notKnown
		} else if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Quantity, measured, interval, kind, formula, lit, verdict, note)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	b.WriteString("\ninterval kinds:\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "  %-18s %s\n", k, IntervalKinds[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe states the verdict policy in one line.
func (v VerdictPolicy) describe() string {
	return fmt.Sprintf("verdicts: two-sided exact or bootstrap tests of measured = reference, %s-corrected over the %d printed "+
		"(family-wise alpha %g); of %d rows that asked for one, a verdict is printed only where the test's power against "+
		"the row's alternative is at least %g at alpha/%d (%d rows reach that power at alpha)", v.Correction, v.Printed, v.FamilyAlpha,
		v.Candidates, v.MinPower, max(1, v.Screened), v.Screened)
}

// csvHeader names WriteCSV's columns.
var csvHeader = []string{"experiment", "seed", "quantity", "measured", "display", "interval_lo", "interval_hi", "interval_kind",
	"formula", "published", "source", "test_against", "p", "p_holm", "alternative", "power", "verdict", "note"}

// WriteCSV writes the rows as CSV, one line per row after a header, the
// experiment's name and seed on each; empty cells for what a row lacks.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, floatBits)
	}
	fp := func(v *float64) string {
		if v == nil {
			return ""
		}
		return f(*v)
	}
	for _, row := range r.Rows {
		lo, hi := "", ""
		if row.Interval != nil {
			lo, hi = f(row.Interval[0]), f(row.Interval[1])
		}
		against, p, pHolm, alt, power := "", "", "", "", ""
		if t := row.Test; t != nil {
			against, p, pHolm, alt, power = t.Against, f(t.P), fp(t.PHolm), t.Alternative, f(t.Power)
		}
		rec := []string{r.Name, strconv.FormatUint(r.Seed, 10), row.Quantity, f(row.Measured), row.Display, lo, hi, row.IntervalKind,
			fp(row.Formula), fp(row.Literature), row.Source, against, p, pHolm, alt, power, row.Verdict, row.Note}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
