package experiments

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
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
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "demo: a title" || lines[1] != "seed=7 keys=10" || !strings.HasPrefix(lines[2], "verdicts: ") {
		t.Fatalf("header %q", lines[:3])
	}
	if !strings.HasPrefix(strings.Join(strings.Fields(lines[4]), " "), "quantity measured 95% interval kind formula") {
		t.Fatalf("column header %q", lines[4])
	}
	for i, want := range [][]string{
		{"rate", "0.48", "[0.379", "binomial", "0.5", "agrees with formula", "eq. 3"},
		{"count", "7", "-", "deterministic", "0.25", "Nick; alone"},
		{"m^", "saturated"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[5+i], w) {
				t.Errorf("row %d %q lacks %q", i, lines[5+i], w)
			}
		}
	}
	if !strings.Contains(b.String(), "interval kinds:") || !strings.Contains(b.String(), IntervalKinds[KindBinomial]) {
		t.Errorf("no legend of interval kinds:\n%s", b.String())
	}
	// JSON: the infinite measurement is null, and reads back as NaN.
	j, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Rows[2].Measured) || back.Rows[0].Test == nil || back.Seed != 7 {
		t.Errorf("JSON round trip: %+v", back.Rows)
	}
	// CSV: a header and a line per row with the seed.
	var c bytes.Buffer
	if err := r.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(recs) != 4 || recs[1][1] != "7" || recs[1][7] != KindBinomial {
		t.Errorf("csv %v (%v)", recs, err)
	}
}
