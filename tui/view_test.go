package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"
)

// checkFrame asserts that a frame is exactly w x h cells.
func checkFrame(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	require.Len(t, lines, h)
	for i, l := range lines {
		require.Equal(t, w, ansi.StringWidth(l), "line %d: %q", i, ansi.Strip(l))
	}
}

// TestColoursDoNotChangeLayout renders the scripted session with true
// colour and without: stripped of its escape sequences, the coloured
// frame must be the plain one (a style must never cut or shift a column).
func TestColoursDoNotChangeLayout(t *testing.T) {
	w := newTestWallet(t)
	prev := lipgloss.ColorProfile()
	t.Cleanup(func() { lipgloss.SetColorProfile(prev) })
	for _, sz := range [][2]int{{80, 24}, {130, 36}, {160, 48}} {
		// the panels, a detail, the filter picture, the help, a search
		for _, press := range []string{"", "j\n", "b", "?", "/wallet"} {
			lipgloss.SetColorProfile(termenv.Ascii)
			plain := feed(t, scriptedModel(t, sz[0], sz[1], w), keys(press)...).View()
			require.NotContains(t, plain, "\x1b[")
			lipgloss.SetColorProfile(termenv.TrueColor)
			coloured := feed(t, scriptedModel(t, sz[0], sz[1], w), keys(press)...).View()
			require.Contains(t, coloured, "\x1b[")
			checkFrame(t, coloured, sz[0], sz[1])
			require.Equal(t, plain, ansi.Strip(coloured), "size %v, keys %q", sz, press)
		}
	}
}
