package tui

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLogSink(t *testing.T) {
	s := NewLogSink(4)
	n, err := s.Write([]byte("one\ntw"))
	require.NoError(t, err)
	require.Equal(t, 6, n)
	_, _ = s.Write([]byte("o\r\nthree\n"))
	require.Equal(t, "one", <-s.Lines())
	require.Equal(t, "two", <-s.Lines())
	require.Equal(t, "three", <-s.Lines())

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
	require.Len(t, <-s.Lines(), maxPartialLog)
}

func TestLogSinkWithSlog(t *testing.T) {
	s := NewLogSink(8)
	log := slog.New(slog.NewTextHandler(s, nil))
	log.Info("peer connected", "addr", "127.0.0.1:18444")
	line := <-s.Lines()
	require.Contains(t, line, `msg="peer connected" addr=127.0.0.1:18444`)
	require.NotContains(t, line, "\n")
}
