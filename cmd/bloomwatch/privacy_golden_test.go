package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/session"
)

// The demo's figures docs/PRIVACY-MODEL.md quotes come from a golden
// file that TestPrivacyModelOnDemoTranscript re-measures (a fresh demo
// and `privacy analyze` on it: counts the demo fixes exactly, counts a
// filter's random tweak moves within their Poisson range) and that
// TestPrivacyModelDocFigures renders into the doc's text: a number in the
// doc that drifts from the golden file, or a golden file that drifts from
// the code, fails a test. BLOOMWATCH_UPDATE_GOLDEN=1 rewrites the golden
// file from the run (then the doc test says what to paste).

// demoGoldenPath is the golden file of the demo's figures.
const demoGoldenPath = "testdata/golden/privacy-model-demo.json"

// demoStage is one stage's last point on the demo's transcript.
type demoStage struct {
	Filters           int     `json:"filters"`
	FalsePositives    uint64  `json:"false_positives"`
	FPLo              float64 `json:"false_positives_lo"`
	FPHi              float64 `json:"false_positives_hi"`
	ExpectedFP        float64 `json:"expected_fp"`
	Comparison        string  `json:"comparison"`
	Precision         float64 `json:"precision"`
	PrecisionLo       float64 `json:"precision_lo"`
	PrecisionHi       float64 `json:"precision_hi"`
	ExpectedPrecision float64 `json:"expected_precision"`
}

// demoGolden is what the doc quotes of one demo run.
type demoGolden struct {
	Used        int       `json:"used"`
	Watched     int       `json:"watched"`
	Elements    int       `json:"elements"`
	Decoys      int       `json:"decoys"`
	EstElements float64   `json:"est_elements"`
	Filterloads int       `json:"filterloads"`
	Distinct    int       `json:"distinct_filters"`
	Universe    uint64    `json:"universe"`
	Single      demoStage `json:"single"`
	Inter       demoStage `json:"intersection"`
}

// demoFigures collects them from the demo's summary and the analysis of
// its transcript with its truth against demoUniverse synthetic
// candidates.
func demoFigures(sum session.Summary, rep *privacy.Report) demoGolden {
	stage := func(name string) demoStage {
		c := rep.Curve(name)
		p := c.Points[len(c.Points)-1]
		return demoStage{Filters: p.Filters, FalsePositives: p.FalsePositives, FPLo: p.FalsePositivesCI.Lo, FPHi: p.FalsePositivesCI.Hi,
			ExpectedFP: p.ExpectedFP, Comparison: p.Comparison, Precision: p.Precision, PrecisionLo: p.PrecisionCI.Lo,
			PrecisionHi: p.PrecisionCI.Hi, ExpectedPrecision: p.ExpectedPrecision}
	}
	pr := sum.Privacy
	return demoGolden{Used: pr.Members, Watched: pr.Watched, Elements: pr.Elements, Decoys: pr.Decoys,
		EstElements: pr.EstElements, Filterloads: len(rep.Filters), Distinct: pr.Filters, Universe: rep.Universe,
		Single: stage(privacy.StageSingle), Inter: stage(privacy.StageIntersection)}
}

// readDemoGolden reads the golden file.
func readDemoGolden(t *testing.T) demoGolden {
	t.Helper()
	raw, err := os.ReadFile(demoGoldenPath)
	require.NoError(t, err)
	var g demoGolden
	require.NoError(t, json.Unmarshal(raw, &g))
	return g
}

// checkDemoGolden compares a fresh demo's figures with the golden file:
// what the demo fixes exactly (wallet counts, filterloads, universe), the
// filter's elements within 10 (its unspent outpoints), the
// filter's element estimate within 50 (4.4 sd of two runs' difference), each
// stage's expected false positives within 10 % (the tweak moves the bits
// a little) and its measured count inside the 99.9 % Poisson range of the
// golden expectation, and the verdicts alike.
func checkDemoGolden(t *testing.T, sum session.Summary, rep *privacy.Report) {
	t.Helper()
	got := demoFigures(sum, rep)
	if os.Getenv("BLOOMWATCH_UPDATE_GOLDEN") != "" {
		raw, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(demoGoldenPath), 0o755))
		require.NoError(t, os.WriteFile(demoGoldenPath, append(raw, '\n'), 0o644))
		return
	}
	want := readDemoGolden(t)
	require.Equal(t, []int{want.Used, want.Watched, want.Decoys, want.Filterloads, want.Distinct},
		[]int{got.Used, got.Watched, got.Decoys, got.Filterloads, got.Distinct}, "used, watched, decoys, filterloads, distinct filters")
	// The filter's elements are the watched scripts and the unspent
	// outpoints of the filter last loaded, which depend on which
	// transactions that load had applied.
	require.InDelta(t, want.Elements, got.Elements, 10, "filter elements")
	require.Equal(t, want.Universe, got.Universe)
	// m^'s standard error at this fill is about 8 elements: two runs
	// differ by about 11 (sd), and 50 is 4.4 of those.
	require.InDelta(t, want.EstElements, got.EstElements, 50, "m^ of the latest filter")
	for _, st := range []struct {
		name      string
		want, got demoStage
	}{{"single", want.Single, got.Single}, {"intersection", want.Inter, got.Inter}} {
		require.Equal(t, st.want.Filters, st.got.Filters, st.name)
		require.InEpsilon(t, st.want.ExpectedFP, st.got.ExpectedFP, 0.10, "%s: expected false positives", st.name)
		lo, hi := stats.PoissonRange(st.want.ExpectedFP, 0.999)
		require.Truef(t, st.got.FalsePositives >= lo && st.got.FalsePositives <= hi, "%s: %d false positives, golden expectation %.1f (99.9 %% range %d-%d)",
			st.name, st.got.FalsePositives, st.want.ExpectedFP, lo, hi)
		require.Equal(t, st.want.Comparison, st.got.Comparison, st.name)
	}
}

