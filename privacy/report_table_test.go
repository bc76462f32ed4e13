package privacy

import (
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/stretchr/testify/require"
)

// TestReportWriteTable checks the text report: the header lines with and
// without the truth, the filter table, the reloads, a bounded expected
// count, a truncated label, and the saturation stage's own columns.
func TestReportWriteTable(t *testing.T) {
	rep := &Report{
		Universe: 1000, MultiForm: 10, UniverseSource: "synthetic, seed 1", Events: 3, Revealed: 1,
		Filters: []FilterSummary{{Generation: 0, Seq: 7, Peer: "127.0.0.1:1", Height: 7, Bytes: 64, HashFuncs: 5, Tweak: 0x2a,
			Flags: "all", BitsSet: 100, EstElements: 20.5, FPRate: 0.001234567, Matched: 12}},
		Reloads: []replay.ReloadEstimate{{Generation: 1, PrevGeneration: 0, Seq: 12, PrevSeq: 7, Height: 9, PrevBytes: 64, Bytes: 128,
			Added: -1, AddedStdErr: -1, NetChange: 3, NetStdErr: 1.5, TrueAdded: 2, TrueDropped: 0}},
		Curves: []Curve{
			{Stage: StageSingle, Points: []Point{{Step: 1, Height: 7, Label: strings.Repeat("x", 60), Filters: 1, Matched: 12,
				FalsePositives: 9, ExpectedFP: 10, ExpectedFPLower: 8, IndependentFP: 10, Precision: 0.25}}},
			{Stage: StageSaturation, Points: []Point{{Step: 1, Height: 8, Peer: "p", Fill: 0.5, FPRate: 0.03, TxMatched: 4, TxWallet: 1}}},
		},
	}
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	out := b.String()
	for _, want := range []string{
		"universe: 1000 candidates (10 with more than one form",
		"universe source: synthetic, seed 1; every expected figure",
		"wallet: unknown (no --truth)",
		"transcript: 3 events, 1 filterloads, 1 elements revealed by filteradd",
		"0x2a", "20.5", "0.001235",
		"64->128",
		// a filter is named by its transcript record number, as the
		// dashboard and the log name it (the table said "gen 0")
		"\n#7 ", "\n#12 ", " #7 ",
		strings.Repeat("x", 45) + "...",
		"8..10",
		"\nsaturation:\n", "expected fp set",
	} {
		require.Contains(t, out, want, "missing %q in:\n%s", want, out)
	}
	// Without the truth, no measured column: the note says what to pass.
	header := func(out string) string {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "step") && strings.Contains(line, "event") {
				return strings.Join(strings.Fields(line), " ")
			}
		}
		return ""
	}
	require.NotContains(t, out, "\t", "tabs or a measured column without the truth:\n%s", out)
	require.Equal(t, "step height event filters matched expected fp independent", header(out), "tabs or a measured column without the truth:\n%s", out)
	require.Contains(t, out, "export-truth", "no note on the truth or the intervals:\n%s", out)
	require.Contains(t, out, "95 % intervals", "no note on the truth or the intervals:\n%s", out)
	// With it, the measured columns are filled, with their intervals.
	falsePos := func(out string) string {
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 7 && strings.HasSuffix(f[2], "...") {
				return strings.Join(f[5:8], " ")
			}
		}
		return ""
	}
	rep.HasTruth, rep.Members = true, 5
	p := &rep.Curves[0].Points[0]
	p.score(5, true)
	b.Reset()
	require.NoError(t, rep.WriteTable(&b))
	out = b.String()
	require.Contains(t, out, "wallet: 5 of its candidates are in the universe", "with the truth (%q):\n%s", falsePos(out), out)
	require.Equal(t, "9 [4.115, 17.08]", falsePos(out), "with the truth (%q):\n%s", falsePos(out), out)
}

// TestReportWriteTableCapsRows checks that a curve with a row per block
// (255, as privacy analyze --btcd-rpc printed on the demo's chain) prints
// DefaultTableRows rows: the first ones, how many more, and the last; and
// every row with no cap.
func TestReportWriteTableCapsRows(t *testing.T) {
	var pts []Point
	for i := range 255 {
		pts = append(pts, Point{Step: i + 1, Height: int32(100 + i), Peer: "p", Fill: 0.5, FPRate: 0.03})
	}
	rep := &Report{Universe: 10, Curves: []Curve{{Stage: StageSaturation, Points: pts}}}
	var capped, full strings.Builder
	require.NoError(t, rep.WriteTable(&capped))
	require.NoError(t, rep.WriteTableRows(&full, 0))
	c, f := capped.String(), full.String()
	require.Contains(t, c, "... 235 more rows (--full-table prints them; --csv writes every point)", "capped table:\n%s", c)
	lines := func(s string) int { return strings.Count(s, "\n") }
	require.Equal(t, 234, lines(f)-lines(c), "the full table has %d lines, the capped one %d: want 235 rows fewer and one line more", lines(f), lines(c))
	require.Contains(t, c, "\n255 ", "want rows 1-19 and the last (255):\n%s", c)
	require.Contains(t, c, "\n19 ", "want rows 1-19 and the last (255):\n%s", c)
	require.NotContains(t, c, "\n20 ", "want rows 1-19 and the last (255):\n%s", c)
}
