package spv_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
	"github.com/bloomwatch/bloomwatch/watch"
)

// hostileFirst is the configuration of a regtest node on w that lists the
// hostile peer hp first, so that it serves the download, and the honest
// peer second, with fast retries and both peers awaited
// (hostileFirstWait of hp's scenario sc).
func hostileFirst(t testing.TB, hp *hostile.Peer, sc hostile.Scenario, honest string, w watch.Watcher, dir string) spv.Config {
	return spv.Config{
		Network: regtest(t), DataDir: dir, Connect: []string{hp.Addr(), honest}, Watcher: w, Log: testLogger(),
		Tuning: spv.Tuning{RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond, MinPeers: 2, MinPeersWait: hostileFirstWait(sc)},
	}
}

// hostileFirstWait is the MinPeersWait of a sync that lists a hostile peer
// first so that it serves the download: the node picks its download peer
// once MinPeers are ready, or when MinPeersWait has passed with fewer, and
// then keeps it. A wait shorter than whatever delays the hostile peer's
// handshake hands the whole sync to the honest peer listed second, and the
// scenario tests nothing (applied 0). That happened in CI on main: a v2
// key whose bytes 16-19 stall a btcd-wire v1 peer (1 key in 128 before
// the node refused them) kept the hostile peer in its 10 s handshake
// bound, the 5 s wait ran out, and stall-keep-alive synced from btcd alone
// in 5.05 s. A loaded machine delays the handshake the same way. With a
// wait this long the node waits for the hostile peer; it ends as soon as
// both are ready, so a run costs nothing more.
//
// A NoBloom peer never becomes ready (the node refuses it at its version
// message): its syncs keep a short wait and are served by the honest peer.
func hostileFirstWait(sc hostile.Scenario) time.Duration {
	if sc == hostile.NoBloom {
		return 5 * time.Second
	}
	return 40 * time.Second
}

// dlLog is a slog.Handler that records, in order, the address of every
// download peer the node picks (its "download peer" records), so a test
// can check the peer it meant to serve the download did. It passes every
// record on to testLogger's handler when BLOOMWATCH_TEST_LOG asks for one.
type dlLog struct {
	mu    *sync.Mutex
	picks *[]string
	next  slog.Handler
}

// newDLLog returns an empty dlLog.
func newDLLog() dlLog {
	d := dlLog{mu: new(sync.Mutex), picks: new([]string)}
	if l := testLogger(); l != nil {
		d.next = l.Handler()
	}
	return d
}

// Enabled implements slog.Handler: Info and above carry the picks.
func (d dlLog) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || (d.next != nil && d.next.Enabled(ctx, l))
}

// Handle implements slog.Handler.
func (d dlLog) Handle(ctx context.Context, r slog.Record) error {
	if d.next != nil && d.next.Enabled(ctx, r.Level) {
		if err := d.next.Handle(ctx, r.Clone()); err != nil {
			return err
		}
	}
	if r.Message != "download peer" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "addr" {
			return true
		}
		d.mu.Lock()
		*d.picks = append(*d.picks, a.Value.String())
		d.mu.Unlock()
		return false
	})
	return nil
}

// WithAttrs implements slog.Handler.
func (d dlLog) WithAttrs(as []slog.Attr) slog.Handler {
	if d.next != nil {
		d.next = d.next.WithAttrs(as)
	}
	return d
}

// WithGroup implements slog.Handler.
func (d dlLog) WithGroup(g string) slog.Handler {
	if d.next != nil {
		d.next = d.next.WithGroup(g)
	}
	return d
}

// servedFirst reports whether addr was the first download peer picked.
func (d dlLog) servedFirst(addr string) bool {
	p := d.Picks()
	return len(p) > 0 && p[0] == addr
}

// Picks returns the download peers picked so far, first pick first.
func (d dlLog) Picks() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), *d.picks...)
}
