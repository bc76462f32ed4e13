package tui

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// maxPartialLog caps an unterminated line a LogSink holds.
const maxPartialLog = 4096

// LogSink is an io.Writer for a logger (slog.NewTextHandler, log.New)
// that turns what is written into lines for Config.Log. Write never
// blocks: when the buffer is full the line is dropped and counted, so a
// stalled dashboard never stalls the node. It is safe for concurrent use.
type LogSink struct {
	ch      chan string
	dropped atomic.Uint64
	mu      sync.Mutex
	partial []byte
}

// NewLogSink returns a sink buffering up to buffer lines (at least 1).
func NewLogSink(buffer int) *LogSink {
	return &LogSink{ch: make(chan string, max(buffer, 1))}
}

// Lines returns the channel to pass as Config.Log. It is never closed.
func (s *LogSink) Lines() <-chan string { return s.ch }

// Dropped returns the number of lines dropped because the buffer was full.
func (s *LogSink) Dropped() uint64 { return s.dropped.Load() }

// Write implements io.Writer: every complete line is queued (without its
// newline); an unterminated tail waits for the next Write, and is cut at
// maxPartialLog bytes.
func (s *LogSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rest := p
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := rest[:i]
		if len(s.partial) > 0 {
			line = append(s.partial, line...)
			s.partial = s.partial[:0]
		}
		s.send(string(bytes.TrimRight(line, "\r")))
		rest = rest[i+1:]
	}
	if room := maxPartialLog - len(s.partial); room > 0 {
		s.partial = append(s.partial, rest[:min(len(rest), room)]...)
	}
	return len(p), nil
}

// send queues a line or counts it dropped.
func (s *LogSink) send(line string) {
	select {
	case s.ch <- line:
	default:
		s.dropped.Add(1)
	}
}
