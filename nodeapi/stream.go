package nodeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// StreamPath is the HTTP path of the dashboard's feed: a gob stream of
// Frames (POST, with the cookie, like every request).
const StreamPath = "/stream"

// MethodReload asks the node to reload its filter (the dashboard's r).
const MethodReload = "node.reload"

// Limits of the dashboard feed.
const (
	// streamBatch is how many node events one frame batch carries at
	// most before the wallet and the meter are read again.
	streamBatch = 256
	// logHubBuffer is each attached dashboard's log line backlog; lines
	// beyond it are dropped for that dashboard (the node never waits).
	logHubBuffer = 512
	// streamFlushEvery bounds how long a written frame waits in the
	// buffer.
	streamFlushEvery = 100 * time.Millisecond
	// streamWriteTimeout drops a dashboard that reads nothing for this
	// long, so that its subscription's queue does not grow without
	// bound behind it.
	streamWriteTimeout = 30 * time.Second
)

// Dashboard is what a server needs to feed attached dashboards from the
// running session (nil in Config: no feed).
type Dashboard struct {
	// Subscribe returns a new subscription to the node's events
	// (spv.Node.Subscribe).
	Subscribe func() *spv.Subscription
	// Reading returns the privacy meter's latest reading, nil before
	// the first filter (session.Session.Reading).
	Reading func() *privacy.Reading
	// Reload reloads the filter (spv.Node.ReloadFilter).
	Reload func(reason string)
	// Log fans the session's log lines out to attached dashboards (nil:
	// none); the session's Config.LogTee writes into it.
	Log *LogHub
}

// Frame is one message of the dashboard feed: one of its fields is set.
type Frame struct {
	Event   spv.Event
	Reading *privacy.Reading
	Wallet  *wallet.Change
	// WalletErr is a failed wallet read's message.
	WalletErr string
	Log       string
}

// streamError carries an error's message across the feed (an error's
// concrete type does not travel).
type streamError string

func (e streamError) Error() string { return string(e) }

// streamEvents are the node's event types the feed carries (registered
// with gob); TestStreamCarriesEveryEvent checks the list against
// spv/events.go.
var streamEvents = []spv.Event{
	spv.PeerConnected{}, spv.PeerDisconnected{}, spv.PeerBanned{}, spv.PeersUpdated{},
	spv.HeadersProgress{}, spv.FilterLoaded{}, spv.BlocksRequested{}, spv.BlockMatches{},
	spv.MatchedTx{}, spv.TxRelayed{}, spv.BlockProcessed{}, spv.BlockUnchecked{}, spv.ChecksAwaited{},
	spv.Reorg{},
	spv.SyncStopped{}, spv.SyncDone{}, spv.RebroadcastPass{},
}

// carried holds the type names of streamEvents.
var carried = map[string]bool{}

func init() {
	for _, ev := range streamEvents {
		gob.Register(ev)
		carried[kindOf(ev)] = true
	}
	gob.Register(streamError(""))
}

// portable returns ev with its error fields carried as streamErrors, or
// nil for an event type the feed does not carry (the dashboard shows no
// such event; an unregistered type would break the gob stream).
func portable(ev spv.Event) spv.Event {
	if !carried[kindOf(ev)] {
		return nil
	}
	if s, ok := ev.(spv.SyncStopped); ok && s.Err != nil {
		s.Err = streamError(s.Err.Error())
		return s
	}
	return ev
}

// LogHub is an io.Writer that hands each log line to every attached
// dashboard, dropping lines a slow one has no room for.
type LogHub struct {
	mu   sync.Mutex
	subs map[chan string]struct{}
	part []byte
}

// NewLogHub returns an empty hub.
func NewLogHub() *LogHub { return &LogHub{subs: map[chan string]struct{}{}} }

// Write splits p into lines and hands out each whole one.
func (h *LogHub) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.part = append(h.part, p...)
	for {
		i := bytes.IndexByte(h.part, '\n')
		if i < 0 {
			break
		}
		line := string(h.part[:i])
		h.part = h.part[i+1:]
		for ch := range h.subs {
			select {
			case ch <- line:
			default:
			}
		}
	}
	return len(p), nil
}

