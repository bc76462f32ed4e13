package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestErrorLineEscapesPeerText: an error carrying a peer's reject reason
// (CR, a screen clear, an OSC 52 clipboard write, invalid UTF-8, megabytes
// of it) reaches the terminal as one escaped, capped line.
func TestErrorLineEscapesPeerText(t *testing.T) {
	reason := "\r\x1b[2J\x1b]52;c;aGk=\x07\xff\u202e" + strings.Repeat("\x1b[31m", 1<<20)
	err := fmt.Errorf("broadcast: %w", fmt.Errorf("%w by 127.0.0.1:18444: 66: %s", errors.New("spv: transaction rejected"), reason))
	line := errorLine(nil, err)
	require.True(t, strings.HasPrefix(line, "bloomwatch: broadcast: spv: transaction rejected by 127.0.0.1:18444: 66: "), line)
	for _, r := range line {
		require.False(t, r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u202e', "raw %U in the error line", r)
	}
	require.NotContains(t, line, "\xff")
	require.Contains(t, line, `\x1b]52;c;aGk=\a`)
	require.Less(t, len(line), 2048)

	require.Equal(t, "bloomwatch: a b", errorLine(nil, errors.New("a\nb")), "newlines still become spaces")
}
