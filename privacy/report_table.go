package privacy

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/table"
)

// maxLabel truncates event labels in the report's tables.
const maxLabel = 48

// WriteTable writes the report as plain-text tables (what `bloomwatch
// privacy analyze` prints): the universe and the wallet, every filter as
// the adversary saw it last, the reloads of one tweak, and each stage's
// curve. Figures that need the truth show "-" without it.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "universe: %d candidates (%d with more than one form: a public key, or unspent outpoints)\n", r.Universe, r.MultiForm)
	if r.UniverseSource != "" {
		fmt.Fprintf(&b, "universe source: %s; every expected figure below assumes this universe\n", r.UniverseSource)
	}
	if r.HasTruth {
		fmt.Fprintf(&b, "wallet: %d of its candidates are in the universe\n", r.Members)
	} else {
		b.WriteString("wallet: unknown (no --truth): wallet size estimated from the filters\n")
	}
	fmt.Fprintf(&b, "transcript: %d events, %d filterloads, %d elements revealed by filteradd\n", r.Events, len(r.Filters), r.Revealed)
	if q := r.Requests; q != nil {
		fmt.Fprintf(&b, "requests: %d getdata records asked %d peer(s) for %d blocks from height %d (the birthday a peer sees)", q.Records, q.Peers, q.Blocks, q.FirstHeight)
		if q.ReAskedBlocks > 0 {
			fmt.Fprintf(&b, "; %d blocks asked again of the same peer, from heights %s (they point at the blocks that made the wallet reload)", q.ReAskedBlocks, heights(q.ReAsked))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	t := table.New(&b)
	fmt.Fprintln(t, "gen\tpeer\theight\treason\tbytes\tk\ttweak\tflags\tbits set\tm^\tfp rate\tmatched")
	for _, f := range r.Filters {
		fmt.Fprintf(t, "%d\t%s\t%d\t%s\t%d\t%d\t%#x\t%s\t%d\t%s\t%s\t%d\n", f.Generation, f.Peer, f.Height, f.Reason,
			f.Bytes, f.HashFuncs, f.Tweak, f.Flags, f.BitsSet, table.Num(f.EstElements), table.Num(f.FPRate), f.Matched)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(r.Reloads) > 0 {
		writeReloads(&b, r.Reloads, r.HasTruth)
	}
	for _, c := range r.Curves {
		fmt.Fprintf(&b, "\n%s:\n", c.Stage)
		t := table.New(&b)
		if c.Stage == StageSaturation {
			writeSaturationRows(t, c.Points)
		} else {
			writeCurveRows(t, c.Points, r.HasTruth)
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
func writeReloads(b *strings.Builder, rs []ReloadEstimate, truth bool) {
	b.WriteString("\nreloads of one tweak: elements the observer estimates each added and dropped (fold of the\n" +
		"larger filter onto the smaller size when one divides the other; net change of the two estimates always)\n")
	t := table.New(b)
	fmt.Fprintln(t, "gen\tafter\theight\treason\tbytes\tnested\tadded\t± s.e.\tdropped\t± s.e.\tnet change\t± s.e.\ttrue added\ttrue dropped")
	num, notKnown := table.Num, table.NotKnown
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
func writeCurveRows(w io.Writer, pts []Point, truth bool) {
	fmt.Fprintln(w, "step\theight\tevent\tfilters\tmatched\tfalse pos\texpected\tindependent\tprecision\texp prec\trecall\tentropy\texp entropy")
	num, notKnown := table.Num, table.NotKnown
	for _, p := range pts {
		fp, prec, rec, ent := notKnown, notKnown, notKnown, notKnown
		if truth {
			fp, prec, rec, ent = strconv.FormatUint(p.FalsePositives, 10), num(p.Precision), num(p.Recall), num(p.Entropy)
		}
		expected := num(p.ExpectedFP)
		if p.ExpectedFPLower < p.ExpectedFP {
			expected = num(p.ExpectedFPLower) + ".." + expected
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Step, p.Height, table.Truncate(p.Label, maxLabel),
			p.Filters, p.Matched, fp, expected, num(p.IndependentFP), prec, num(p.ExpectedPrecision), rec, ent, num(p.ExpectedEntropy))
	}
}

// writeSaturationRows writes the saturation points.
func writeSaturationRows(w io.Writer, pts []Point) {
	fmt.Fprintln(w, "step\theight\tpeer\tfill\tfp rate\tm^\ttx matched\ttx wallet\texpected fp set")
	num := table.Num
	for _, p := range pts {
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", p.Step, p.Height, p.Peer, num(p.Fill), num(p.FPRate),
			num(p.EstElements), p.TxMatched, p.TxWallet, num(p.ExpectedFP))
	}
}
