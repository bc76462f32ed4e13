package experiments

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"github.com/stretchr/testify/require"
	"math"
	"strings"
	"testing"
)

// TestResultWriteTable checks the experiment table: seed and parameters,
// the verdict policy, an interval with its kind, "-" for what a row
// lacks, a saturated measurement shown as such, a note joined to its
// source, and the legend of interval kinds.
func TestResultWriteTable(t *testing.T) {
	r := &Result{Name: "demo", Title: "a title", Seed: 7, Params: []Param{{"keys", "10"}}, Rows: []Comparison{
		binomialRow("rate", 48, 100).withFormula(0.5).withSource("eq. 3").test(altShift(0.3)),
		deterministicRow("count", 7).withPublished(0.25, "Nick").withNote("alone"),
		{Quantity: "m^", Measured: math.Inf(1), Display: "saturated", IntervalKind: KindDeterministic},
	}}
	r.finish()
	var b strings.Builder
	require.NoError(t, r.WriteTable(&b))
	lines := strings.Split(b.String(), "\n")
	require.Equal(t, "demo: a title", lines[0], "header %q", lines[:3])
	require.Equal(t, "seed=7 keys=10", lines[1], "header %q", lines[:3])
	require.True(t, strings.HasPrefix(lines[2], "verdicts: "), "header %q", lines[:3])
	require.True(t, strings.HasPrefix(strings.Join(strings.Fields(lines[4]), " "), "quantity measured 95% interval kind formula"), "column header %q", lines[4])
	for i, want := range [][]string{
		{"rate", "0.48", "[0.379", "binomial", "0.5", "agrees with formula", "eq. 3"},
		{"count", "7", "-", "deterministic", "0.25", "Nick; alone"},
		{"m^", "saturated"},
	} {
		for _, w := range want {
			require.Contains(t, lines[5+i], w, "row %d %q lacks %q", i, lines[5+i], w)
		}
	}
	require.Contains(t, b.String(), "interval kinds:", "no legend of interval kinds:\n%s", b.String())
	require.Contains(t, b.String(), IntervalKinds[KindBinomial], "no legend of interval kinds:\n%s", b.String())
	// JSON: the infinite measurement is null, and reads back as NaN.
	j, err := json.Marshal(r)
	require.NoError(t, err)
	var back Result
	require.NoError(t, json.Unmarshal(j, &back))
	require.True(t, math.IsNaN(back.Rows[2].Measured), "JSON round trip: %+v", back.Rows)
	require.NotNil(t, back.Rows[0].Test, "JSON round trip: %+v", back.Rows)
	require.Equal(t, uint64(7), back.Seed, "JSON round trip: %+v", back.Rows)
	// CSV: a header and a line per row with the seed.
	var c bytes.Buffer
	require.NoError(t, r.WriteCSV(&c))
	recs, err := csv.NewReader(&c).ReadAll()
	require.NoError(t, err, "csv %v (%v)", recs, err)
	require.Len(t, recs, 4, "csv %v (%v)", recs, err)
	require.Equal(t, "7", recs[1][1], "csv %v (%v)", recs, err)
	require.Equal(t, KindBinomial, recs[1][7], "csv %v (%v)", recs, err)
}
