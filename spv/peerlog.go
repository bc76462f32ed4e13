package spv

import (
	"context"
	"log/slog"
	"sync"

	"github.com/bloomwatch/bloomwatch/internal/peertext"
	"golang.org/x/time/rate"
)

// logFieldMax caps each string of a node's log line (peertext.Clean):
// a reject reason, a user agent, an error carrying either.
const logFieldMax = 1024

// logLimiter is the slog.Handler in front of the node's log: every string
// of a line passes peertext.Clean (escaped, capped at logFieldMax), and the
// lines of one kind (message) about one peer (its "peer" or "addr"
// attribute) are rate-limited (logBurst, logRate in budgets.go): past the
// bucket they are counted, and the next line of that kind that passes is
// preceded by one "log lines suppressed" line with their number. Lines
// about no peer pass unlimited.
type logLimiter struct {
	next  slog.Handler
	clock timeSource
	peer  string // the peer named by WithAttrs, if any
	st    *logLimits
}

// logLimits are the buckets a logLimiter and its derived handlers share.
type logLimits struct {
	mu      sync.Mutex
	buckets map[logKey]*logBucket
}

// logKey is one peer's lines of one kind.
type logKey struct{ peer, msg string }

// logBucket is a logKey's token bucket and the lines it suppressed since
// the last one that passed.
type logBucket struct {
	lim        *rate.Limiter
	suppressed int
}

var _ slog.Handler = (*logLimiter)(nil)

// newLogLimiter returns next behind the node's log limits.
func newLogLimiter(next slog.Handler, clock timeSource) *logLimiter {
	return &logLimiter{next: next, clock: clock, st: &logLimits{buckets: make(map[logKey]*logBucket)}}
}

// Enabled implements slog.Handler.
func (h *logLimiter) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *logLimiter) Handle(ctx context.Context, r slog.Record) error {
	peer := h.peer
	out := slog.NewRecord(r.Time, r.Level, peertext.Clean(r.Message, logFieldMax), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		a = peertext.CleanAttr(a, logFieldMax)
		if peer == "" && (a.Key == "peer" || a.Key == "addr") {
			peer = a.Value.String()
		}
		out.AddAttrs(a)
		return true
	})
	if peer == "" {
		return h.next.Handle(ctx, out)
	}
	pass, suppressed := h.take(logKey{peer: peer, msg: out.Message})
	if !pass {
		return nil
	}
	if suppressed > 0 {
		s := slog.NewRecord(r.Time, r.Level, "log lines suppressed", r.PC)
		s.AddAttrs(slog.String("peer", peer), slog.String("kind", out.Message), slog.Int("suppressed", suppressed))
		if err := h.next.Handle(ctx, s); err != nil {
			return err
		}
	}
	return h.next.Handle(ctx, out)
}

// take takes a token for k: whether the line passes and, when it does,
// how many lines of k were suppressed before it.
func (h *logLimiter) take(k logKey) (pass bool, suppressed int) {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	b := h.st.buckets[k]
	if b == nil {
		if len(h.st.buckets) >= maxLogKeys {
			clear(h.st.buckets)
		}
		b = &logBucket{lim: rate.NewLimiter(logRate, logBurst)}
		h.st.buckets[k] = b
	}
	if !b.lim.AllowN(h.clock.Now(), 1) {
		b.suppressed++
		return false, 0
	}
	suppressed, b.suppressed = b.suppressed, 0
	return true, suppressed
}

// WithAttrs implements slog.Handler.
func (h *logLimiter) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = peertext.CleanAttr(a, logFieldMax)
		if c.peer == "" && (a.Key == "peer" || a.Key == "addr") {
			c.peer = clean[i].Value.String()
		}
	}
	c.next = h.next.WithAttrs(clean)
	return &c
}

// WithGroup implements slog.Handler.
func (h *logLimiter) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	return &c
}
