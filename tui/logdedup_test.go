package tui

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEventLinesReplaceTheirLogLines checks that the logger's line for
// each event the pane writes a line of its own for is dropped at INFO,
// and kept at WARN, where it says more than the event line.
func TestEventLinesReplaceTheirLogLines(t *testing.T) {
	for _, msg := range []string{
		"peer connected", "peer gone", "filterload", "synced", "reorg",
		"at the tip, blocks awaiting an omission check",
	} {
		line := `time=07:11:23.123 level=INFO msg="` + msg + `" height=741`
		if msg == "synced" || msg == "reorg" || msg == "filterload" {
			line = "time=07:11:23.123 level=INFO msg=" + msg + " height=741"
		}
		_, ok := compactLog(line)
		require.False(t, ok, "INFO %q is said by an event line too", msg)
		_, ok = compactLog(`time=07:11:23.123 level=WARN msg="` + msg + `" height=741`)
		require.True(t, ok, "WARN %q is kept", msg)
	}
	out, ok := compactLog(`time=07:11:23.123 level=INFO msg="download peer" addr=127.0.0.1:1`)
	require.True(t, ok)
	require.Equal(t, "07:11:23 download peer addr=127.0.0.1:1", out)
}
