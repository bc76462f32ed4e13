package experiments

import (
	"fmt"
	"io"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/table"
)

// WriteTable writes the result as a plain-text table (what `bloomwatch
// privacy experiment` prints): its name, title and parameters, then each
// comparison's measurement with its 95 % interval, the formula's and the
// published figure, the verdict (whether the reference lies inside the
// interval, or the relative difference when there is no interval and
// neither figure is near 0), and its source and note. A figure that is
// not known shows "-".
func (r *Result) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Name, r.Title)
	var params []string
	for _, p := range r.Params {
		params = append(params, p.Name+"="+p.Value)
	}
	fmt.Fprintf(&b, "%s\n\n", strings.Join(params, " "))
	t := table.New(&b)
	fmt.Fprintln(t, "quantity\tmeasured\t95% interval\tformula\tpublished\tverdict\tsource / note")
	num, notKnown := table.Num, table.NotKnown
	for _, row := range r.Rows {
		interval, formula, lit, verdict := notKnown, notKnown, notKnown, notKnown
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
		}
		note := row.Source
		if row.Note != "" {
			note = strings.TrimPrefix(note+"; "+row.Note, "; ")
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Quantity, num(row.Measured), interval, formula, lit, verdict, note)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
