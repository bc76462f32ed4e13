package plot

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// TestRender checks that Render gives WritePNG's and WriteSVG's bytes and
// refuses an unknown format or no charts.
func TestRender(t *testing.T) {
	charts := []privacy.Chart{{Title: "t", XLabel: "x", YLabel: "y",
		Series: []privacy.Series{{Name: "s", X: []float64{1, 2, 3}, Y: []float64{1, 4, 9}}}}}
	for _, tc := range []struct {
		f     Format
		write func(*bytes.Buffer) error
	}{
		{PNG, func(b *bytes.Buffer) error { return WritePNG(b, charts) }},
		{SVG, func(b *bytes.Buffer) error { return WriteSVG(b, charts) }},
	} {
		got, err := Render(tc.f, charts)
		if err != nil {
			t.Fatalf("%s: %v", tc.f, err)
		}
		var want bytes.Buffer
		if err := tc.write(&want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: Render differs from the writer (%d vs %d bytes)", tc.f, len(got), want.Len())
		}
	}
	if _, err := Render("gif", charts); !errors.Is(err, ErrFormat) {
		t.Errorf("gif: %v", err)
	}
	if _, err := Render(PNG, nil); !errors.Is(err, ErrNoCharts) {
		t.Errorf("no charts: %v", err)
	}
}