// subscribe returns a channel of the lines written from now on, and its
// cancel.
func (h *LogHub) subscribe() (<-chan string, func()) {
	ch := make(chan string, logHubBuffer)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// lastEvents keeps the latest event of each kind that sets a panel's
// state (peers, filter, headers, block, sync end), for a dashboard that
// attaches later; it is fed by the server's own subscription.
type lastEvents struct {
	mu   sync.Mutex
	last map[string]spv.Event
	// order keeps the kinds in the order a dashboard applies them.
	order []string
}

// cachedKinds are the event kinds lastEvents keeps, in replay order.
var cachedKinds = []string{"spv.HeadersProgress", "spv.PeersUpdated", "spv.FilterLoaded", "spv.BlockProcessed", "spv.SyncDone"}

// kindOf names ev's type as %T prints it ("spv.BlockProcessed"), without
// fmt's formatting machinery: it runs for every event the node publishes.
func kindOf(ev spv.Event) string { return reflect.TypeOf(ev).String() }

// note keeps ev if its kind is cached.
func (l *lastEvents) note(ev spv.Event) {
	k := kindOf(ev)
	for _, c := range cachedKinds {
		if c == k {
			l.mu.Lock()
			l.last[k] = ev
			l.mu.Unlock()
			return
		}
	}
}

// snapshot returns the kept events in replay order.
func (l *lastEvents) snapshot() []spv.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []spv.Event
	for _, k := range cachedKinds {
		if ev, ok := l.last[k]; ok {
			out = append(out, ev)
		}
	}
	return out
}

// startCache subscribes the server to the node's events to keep the
// latest of each cached kind, and to refresh the balance snapshot after
// each batch of them, until the server's context ends.
func (s *Server) startCache() {
	s.cache = &lastEvents{last: map[string]spv.Event{}}
	s.balance = newBalanceSnapshot((&Local{W: s.cfg.Wallet}).Balance)
	sub := s.cfg.Dashboard.Subscribe()
	go func() {
		defer sub.Cancel()
		for {
			select {
			case ev, ok := <-sub.Events():
				if !ok {
					return
				}
				for ok {
					s.cache.note(ev)
					select {
					case ev, ok = <-sub.Events():
					default:
						ok = false
					}
				}
				s.balance.refresh()
			case <-s.ctx.Done():
				return
			}
		}
	}()
}

// balanceInterest is how long after a client last asked for the balance
// the snapshot keeps being refreshed after each batch of events. A node
// nobody asks reads nothing: a balance read walks every wallet output and
// holds the wallet between blocks, so refreshing it for no reader would
// tax every sync.
const balanceInterest = 30 * time.Second

// balanceSnapshot is the wallet's balance as last read after a batch of
// the node's events, kept while clients ask for it: wallet.balance then
// answers from it at once, never behind the wallet's lock while the sync
// applies and commits blocks; its synced_height says which block it
// reflects. The first request after balanceInterest without one reads the
// wallet itself and starts the refreshing again. One refresh runs at a
// time; a batch that comes during one makes it read again when done.
type balanceSnapshot struct {
	read func(context.Context) (*BalanceInfo, error)
	now  func() time.Time

	mu      sync.Mutex
	info    *BalanceInfo
	asked   time.Time
	running bool
	dirty   bool
}

// newBalanceSnapshot returns a snapshot reading through read.
func newBalanceSnapshot(read func(context.Context) (*BalanceInfo, error)) *balanceSnapshot {
	return &balanceSnapshot{read: read, now: time.Now}
}

// wanted reports whether a client asked within balanceInterest. The
// caller holds b.mu.
func (b *balanceSnapshot) wanted() bool {
	return !b.asked.IsZero() && b.now().Sub(b.asked) < balanceInterest
}

