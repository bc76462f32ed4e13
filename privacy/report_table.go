package privacy

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/table"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/onpath"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
)

// maxLabel truncates event labels in the report's tables.
const maxLabel = 48

// DefaultTableRows is how many rows of each table WriteTable prints: a
// curve over a real chain has a row per block (hundreds), which the CSV
// holds in full.
const DefaultTableRows = 20

// WriteTable writes the report as plain-text tables (what `bloomwatch
// privacy analyze` prints): the universe and the wallet, every filter as
// the adversary saw it last, the reloads of one tweak, and each stage's
// curve. Figures that need the truth show "-" without it. A filter is
// named by its filterload's transcript record number ("#183"), as the
// dashboard, the log and transcript.jsonl name it. Each table shows at
// most DefaultTableRows rows (WriteTableRows).
func (r *Report) WriteTable(w io.Writer) error {
	return r.WriteTableRows(w, DefaultTableRows)
}

// WriteTableRows is WriteTable with at most maxRows rows per table (every
// row when maxRows <= 0): the first maxRows-1, a line saying how many
// more there are, and the last (a curve's final state).
func (r *Report) WriteTableRows(w io.Writer, maxRows int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "universe: %d candidates (%d with more than one form: a public key, or unspent outpoints)\n", r.Universe, r.MultiForm)
	if r.UniverseSource != "" {
		fmt.Fprintf(&b, "universe source: %s; every expected figure below assumes this universe\n", r.UniverseSource)
	}
	if r.HasTruth {
		fmt.Fprintf(&b, "wallet: %d of its candidates are in the universe (N, from --truth)\n", r.Members)
	} else {
		b.WriteString(NoTruthNote + "\n")
	}
	fmt.Fprintf(&b, "transcript: %d events, %d filterloads, %d elements revealed by filteradd\n", r.Events, len(r.Filters), r.Revealed)
	if q := r.Requests; q != nil {
		fmt.Fprintf(&b, "requests: %d getdata records asked %d peer(s) for %d blocks from height %d (the birthday a peer sees)", q.Records, q.Peers, q.Blocks, q.FirstHeight)
		if q.ReAskedBlocks > 0 {
			fmt.Fprintf(&b, "; %d blocks asked again of the same peer, from heights %s (they point at the blocks that made the wallet reload)", q.ReAskedBlocks, heights(q.ReAsked))
		}
		b.WriteString("\n")
	}
	writeOnPath(&b, r.OnPath)
	if r.HasTruth {
		b.WriteString(IntervalsNote + "\n\n")
	} else {
		b.WriteString(IntervalsNoteNoTruth + "\n\n")
	}
	t := table.New(&b)
	c := capRows(t, maxRows)
	fmt.Fprintln(c, "filter\tpeer\theight\treason\tbytes\tk\ttweak\tflags\tbits set\tm^\t95 % (normal)\tfp rate\tmatched")
	for _, f := range r.Filters {
		fmt.Fprintf(c, "#%d\t%s\t%d\t%s\t%d\t%d\t%#x\t%s\t%d\t%s\t%s\t%s\t%d\n", f.Seq, f.Peer, f.Height, f.Reason,
			f.Bytes, f.HashFuncs, f.Tweak, f.Flags, f.BitsSet, table.Num(f.EstElements), interval(f.EstElementsCI), table.Num(f.FPRate), f.Matched)
	}
	c.finish()
	if err := t.Flush(); err != nil {
		return err
	}
	if len(r.Reloads) > 0 {
		writeReloads(&b, r.Reloads, r.HasTruth, maxRows)
	}
	for _, c := range r.Curves {
		fmt.Fprintf(&b, "\n%s:\n", c.Stage)
		t := table.New(&b)
		rows := capRows(t, maxRows)
		if c.Stage == StageSaturation {
			writeSaturationRows(rows, c.Points, r.HasTruth)
		} else {
			writeCurveRows(rows, c.Points, r.HasTruth)
		}
		rows.finish()
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if r.Behaviour != nil {
		behaviour.WriteReport(&b, r.Behaviour)
	}
	if v := r.Verdicts; v.Candidates > 0 {
		fmt.Fprintf(&b, "\nverdicts: %d tests asked, %d with the power to fail; %s over those %d at a family-wise %g: %d rejected\n",
			v.Candidates, v.Printed, v.Correction, v.Printed, v.FamilyAlpha, v.Rejected)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Notes the text report prints.
const (
	// NoTruthNote replaces the wallet line without the truth: what is
	// not printed, why, and what to pass.
	NoTruthNote = "wallet: unknown (no --truth): precision, recall and entropy need the wallet's elements and are not printed;\n" +
		"  pass --truth FILE (bloomwatch wallet export-truth --datadir D --out FILE writes it). The expected false\n" +
		"  positives below are f x |A|, every candidate's chance match: the wallet's own are not subtracted."
	// IntervalsNote says what the intervals are.
	IntervalsNote = "95 % intervals, each column naming its method: false positives F Poisson (Garwood); precision N/(N+F)\n" +
		"and entropy log2 C(N+F, N) at the ends of F's interval (N is fixed by --truth, only F is random); recall has\n" +
		"none (certain: a Bloom filter has no false negatives); m^ and reload estimates normal (1.96 s.e.). Matched counts\n" +
		"cover the whole universe and expected counts are the model's: neither has an interval. \"verdict\" compares the\n" +
		"expected count with the measured one (exact Poisson test); every verdict of the run, behaviour scores included,\n" +
		"is one family, Holm-corrected to a family-wise 5 % (p shown adjusted), and printed only where it has at least\n" +
		"50 % power against a model wrong by a factor of 2 at the family's Bonferroni level (\"no verdict\" elsewhere)."
	// IntervalsNoteNoTruth is IntervalsNote for a report without the
	// truth, which measures no false positive.
	IntervalsNoteNoTruth = "95 % intervals: m^ and reload estimates normal (1.96 s.e.). Matched counts cover the whole\n" +
		"universe and expected counts are the model's: neither has an interval."
)

// interval formats a 95 % interval as [lo, hi], or "-" for none.
func interval(iv *stats.Interval) string {
	if iv == nil {
		return table.NotKnown
	}
	return "[" + table.Num(iv.Lo) + ", " + table.Num(iv.Hi) + "]"
}

// writeReloads writes the estimator attack: what the observer infers
// each reload of one tweak added.
func writeReloads(b *strings.Builder, rs []replay.ReloadEstimate, truth bool, maxRows int) {
	b.WriteString("\nreloads of one tweak: elements the observer estimates each added and dropped (fold of the\n" +
		"larger filter onto the smaller size when one divides the other; net change of the two estimates always)\n")
	tw := table.New(b)
	t := capRows(tw, maxRows)
	fmt.Fprintln(t, "filter\tafter\theight\treason\tbytes\tnested\tadded\t95 % (normal)\tdropped\t95 % (normal)\tnet change\t95 % (normal)\ttrue added\ttrue dropped")
	num, notKnown := table.Num, table.NotKnown
	for _, r := range rs {
		added, dropped := notKnown, notKnown
		if r.Added >= 0 || r.AddedStdErr >= 0 {
			added, dropped = num(r.Added), num(r.Dropped)
		}
		net := notKnown
		if r.NetStdErr >= 0 {
			net = num(r.NetChange)
		}
		trueAdded, trueDropped := notKnown, notKnown
		if truth && r.TrueAdded >= 0 {
			trueAdded, trueDropped = strconv.Itoa(r.TrueAdded), strconv.Itoa(r.TrueDropped)
		}
		fmt.Fprintf(t, "#%d\t#%d\t%d\t%s\t%d->%d\t%t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.PrevSeq,
			r.Height, r.Reason, r.PrevBytes, r.Bytes, r.Nested, added, interval(r.AddedCI), dropped, interval(r.DroppedCI),
			net, interval(r.NetChangeCI), trueAdded, trueDropped)
	}
	t.finish()
	_ = tw.Flush() // a strings.Builder does not fail
}

// rowCapper passes a table's header and at most max rows to w: the first
// max-1, then at finish a line counting the rows left out and the last
// row. It takes whole lines; max <= 0 passes every row.
type rowCapper struct {
	w       io.Writer
	max     int
	rows    int // rows seen, the header not counted
	header  bool
	last    []byte
	partial []byte
}

// capRows returns a rowCapper writing to w.
func capRows(w io.Writer, max int) *rowCapper { return &rowCapper{w: w, max: max} }

// Write implements io.Writer.
func (c *rowCapper) Write(p []byte) (int, error) {
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := append([]byte(nil), c.partial[:i+1]...)
		c.partial = c.partial[i+1:]
		switch {
		case !c.header:
			c.header = true
			_, _ = c.w.Write(line)
		case c.max <= 0 || c.rows < c.max-1:
			c.rows++
			_, _ = c.w.Write(line)
		default:
			c.rows++
			c.last = line
		}
	}
}

// finish writes what the cap left out: the count and the last row.
func (c *rowCapper) finish() {
	if c.last == nil {
		return
	}
	hidden := c.rows - c.max
	if hidden > 0 {
		fmt.Fprintf(c.w, "... %d more rows (--full-table prints them; --csv writes every point)\n", hidden)
	}
	_, _ = c.w.Write(c.last)
}

// writeCurveRows writes a set stage's points. "expected" is the joint
// model's count (a range lo..hi when it is only bounded), "independent"
// the reference product of independent filters. The measured columns,
// with their intervals, and the expected precision and entropy come
// with the truth only.
func writeCurveRows(w io.Writer, pts []Point, truth bool) {
	num, notKnown := table.Num, table.NotKnown
	if !truth {
		fmt.Fprintln(w, "step\theight\tevent\tfilters\tmatched\texpected fp\tindependent")
		for _, p := range pts {
			fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%d\t%s\t%s\n", p.Step, p.Height, table.Truncate(p.Label, maxLabel),
				p.Filters, p.Matched, expectedText(p), num(p.IndependentFP))
		}
		return
	}
	fmt.Fprintln(w, "step\theight\tevent\tfilters\tmatched\tfalse pos\t95 % (Garwood)\texpected\tverdict (Holm p)\tindependent\tprecision\t95 % (F mapped)\texp prec\trecall\tentropy\t95 % (F mapped)\texp entropy")
	for _, p := range pts {
		fp, prec, expPrec, rec, ent, expEnt := notKnown, notKnown, notKnown, notKnown, notKnown, notKnown
		if p.Scored {
			fp, prec, expPrec = strconv.FormatUint(p.FalsePositives, 10), num(p.Precision), num(p.ExpectedPrecision)
			rec, ent, expEnt = num(p.Recall)+" (certain)", num(p.Entropy), num(p.ExpectedEntropy)
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Step, p.Height,
			table.Truncate(p.Label, maxLabel), p.Filters, p.Matched, fp, interval(p.FalsePositivesCI), expectedText(p), verdictText(p),
			num(p.IndependentFP), prec, interval(p.PrecisionCI), expPrec, rec, ent, interval(p.EntropyCI), expEnt)
	}
}

