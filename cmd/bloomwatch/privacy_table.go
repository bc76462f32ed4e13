package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
)

// Table layout.
const (
	tabMinWidth = 0
	tabWidth    = 2
	tabPadding  = 2
	tabPadChar  = ' '
	// maxLabel truncates event labels in tables.
	maxLabel = 48
	// sigDigits is the precision of floats in tables.
	sigDigits = 4
	notKnown  = "-"
	ellipsis  = "..."
)

// newTable returns a tab-aligned writer on w.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, tabMinWidth, tabWidth, tabPadding, tabPadChar, 0)
}

// num formats a float compactly.
func num(v float64) string { return strconv.FormatFloat(v, 'g', sigDigits, 64) }

// truncate shortens s to n runes.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-len(ellipsis)]) + ellipsis
}

// printReport prints an analysis as tables.
func printReport(w io.Writer, rep *privacy.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "universe: %d candidates (%d with a public-key form)\n", rep.Universe, rep.MultiForm)
	if rep.HasTruth {
		fmt.Fprintf(&b, "wallet: %d of its candidates are in the universe\n", rep.Members)
	} else {
		b.WriteString("wallet: unknown (no --truth): wallet size estimated from the filters\n")
	}
	fmt.Fprintf(&b, "transcript: %d events, %d filterloads, %d elements revealed by filteradd\n\n", rep.Events, len(rep.Filters), rep.Revealed)
	t := newTable(&b)
	fmt.Fprintln(t, "gen\tpeer\theight\treason\tbytes\tk\ttweak\tflags\tbits set\tm^\tfp rate\tmatched")
	for _, f := range rep.Filters {
		fmt.Fprintf(t, "%d\t%s\t%d\t%s\t%d\t%d\t%#x\t%s\t%d\t%s\t%s\t%d\n", f.Generation, f.Peer, f.Height, f.Reason,
			f.Bytes, f.HashFuncs, f.Tweak, f.Flags, f.BitsSet, num(f.EstElements), num(f.FPRate), f.Matched)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, c := range rep.Curves {
		fmt.Fprintf(&b, "\n%s:\n", c.Stage)
		t := newTable(&b)
		if c.Stage == privacy.StageSaturation {
			writeSaturationRows(t, c.Points)
		} else {
			writeCurveRows(t, c.Points, rep.HasTruth)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCurveRows writes a set stage's points.
func writeCurveRows(w io.Writer, pts []privacy.Point, truth bool) {
	fmt.Fprintln(w, "step\theight\tevent\tfilters\tmatched\tfalse pos\texpected\tprecision\texp prec\trecall\tentropy\texp entropy")
	for _, p := range pts {
		fp, prec, rec, ent := notKnown, notKnown, notKnown, notKnown
		if truth {
			fp, prec, rec, ent = strconv.FormatUint(p.FalsePositives, 10), num(p.Precision), num(p.Recall), num(p.Entropy)
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Step, p.Height, truncate(p.Label, maxLabel),
			p.Filters, p.Matched, fp, num(p.ExpectedFP), prec, num(p.ExpectedPrecision), rec, ent, num(p.ExpectedEntropy))
	}
}

// writeSaturationRows writes the saturation points.
func writeSaturationRows(w io.Writer, pts []privacy.Point) {
	fmt.Fprintln(w, "step\theight\tpeer\tfill\tfp rate\tm^\ttx matched\ttx wallet\texpected fp set")
	for _, p := range pts {
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", p.Step, p.Height, p.Peer, num(p.Fill), num(p.FPRate),
			num(p.EstElements), p.TxMatched, p.TxWallet, num(p.ExpectedFP))
	}
}

// printExperiment prints an experiment's comparisons.
func printExperiment(w io.Writer, r *experiments.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Name, r.Title)
	var params []string
	for _, p := range r.Params {
		params = append(params, p.Name+"="+p.Value)
	}
	fmt.Fprintf(&b, "%s\n\n", strings.Join(params, " "))
	t := newTable(&b)
	fmt.Fprintln(t, "quantity\tmeasured\t95% interval\tformula\tpublished\trel. diff\tsource / note")
	for _, row := range r.Rows {
		interval, formula, lit, diff := notKnown, notKnown, notKnown, notKnown
		if row.Interval != nil {
			interval = "[" + num(row.Interval[0]) + ", " + num(row.Interval[1]) + "]"
		}
		if row.Formula != nil {
			formula = num(*row.Formula)
		}
		if row.Literature != nil {
			lit = num(*row.Literature)
		}
		if row.RelDiff != nil {
			diff = fmt.Sprintf("%+.1f%%", 100**row.RelDiff)
		}
		note := row.Source
		if row.Note != "" {
			note = strings.TrimPrefix(note+"; "+row.Note, "; ")
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Quantity, num(row.Measured), interval, formula, lit, diff, note)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
