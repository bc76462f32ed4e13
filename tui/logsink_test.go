package tui

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// nextLine returns the next line of s, failing the test when none comes
// within a few seconds (a test never waits without a bound).
func nextLine(t *testing.T, s *LogSink) string {
	t.Helper()
	select {
	case l := <-s.Lines():
		return l
	case <-time.After(5 * time.Second):
		require.FailNow(t, "no log line within 5 s")
		return ""
	}
}

func TestLogSink(t *testing.T) {
	s := NewLogSink(4)
	n, err := s.Write([]byte("one\ntw"))
	require.NoError(t, err)
	require.Equal(t, 6, n)
	_, _ = s.Write([]byte("o\r\nthree\n"))
	require.Equal(t, "one", nextLine(t, s))
	require.Equal(t, "two", nextLine(t, s))
	require.Equal(t, "three", nextLine(t, s))

	// a full buffer drops and counts, never blocks
	for i := 0; i < 10; i++ {
		_, _ = fmt.Fprintf(s, "line %d\n", i)
	}
	require.Len(t, s.Lines(), 4)
	require.EqualValues(t, 6, s.Dropped())

	// an endless line is capped
	s = NewLogSink(1)
	_, _ = s.Write([]byte(strings.Repeat("x", 3*maxPartialLog)))
	_, _ = s.Write([]byte("\n"))
	require.Len(t, nextLine(t, s), maxPartialLog)
}

func TestLogSinkWithSlog(t *testing.T) {
	s := NewLogSink(8)
	log := slog.New(slog.NewTextHandler(s, nil))
	log.Info("peer connected", "addr", "127.0.0.1:18444")
	line := nextLine(t, s)
	require.Contains(t, line, `msg="peer connected" addr=127.0.0.1:18444`)
	require.NotContains(t, line, "\n")
}