// demoDocText is the passage of docs/PRIVACY-MODEL.md that quotes the
// golden file, rendered from it.
const demoDocText = `On the demo's transcript (one run, ` + "`bloomwatch demo --until-synced --datadir D`" + `, then
` + "`bloomwatch wallet export-truth --datadir D --out T`" + ` and ` + "`bloomwatch privacy analyze --transcript\nD/spv/transcript.jsonl --synthetic 1000000 --truth T`" + `; the figures are in
` + "`cmd/bloomwatch/" + demoGoldenPath + "`" + `, which ` + "`go test ./cmd/bloomwatch -run\nTestPrivacyModelOnDemoTranscript`" + ` re-measures on a fresh demo), with ` + "`N`" + ` = {{.Used}}: the latest filter
alone left {{n .Single.FalsePositives}} false positives, interval [{{n .Single.FPLo}}, {{n .Single.FPHi}}], {{n .Single.ExpectedFP}} expected ({{.Single.Comparison}}),
precision {{p .Single.Precision}} [{{p .Single.PrecisionLo}}, {{p .Single.PrecisionHi}}] ({{p .Single.ExpectedPrecision}} expected); the intersection of its {{.Inter.Filters}}
distinct filters left {{n .Inter.FalsePositives}} [{{n .Inter.FPLo}}, {{n .Inter.FPHi}}], {{n .Inter.ExpectedFP}} expected ({{.Inter.Comparison}}), precision {{p .Inter.Precision}}
[{{p .Inter.PrecisionLo}}, {{p .Inter.PrecisionHi}}] ({{p .Inter.ExpectedPrecision}} expected). The wallet watches {{n .Watched}} addresses ({{.Used}} used),
its filter holds {{n .Elements}} elements, and an observer estimates {{n .EstElements}} from the filter alone
(` + "`m^`" + `); the {{.Filterloads}} filterloads carry {{.Distinct}} distinct filters.`

// demoTableText is the doc's table of the demo wallet's counts, rendered
// from the golden file.
const demoTableText = `| count | demo wallet (golden file, below) | what it is for |
|---|---|---|
| used addresses (on chain) | {{.Used}} | ` + "`N`: subtracted from `|A|`, and the precision's numerator and entropy's `N`" + ` |
| watched addresses (derived, gap included) | {{n .Watched}} | in the filter, on no chain until paid: no observer can find an unused one |
| filter elements (one push per watched script, every unspent outpoint) | {{n .Elements}} | ` + "they set the filter's bits `X`, hence `f`; never a count in a formula" + ` |
| decoys (` + "`sync --decoys`" + `) | {{.Decoys}} | ` + "`D`: scripts on chain in every filter, found by an observer as false positives for certain" + ` |
| ` + "`m^ = -(n/k) ln(1 - X/n)`" + ` of the latest filter | {{n .EstElements}} | ` + "what an observer without the truth estimates the filter holds: elements of every kind, not `N`" + ` |`

// renderDemoDoc renders demoDocText from g.
func renderDemoDoc(g demoGolden) (string, error) {
	return renderDemo(demoDocText, g)
}

// renderDemo renders a template of the doc from g.
func renderDemo(text string, g demoGolden) (string, error) {
	tmpl, err := template.New("doc").Funcs(template.FuncMap{
		"n": func(v any) string { return thousands(v) },
		"p": func(v float64) string { return fmt.Sprintf("%.4f", v) },
	}).Parse(text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = tmpl.Execute(&b, g)
	return b.String(), err
}

// thousands formats a count (a float rounded to one decimal below 100,
// to a whole number above) with thousands separators.
func thousands(v any) string {
	var f float64
	switch x := v.(type) {
	case uint64:
		f = float64(x)
	case int:
		f = float64(x)
	case float64:
		f = x
	}
	if f < 100 && f != math.Trunc(f) {
		return fmt.Sprintf("%.1f", f)
	}
	s := fmt.Sprintf("%.0f", f)
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	return strings.Join(append([]string{s}, out...), ",")
}

// TestPrivacyModelDocFigures checks that docs/PRIVACY-MODEL.md quotes
// the golden file's demo figures, word for word as rendered.
func TestPrivacyModelDocFigures(t *testing.T) {
	doc, err := os.ReadFile("../../docs/PRIVACY-MODEL.md")
	require.NoError(t, err)
	for _, text := range []string{demoTableText, demoDocText} {
		want, err := renderDemo(text, readDemoGolden(t))
		require.NoError(t, err)
		require.Containsf(t, string(doc), want, "docs/PRIVACY-MODEL.md must quote the golden figures; paste:\n%s", want)
	}
}