// refresh reads the balance again in a goroutine of its own, or marks
// the running read dirty; it does nothing while no client asks.
func (b *balanceSnapshot) refresh() {
	b.mu.Lock()
	if !b.wanted() {
		b.mu.Unlock()
		return
	}
	if b.running {
		b.dirty = true
		b.mu.Unlock()
		return
	}
	b.running = true
	b.mu.Unlock()
	go func() {
		for {
			info, err := b.read(context.Background())
			b.mu.Lock()
			if err == nil {
				b.info = info
			}
			if !b.dirty || !b.wanted() {
				b.dirty = false
				b.running = false
				b.mu.Unlock()
				return
			}
			b.dirty = false
			b.mu.Unlock()
		}
	}()
}

// answer returns the balance for a request: the snapshot while it is
// kept, else a read of the wallet, which also starts keeping it.
func (b *balanceSnapshot) answer(ctx context.Context) (*BalanceInfo, error) {
	b.mu.Lock()
	kept := b.wanted() && b.info != nil
	b.asked = b.now()
	info := b.info
	b.mu.Unlock()
	if kept {
		return info, nil
	}
	info, err := b.read(ctx)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if !b.running { // a running refresh stores a read at least as new
		b.info = info
	}
	b.mu.Unlock()
	return info, nil
}

// flushWriter flushes the response at most every streamFlushEvery, and at
// once when the feed has nothing more queued.
type flushWriter struct {
	w     *bufio.Writer
	f     http.Flusher
	last  time.Time
	dirty bool
}

// Write buffers p.
func (fw *flushWriter) Write(p []byte) (int, error) {
	fw.dirty = true
	return fw.w.Write(p)
}

// flush sends what is buffered.
func (fw *flushWriter) flush() error {
	if !fw.dirty {
		return nil
	}
	if err := fw.w.Flush(); err != nil {
		return err
	}
	fw.f.Flush()
	fw.dirty, fw.last = false, time.Now()
	return nil
}

