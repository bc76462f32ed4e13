package session

import (
	"fmt"
	"io"
	"log/slog"
	"os"
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
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, logFileMode)
		if err != nil {
			return nil, nil, fmt.Errorf("open log: %w", err)
		}
		out, closeFn = f, f.Close
	}
	if cfg.LogTee != nil {
		out = io.MultiWriter(out, cfg.LogTee)
	}
	h := slog.NewTextHandler(out, &slog.HandlerOptions{Level: cfg.LogLevel, ReplaceAttr: shortTime})
	return slog.New(h), closeFn, nil
}

// shortTime prints log times as 15:04:05.000: the log pane is narrow and
// a sync rarely spans days.
func shortTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
		return slog.String(slog.TimeKey, a.Value.Time().Format("15:04:05.000"))
	}
	return a
}
