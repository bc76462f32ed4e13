package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
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

func TestGolden80x24(t *testing.T) {
	m := scriptedModel(t, 80, 24, newTestWallet(t))
	v := m.View()
	checkFrame(t, v, 80, 24)
	golden.RequireEqual(t, []byte(ansi.Strip(v)))
}

func TestGolden160x48(t *testing.T) {
	m := scriptedModel(t, 160, 48, newTestWallet(t))
	v := m.View()
	checkFrame(t, v, 160, 48)
	golden.RequireEqual(t, []byte(ansi.Strip(v)))
}
