package session

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/bloomwatch/bloomwatch/internal/peertext"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/jrick/logrotate/rotator"
)

// logFileMode is the log's permission: it names peers and amounts.
const logFileMode = 0o600

// openLog returns the session's logger: to Config.LogFile, else to
// LogPath of datadir when a dashboard owns the terminal, else to
// Config.Stderr, and to Config.LogTee as well. The returned function
// closes the file, if any.
func openLog(cfg Config, datadir string) (*slog.Logger, func() error, error) {
	out := cfg.Stderr
	closeFn := func() error { return nil }
	path := cfg.LogFile
	if path == "" && cfg.Dashboard {
		path = LogPath(datadir)
	}
	if path != "" {
		r, err := openRotated(path)
		if err != nil {
			return nil, nil, err
		}
		out, closeFn = r, r.Close
	}
	if cfg.LogTee != nil {
		out = io.MultiWriter(out, cfg.LogTee)
	}
	h := slog.NewTextHandler(out, &slog.HandlerOptions{Level: cfg.LogLevel, ReplaceAttr: cleanAttr})
	return slog.New(h), closeFn, nil
}

// rotatedLog is the log file behind a rotator: past spv.LogFileMaxBytes
// it is moved aside and gzipped, spv.LogFileRolls old files are kept, so
// the log fills a bounded part of the disk. The rotator creates its files
// 0644: rotatedLog gives the new file logFileMode when the rotator makes
// it, and the gzipped ones at the next rotation and at Close.
type rotatedLog struct {
	r    *rotator.Rotator
	path string
	size int64 // as the rotator counts it
}

// threshold is the size past which the rotator rotates (it counts
// thresholdKB in units of 1,000 bytes).
const threshold = spv.LogFileMaxBytes / 1000 * 1000

// openRotated opens the log file at path, created logFileMode.
func openRotated(path string) (*rotatedLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, logFileMode)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	fi, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	r, err := rotator.New(path, threshold/1000, false, spv.LogFileRolls)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return &rotatedLog{r: r, path: path, size: fi.Size()}, nil
}

// Write implements io.Writer (one log line at a time: the handler's
// lock serializes them).
func (l *rotatedLog) Write(p []byte) (int, error) {
	n, err := l.r.Write(p)
	l.size += int64(n)
	if l.size >= threshold && len(p) > 0 && p[len(p)-1] == '\n' {
		l.size = 0
		l.restrict()
	}
	return n, err
}

// Close closes the file once the last rotation's gzip is written.
func (l *rotatedLog) Close() error {
	err := l.r.Close()
	l.restrict()
	return err
}

// restrict gives the log and its old files logFileMode.
func (l *rotatedLog) restrict() {
	old, _ := filepath.Glob(l.path + ".*")
	for _, p := range append(old, l.path) {
		_ = os.Chmod(p, logFileMode)
	}
}

// cleanAttr passes every string of a line through peertext.Clean (the
// node's lines already passed it; the session's may carry a file's
// strings) and shortens the time (shortTime).
func cleanAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return shortTime(groups, a)
	}
	return peertext.CleanAttr(a, logFieldMax)
}

// logFieldMax caps each string of a session log line (peertext.Clean).
const logFieldMax = 1024

// shortTime prints log times as 15:04:05.000: the log pane is narrow and
// a sync rarely spans days.
func shortTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
		return slog.String(slog.TimeKey, a.Value.Time().Format("15:04:05.000"))
	}
	return a
}