// verdictText is a point's comparison: "inside" or "OUTSIDE" with its
// Holm-adjusted p-value, "no verdict" without the power to fail, "-"
// where none is asked.
func verdictText(p Point) string {
	switch p.Comparison {
	case stats.ComparisonInside:
		return "inside (" + fmtP(*p.ComparisonPHolm) + ")"
	case stats.ComparisonOutside:
		return "OUTSIDE (" + fmtP(*p.ComparisonPHolm) + ")"
	case stats.ComparisonNoVerdict:
		return stats.ComparisonNoVerdict
	}
	return table.NotKnown
}

// fmtP formats a p-value.
func fmtP(p float64) string {
	switch {
	case p >= 0.01:
		return fmt.Sprintf("%.2f", p)
	case p >= 1e-4:
		return fmt.Sprintf("%.1g", p)
	}
	return "< 1e-4"
}

// expectedText is a point's expected count, or its range lo..hi when
// the model only bounds it.
func expectedText(p Point) string {
	if p.ExpectedFPLower < p.ExpectedFP {
		return table.Num(p.ExpectedFPLower) + ".." + table.Num(p.ExpectedFP)
	}
	return table.Num(p.ExpectedFP)
}

// writeSaturationRows writes the saturation points: the server's copy of
// the filter block by block (fill, rate and m^ with its interval, counts
// of the replay: deterministic), the wallet's transactions with the
// truth only.
func writeSaturationRows(w io.Writer, pts []Point, truth bool) {
	fmt.Fprintln(w, "step\theight\tpeer\tfill\tfp rate\tm^\t95 % (normal)\ttx matched\ttx wallet\texpected fp set")
	num := table.Num
	for _, p := range pts {
		wallet := table.NotKnown
		if truth && p.Scored {
			wallet = strconv.FormatUint(p.TxWallet, 10)
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Step, p.Height, p.Peer, num(p.Fill), num(p.FPRate),
			num(p.EstElements), interval(p.EstElementsCI), p.TxMatched, wallet, num(p.ExpectedFP))
	}
}

