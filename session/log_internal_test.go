package session

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/stretchr/testify/require"
)

// TestLogFileRotatesAndEscapes: the log file passes spv.LogFileMaxBytes
// and is rotated (the old one gzipped), keeps its 0600 mode, and a line's
// control characters are escaped.
func TestLogFileRotatesAndEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bloomwatch.log")
	log, closeFn, err := openLog(Config{LogFile: path, LogLevel: slog.LevelInfo, Stderr: io.Discard}, "")
	require.NoError(t, err)
	line := strings.Repeat("x", 900)
	for written := 0; written < spv.LogFileMaxBytes+(1<<20); written += 1000 {
		log.Info("filler", "s", line)
	}
	log.Info("peer rejected a message", "reason", "\r\x1b]52;c;aGk=\x07")
	require.NoError(t, closeFn())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Less(t, fi.Size(), int64(spv.LogFileMaxBytes), "the file was rotated")
	require.Equal(t, os.FileMode(logFileMode), fi.Mode().Perm())
	old, err := filepath.Glob(path + ".*.gz")
	require.NoError(t, err)
	require.Len(t, old, 1, "the old file is gzipped beside it")
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(body), "\x1b")
	require.Contains(t, string(body), `x1b]52;c;aGk=`)
}
