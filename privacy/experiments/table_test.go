package experiments

import (
	"strings"
	"testing"
)

// TestResultWriteTable checks the experiment table: parameters, an
// interval, "-" for what a row lacks, and a note joined to its source.
func TestResultWriteTable(t *testing.T) {
	formula, lit := 0.5, 0.25
	r := &Result{Name: "demo", Title: "a title", Params: []Param{{"keys", "10"}, {"seed", "1"}}, Rows: []Comparison{
		{Quantity: "rate", Measured: 0.4567891, Formula: &formula, Interval: &[2]float64{0.4, 0.6},
			Verdict: "formula " + VerdictInside, Source: "eq. 3", Note: "n=100"},
		{Quantity: "count", Measured: 7, Literature: &lit, Note: "alone"},
	}}
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "demo: a title" || lines[1] != "keys=10 seed=1" || lines[2] != "" {
		t.Fatalf("header %q", lines[:3])
	}
	if !strings.HasPrefix(lines[3], "quantity  measured  95% interval") {
		t.Fatalf("column header %q", lines[3])
	}
	for i, want := range [][]string{
		{"rate", "0.4568", "[0.4, 0.6]", "0.5", "formula inside the 95 % interval", "eq. 3; n=100"},
		{"count", "7", "-", "0.25", "alone"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[4+i], w) {
				t.Errorf("row %d %q lacks %q", i, lines[4+i], w)
			}
		}
	}
	if strings.Contains(lines[5], "; alone") {
		t.Errorf("a note without a source starts with a separator: %q", lines[5])
	}
}