// writeOnPath writes the report's on-path line: what an observer on the
// path read, beside the peers' figures the report's tables give.
func writeOnPath(b *strings.Builder, op *onpath.Reading) {
	if op == nil || op.Loads == 0 {
		return
	}
	switch {
	case op.Clear == op.Loads:
		fmt.Fprintf(b, "on-path observer: read all %d filterloads (v1, plaintext): it learns what the peers together learn (the curves below)\n", op.Loads)
	case op.Clear > 0:
		fmt.Fprintf(b, "on-path observer: read %d of %d filterloads (v1); %s expected false positives left by those alone; the %d sent over v2 showed only their sizes\n",
			op.Clear, op.Loads, strconv.FormatFloat(op.ExpectedFP, 'g', 4, 64), op.Encrypted)
	default:
		fmt.Fprintf(b, "on-path observer: all %d filterloads went over v2 (BIP324): it read none, only sizes", op.Loads)
		if op.MinElements >= 0 {
			hi := strconv.Itoa(op.MaxElements)
			if op.MaxElements >= 1<<31-1 {
				hi = "any"
			}
			fmt.Fprintf(b, "; the last one's %d-byte burst gives a wallet of %d to %s elements", op.Wire, op.MinElements, hi)
		}
		b.WriteString("; the getdata sizes show it the block counts the peers see\n")
	}
}