// serveStream writes the dashboard feed until the client goes or the
// server closes: the kept events, the wallet's whole state and the latest
// reading first, then the node's events as they come, after each batch of
// them the wallet's changes and the reading when new, and the log lines.
func (s *Server) serveStream(rw http.ResponseWriter, r *http.Request) {
	d := s.cfg.Dashboard
	if d == nil {
		http.Error(rw, "this node serves no dashboard feed", http.StatusNotFound)
		return
	}
	fl, ok := rw.(http.Flusher)
	if !ok {
		http.Error(rw, "no streaming", http.StatusInternalServerError)
		return
	}
	sub := d.Subscribe()
	defer sub.Cancel()
	var logs <-chan string
	if d.Log != nil {
		ch, cancel := d.Log.subscribe()
		defer cancel()
		logs = ch
	}
	rw.Header().Set("Content-Type", "application/x-gob")
	rw.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(rw).SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	fw := &flushWriter{w: bufio.NewWriterSize(rw, 64<<10), f: fl}
	enc := gob.NewEncoder(fw)
	var (
		cursor wallet.ChangeCursor
		gate   readingGate
	)
	send := func(f Frame) bool {
		if f.Event != nil {
			if f.Event = portable(f.Event); f.Event == nil {
				return true
			}
		}
		return enc.Encode(&f) == nil
	}
	afterBatch := func() bool {
		ch, err := s.cfg.Wallet.Changes(&cursor)
		if err != nil {
			return send(Frame{WalletErr: err.Error()})
		}
		if !send(Frame{Wallet: &ch}) {
			return false
		}
		if rd := d.Reading(); gate.pass(rd) {
			return send(Frame{Reading: rd})
		}
		return true
	}
	for _, ev := range s.cache.snapshot() {
		if !send(Frame{Event: ev}) {
			return
		}
	}
	if !afterBatch() || fw.flush() != nil {
		return
	}
	tick := time.NewTicker(streamFlushEvery)
	defer tick.Stop()
	rc := http.NewResponseController(rw)
	for {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				_ = fw.flush()
				return
			}
			n := 0
			for ok && n < streamBatch {
				if !send(Frame{Event: ev}) {
					return
				}
				n++
				select {
				case ev, ok = <-sub.Events():
				default:
					ok = false
				}
			}
			if !afterBatch() {
				return
			}
		case line := <-logs:
			if !send(Frame{Log: line}) {
				return
			}
		case <-tick.C:
			if fw.flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// maxStreamErrorBytes bounds what a refused stream request's body puts
// into its error line.
const maxStreamErrorBytes = 4096

// Feed is an attached dashboard's side of the feed: the channels a
// tui.Config takes. They close when the stream ends (the node stopped,
// or Close).
type Feed struct {
	Events  chan spv.Event
	Privacy chan privacy.Reading
	Wallet  chan wallet.ChangeResult
	Log     chan string
	// Done is closed when the stream ends; Err then says why (nil after
	// Close).
	Done chan struct{}
	err  error
	stop context.CancelFunc
}

// Err returns why the feed ended, once Done is closed.
func (f *Feed) Err() error {
	select {
	case <-f.Done:
		return f.err
	default:
		return nil
	}
}

// Close detaches: the stream ends, the node keeps running.
func (f *Feed) Close() { f.stop() }

// Stream attaches to the node's dashboard feed.
func (c *Client) Stream(ctx context.Context) (*Feed, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.url, "/")+StreamPath, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("nodeapi: stream: %w", err)
	}
	req.SetBasicAuth(CookieUser, c.pass)
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("nodeapi: stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxStreamErrorBytes))
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("nodeapi: stream: HTTP %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	f := &Feed{
		Events: make(chan spv.Event, 1024), Privacy: make(chan privacy.Reading, 64),
		Wallet: make(chan wallet.ChangeResult, 16), Log: make(chan string, logHubBuffer),
		Done: make(chan struct{}), stop: cancel,
	}
	go func() {
		defer close(f.Done)
		defer resp.Body.Close()
		dec := gob.NewDecoder(bufio.NewReader(resp.Body))
		for {
			var fr Frame
			if err := dec.Decode(&fr); err != nil {
				if ctx.Err() == nil && !errors.Is(err, io.EOF) {
					f.err = fmt.Errorf("nodeapi: stream: %w", err)
				}
				return
			}
			var ok bool
			switch {
			case fr.Event != nil:
				ok = sendCtx(ctx, f.Events, fr.Event)
			case fr.Reading != nil:
				ok = sendCtx(ctx, f.Privacy, *fr.Reading)
			case fr.Wallet != nil:
				ok = sendCtx(ctx, f.Wallet, wallet.ChangeResult{Change: *fr.Wallet})
			case fr.WalletErr != "":
				ok = sendCtx(ctx, f.Wallet, wallet.ChangeResult{Err: streamError(fr.WalletErr)})
			case fr.Log != "":
				select {
				case f.Log <- fr.Log:
				default: // the log pane is best effort
				}
				ok = true
			default:
				ok = true
			}
			if !ok {
				return
			}
		}
	}()
	return f, nil
}

// sendCtx sends v on ch unless ctx ends first.
func sendCtx[T any](ctx context.Context, ch chan<- T, v T) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

// readingGate decides which of the session's readings a stream sends: the
// first, then one for a new record, and over BIP158 (no record the meter
// reads) one whenever what the peers learned (Reading.CF) changed.
type readingGate struct {
	seen    bool
	lastSeq uint64
	lastCF  *privacy.CFReading
}

// pass reports whether rd goes to the dashboard, and notes it when it
// does (nil: no reading yet, never).
func (g *readingGate) pass(rd *privacy.Reading) bool {
	if rd == nil || g.seen && rd.Seq == g.lastSeq && reflect.DeepEqual(rd.CF, g.lastCF) {
		return false
	}
	g.seen, g.lastSeq, g.lastCF = true, rd.Seq, rd.CF
	return true
}
