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
	fmt.Fprintf(&b, "universe: %d candidates (%d with more than one form: a public key, or unspent outpoints)\n", rep.Universe, rep.MultiForm)
	if rep.UniverseSource != "" {
		fmt.Fprintf(&b, "universe source: %s; every expected figure below assumes this universe\n", rep.UniverseSource)
	}
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
	if len(rep.Reloads) > 0 {
		writeReloads(&b, rep.Reloads, rep.HasTruth)
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

// writeReloads writes the estimator attack: what the observer infers
// each reload of one tweak added.
func writeReloads(b *strings.Builder, rs []privacy.ReloadEstimate, truth bool) {
	b.WriteString("\nreloads of one tweak: elements the observer estimates each added and dropped (fold of the\n" +
		"larger filter onto the smaller size when one divides the other; net change of the two estimates always)\n")
	t := newTable(b)
	fmt.Fprintln(t, "gen\tafter\theight\treason\tbytes\tnested\tadded\t± s.e.\tdropped\t± s.e.\tnet change\t± s.e.\ttrue added\ttrue dropped")
	for _, r := range rs {
		added, addErr, dropped, dropErr := notKnown, notKnown, notKnown, notKnown
		if r.Added >= 0 || r.AddedStdErr >= 0 {
			added, addErr, dropped, dropErr = num(r.Added), num(r.AddedStdErr), num(r.Dropped), num(r.DroppedStdErr)
		}
		trueAdded, trueDropped := notKnown, notKnown
		if truth && r.TrueAdded >= 0 {
			trueAdded, trueDropped = strconv.Itoa(r.TrueAdded), strconv.Itoa(r.TrueDropped)
		}
		fmt.Fprintf(t, "%d\t%d\t%d\t%s\t%d->%d\t%t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Generation, r.PrevGeneration,
			r.Height, r.Reason, r.PrevBytes, r.Bytes, r.Nested, added, addErr, dropped, dropErr,
			num(r.NetChange), num(r.NetStdErr), trueAdded, trueDropped)
	}
	_ = t.Flush() // a strings.Builder does not fail
}

// writeCurveRows writes a set stage's points. "expected" is the joint
// model's count (a range lo..hi when it is only bounded), "independent"
// the reference product of independent filters.
func writeCurveRows(w io.Writer, pts []privacy.Point, truth bool) {
	fmt.Fprintln(w, "step\theight\tevent\tfilters\tmatched\tfalse pos\texpected\tindependent\tprecision\texp prec\trecall\tentropy\texp entropy")
	for _, p := range pts {
		fp, prec, rec, ent := notKnown, notKnown, notKnown, notKnown
		if truth {
			fp, prec, rec, ent = strconv.FormatUint(p.FalsePositives, 10), num(p.Precision), num(p.Recall), num(p.Entropy)
		}
		expected := num(p.ExpectedFP)
		if p.ExpectedFPLower < p.ExpectedFP {
			expected = num(p.ExpectedFPLower) + ".." + expected
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Step, p.Height, truncate(p.Label, maxLabel),
			p.Filters, p.Matched, fp, expected, num(p.IndependentFP), prec, num(p.ExpectedPrecision), rec, ent, num(p.ExpectedEntropy))
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

// printExperiment prints an experiment's comparisons: each measurement
// with its 95 % interval, the formula's and the published figure, and the
// verdict (whether the reference lies inside the interval, or the
// relative difference when there is no interval and neither figure is
// near 0).
func printExperiment(w io.Writer, r *experiments.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Name, r.Title)
	var params []string
	for _, p := range r.Params {
		params = append(params, p.Name+"="+p.Value)
	}
	fmt.Fprintf(&b, "%s\n\n", strings.Join(params, " "))
	t := newTable(&b)
	fmt.Fprintln(t, "quantity\tmeasured\t95% interval\tformula\tpublished\tverdict\tsource / note")
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
