package plot

import (
	"bytes"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/stretchr/testify/require"
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
		require.NoError(t, err, "%s", tc.f)
		var want bytes.Buffer
		require.NoError(t, tc.write(&want))
		require.Equal(t, want.Bytes(), got, "%s: Render differs from the writer (%d vs %d bytes)", tc.f, len(got), want.Len())
	}
	_, err := Render("gif", charts)
	require.ErrorIs(t, err, ErrFormat, "gif: %v", err)
	_, err = Render(PNG, nil)
	require.ErrorIs(t, err, ErrNoCharts, "no charts: %v", err)
}
