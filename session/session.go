package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// progressEvery is how often a headless session logs its progress.
const progressEvery = 2 * time.Second

// bridgeTick is how often the bridge checks the node's status.
const bridgeTick = 200 * time.Millisecond

// dashboardBuffer is the capacity of the dashboard's event channel; the
// bridge waits when it is full (the node never does: its subscription
// queue is unbounded), until the session's quit. A variable so that a
// test can fill it quickly.
var dashboardBuffer = 1024

// readingBuffer is the capacity of the dashboard's reading channel; a
// reading that does not fit is dropped (the next one supersedes it).
const readingBuffer = 64

// ErrNoPeer ends a session in which no peer was usable for
// Config.PeerTimeout.
var ErrNoPeer = errors.New("no reachable peer")

// Config configures a Session. Wallet is required.
type Config struct {
	// Wallet is the watch-only wallet to sync (OpenWallet opens or
	// creates it). The session does not close it.
	Wallet *wallet.Wallet
	// Node configures the light node: the peers (Connect, empty for the
	// network's DNS seeds; MaxPeers; Proxy, NoProxyIsolation; Transport),
	// the filter (FPRate, Decoys, FilterPadding), the omission checks
	// (SpotCheckEvery, FullBlockEvery, CheckPeers) and the rest of
	// spv.Config, each with the default spv.Config gives it. The session sets Network, DataDir,
	// Watcher and Log itself (the wallet's network, NodePath of its data
	// dir, the wallet, the session's log): New refuses a Config that sets
	// one of them.
	Node spv.Config
	// UntilSynced ends the session when the wallet reaches the best
	// peer's tip.
	UntilSynced bool
	// PeerTimeout ends the session with ErrNoPeer when no peer has been
	// usable for this long (0: wait forever).
	PeerTimeout time.Duration
	// ResetHeaders deletes the header store before the node opens it.
	ResetHeaders bool

	// LogFile is where the log goes; empty means Stderr, or LogPath of
	// the wallet's data dir when Dashboard is set (the dashboard owns
	// the terminal).
	LogFile string
	// LogLevel filters the log.
	LogLevel slog.Level
	// Stderr receives the log when no file is used (os.Stderr when nil).
	Stderr io.Writer
	// LogTee, when set, also receives every log line (the dashboard's
	// log pane).
	LogTee io.Writer
	// Dashboard makes the session forward events and privacy readings
	// to Events and Readings for a dashboard, which must read them (the
	// bridge waits for it). Without it, Events is a subscription of its
	// own and Readings is nil (Summary and LastReading give the meter's
	// reading).
	Dashboard bool
}

// Session is one running sync. New opens it, Start starts the node and
// the bridge, Wait waits for the end, Stop stops everything; Summary
// reports the end state.
type Session struct {
	cfg     Config
	w       *wallet.Wallet
	network *netparams.Network
	node    *spv.Node
	log     *slog.Logger
	closeLg func() error
	sub     *spv.Subscription

	// meter, universe and lastReading's writer belong to the bridge
	// goroutine once Start ran; mu guards lastReading and the timing
	// marks.
	meter    *privacy.Meter
	universe universeFeed
	// lastGone is each peer's last disconnection reason (bridge only),
	// for the error that ends a session without a usable peer.
	lastGone    map[string]string
	mu          sync.Mutex
	lastReading *privacy.Reading
	started     time.Time
	firstFilter time.Time
	syncedAt    time.Time

	// quit is closed when Stop begins: the bridge stops waiting for a
	// dashboard that no longer reads (Stop then waits for the bridge).
	quit       chan struct{}
	quitOnce   sync.Once
	bridgeDone chan struct{}
	events     chan spv.Event
	readings   chan privacy.Reading
	// userSub is the subscription Events hands a program without a
	// dashboard (made at its first call; guarded by mu).
	userSub *spv.Subscription

	doneOnce sync.Once
	done     chan struct{}
	doneErr  error
}

// New opens the light node for cfg.Wallet in its data dir and the log. It
// connects to nothing: Start does.
func New(cfg Config) (*Session, error) {
	if cfg.Wallet == nil {
		return nil, errors.New("session: no wallet")
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if n := cfg.Node; n.Network != nil || n.DataDir != "" || n.Watcher != nil || n.Log != nil {
		return nil, fmt.Errorf("%w: session: Config.Node's Network, DataDir, Watcher and Log are the session's to set", spv.ErrBadConfig)
	}
	network, err := netparams.Lookup(cfg.Wallet.Network())
	if err != nil {
		return nil, err
	}
	s := &Session{
		cfg: cfg, w: cfg.Wallet, network: network,
		meter:      privacy.NewMeter(privacy.MeterConfig{FPRate: cfg.Node.FPRate}),
		quit:       make(chan struct{}),
		bridgeDone: make(chan struct{}),
		done:       make(chan struct{}),
	}
	if cfg.Dashboard {
		s.events = make(chan spv.Event, dashboardBuffer)
		s.readings = make(chan privacy.Reading, readingBuffer)
	}
	if s.log, s.closeLg, err = openLog(cfg, s.w.Dir()); err != nil {
		return nil, err
	}
	nodeDir := NodePath(s.w.Dir())
	if _, statErr := os.Stat(nodeDir); cfg.ResetHeaders && statErr == nil {
		if err := headers.Remove(nodeDir); err != nil {
			_ = s.closeLg()
			return nil, fmt.Errorf("reset headers: %w", err)
		}
	}
	ncfg := cfg.Node
	ncfg.Network, ncfg.DataDir, ncfg.Watcher, ncfg.Log = network, nodeDir, s.w, s.log
	node, err := spv.New(ncfg)
	if err != nil {
		_ = s.closeLg()
		if errors.Is(err, headers.ErrLocked) {
			return nil, fmt.Errorf("light node: %w: another bloomwatch is using %s", err, nodeDir)
		}
		return nil, fmt.Errorf("light node: %w", err)
	}
	s.node = node
	s.universe = loadUniverse(nodeDir, network.Name, s.log)
	s.meter.SetUniverse(s.universe.size())
	s.meter.SetWallet(s.walletCounts())
	// The adversary keeps every filter it ever received: earlier runs'
	// filters count before this run adds to them (folded at once, the
	// model brought up to date after the last).
	if _, err := s.meter.Restore(node.Transcript()); err != nil {
		s.log.Warn("privacy meter: earlier filters", "err", err)
	}
	return s, nil
}

// Network returns the session's chain parameters.
func (s *Session) Network() *netparams.Network { return s.network }

// Node returns the light node (for ReloadFilter, Status, Bans).
func (s *Session) Node() *spv.Node { return s.node }

// Log returns the session's logger.
func (s *Session) Log() *slog.Logger { return s.log }

// Events returns the node's events (spv.FilterLoaded, MatchedTx,
// BlockProcessed, SyncDone, ...). Without Config.Dashboard it is a
// subscription to the light node made at the first call, queued without
// bound so a slow reader never stalls the sync: call it between New and
// Start to see every event (with Run, a Driver calls it after Start and
// misses the first ones); every call returns the same channel, closed when
// the session stops. With Config.Dashboard it is the dashboard's feed,
// which the session forwards from its bridge and the dashboard must drain.
func (s *Session) Events() <-chan spv.Event {
	if s.cfg.Dashboard {
		return s.events
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.userSub == nil {
		s.userSub = s.node.Subscribe()
	}
	return s.userSub.Events()
}

// Readings returns the privacy meter's readings for a dashboard (nil
// without Config.Dashboard).
func (s *Session) Readings() <-chan privacy.Reading { return s.readings }

// Done is closed when the session ends on its own: the tip reached with
// UntilSynced, a node failure, or no peer for PeerTimeout. Err then says
// why (nil for the tip).
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns the reason the session ended on its own, once Done is
// closed.
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.doneErr
	default:
		return nil
	}
}

// Start starts the node and the bridge goroutine. The session runs until
// Stop (or ctx's end, at which the node stops itself).
func (s *Session) Start(ctx context.Context) error {
	s.sub = s.node.Subscribe()
	s.mu.Lock()
	s.started = time.Now()
	s.mu.Unlock()
	if err := s.node.Start(ctx); err != nil {
		s.sub.Cancel()
		close(s.bridgeDone)
		return fmt.Errorf("start light node: %w", err)
	}
	go s.bridge(ctx)
	return nil
}

// Wait returns when the session ends on its own (Err's value) or when ctx
// ends (an interrupt: the node's error, if any).
func (s *Session) Wait(ctx context.Context) error {
	select {
	case <-s.done:
		return s.doneErr
	case <-ctx.Done():
		return s.node.Status().Err
	}
}

// Stop stops the node (which flushes the wallet), waits for the bridge
// and closes the log. It returns in bounded time whatever a dashboard
// does: the bridge stops forwarding events to it first. It is safe to
// call once after New or Start.
func (s *Session) Stop() error {
	s.quitOnce.Do(func() { close(s.quit) })
	err := s.node.Stop()
	s.mu.Lock()
	if s.userSub != nil {
		s.userSub.Cancel()
	}
	s.mu.Unlock()
	if s.sub != nil {
		<-s.bridgeDone
		// The bridge is done: the meter is the caller's now. The last
		// reading carries the behaviour attack over everything seen.
		s.mu.Lock()
		have := s.lastReading != nil
		s.mu.Unlock()
		if have {
			s.publish(s.meter.Settle())
		}
		st := s.node.Status()
		s.universe.update(st.Tested, st.WatcherHeight)
		if uerr := s.universe.save(); uerr != nil {
			s.log.Warn("privacy meter: universe estimate not saved", "err", uerr)
		}
	}
	if cerr := s.closeLg(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// finish ends the session with err (nil: done), once.
func (s *Session) finish(err error) {
	s.doneOnce.Do(func() {
		s.doneErr = err
		close(s.done)
	})
}

// bridge is the session's one goroutine: it drains the node's events,
// feeds the privacy meter with the record of every filter sent, forwards
// events and readings to the dashboard, and on its ticker ends the
// session when the wallet reaches the tip (UntilSynced), when the node
// fails, or when no peer has been usable for PeerTimeout. It ends when the
// node closes the subscription (at Stop).
func (s *Session) bridge(ctx context.Context) {
	defer close(s.bridgeDone)
	if s.events != nil {
		defer close(s.events)
	}
	tick := time.NewTicker(bridgeTick)
	defer tick.Stop()
	lastProgress := time.Now()
	peerDeadline := time.Now().Add(s.cfg.PeerTimeout)
	events := s.sub.Events()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			s.handleEvent(ctx, ev)
		case <-tick.C:
			st := s.node.Status()
			switch {
			case st.Err != nil:
				s.finish(st.Err)
			case s.cfg.UntilSynced && st.Synced:
				s.finish(nil)
			}
			if len(st.Peers) > 0 || st.Synced {
				peerDeadline = time.Now().Add(s.cfg.PeerTimeout)
			} else if s.cfg.PeerTimeout > 0 && time.Now().After(peerDeadline) {
				s.finish(fmt.Errorf("%w for %s (tried %v%s)", ErrNoPeer, s.cfg.PeerTimeout, s.peerList(), s.goneReasons()))
			}
			if !s.cfg.Dashboard && time.Since(lastProgress) >= progressEvery {
				lastProgress = time.Now()
				s.log.Info("progress", "headers", st.HeaderHeight, "wallet", st.WatcherHeight,
					"peer_height", st.PeerHeight, "peers", len(st.Peers), "matched", st.Matched,
					"false_positives", st.FalsePositives, "bytes", st.BytesReceived)
			}
		}
	}
}

// handleEvent updates the meter and forwards ev to the dashboard.
func (s *Session) handleEvent(ctx context.Context, ev spv.Event) {
	switch ev := ev.(type) {
	case spv.PeerDisconnected:
		if s.lastGone == nil {
			s.lastGone = map[string]string{}
		}
		s.lastGone[ev.Addr] = ev.Reason
	case spv.FilterLoaded:
		s.mu.Lock()
		if s.firstFilter.IsZero() {
			s.firstFilter = ev.Time
		}
		s.mu.Unlock()
		// A new filter: the wallet may have grown (a new key, an
		// outpoint); the reading the record gives counts it.
		s.meter.SetWallet(s.walletCounts())
		s.publish(s.observe(ev.Record))
	case spv.BlocksRequested:
		s.publish(s.observe(ev.Record))
	case spv.BlockMatches:
		// What a peer sent in a filtered block (the behaviour attack's
		// side of the peer; judged when MatchedTx comes).
		for _, id := range ev.Matched {
			s.meter.ObserveSent(ev.Time, ev.Peer, ev.Height, privacy.SentTx{ID: id})
		}
	case spv.MatchedTx:
		// The watcher's verdict on a transaction a peer sent, or a
		// mempool relay (published at once: no block follows it).
		if ev.Peer != "" && (ev.Relevant || ev.Height < 0) {
			s.meter.ObserveSent(ev.Time, ev.Peer, ev.Height, privacy.SentTx{ID: ev.Txid, Wallet: ev.Relevant})
		}
		switch {
		case ev.Relevant && ev.Height < 0:
			// An unconfirmed payment marks its address used too.
			s.publish(s.meter.SetWallet(s.walletCounts()))
		case ev.Height < 0:
			s.publish(s.meter.Current())
		}
	case spv.BlockProcessed:
		if !ev.Again {
			s.meter.ObserveBlock(ev.Matched, ev.Relevant) // the on-path observer
		}
		st := s.node.Status()
		s.universe.block(ev.Height, ev.Again)
		s.universe.update(st.Tested, max(st.WatcherHeight, ev.Height))
		if ev.Relevant > 0 {
			// A payment may have used an address: N may have grown.
			s.meter.SetWallet(s.walletCounts())
		}
		s.meter.SetObserved(uint64(max(st.FalsePositives, 0)), st.Tested-min(st.Tested, uint64(max(st.Relevant, 0))))
		s.publish(s.meter.SetUniverse(s.universe.size()))
	case spv.SyncDone:
		s.mu.Lock()
		if s.syncedAt.IsZero() {
			s.syncedAt = ev.Time
		}
		s.mu.Unlock()
		// SyncDone comes once the watcher is applied (and flushed) up
		// to the best peer's tip: react at once rather than at the
		// next tick, which cost up to 200 ms of a short sync.
		if s.cfg.UntilSynced {
			s.finish(nil)
		}
	}
	if s.events == nil || ctx.Err() != nil {
		return // no dashboard (or it is gone): keep draining
	}
	select {
	case s.events <- ev:
	case <-ctx.Done():
	case <-s.quit:
	}
}

// walletCounts returns the wallet's own counts for the privacy meter
// (privacy.WalletCounts says which is N): its used and watched addresses
// from the wallet's watch set in memory (no key derived, nothing read
// from disk), and the elements and decoys of the filter last loaded from
// the node's status. A wallet that cannot be read (closed, broken) is
// logged and leaves the counts at zero for this reading.
func (s *Session) walletCounts() privacy.WalletCounts {
	c, err := s.w.AddressCounts()
	if err != nil {
		s.log.Warn("privacy meter: wallet counts", "err", err)
	}
	st := s.node.Status()
	return privacy.WalletCounts{
		OnChain:  c.Used(),
		Watched:  c.Derived + c.Imported,
		Elements: max(st.Filter.Elements-st.Decoys, 0),
		Decoys:   st.Decoys,
	}
}

// observe feeds one transcript record to the meter and returns the
// reading (the last one when the record is refused, which is logged).
func (s *Session) observe(r transcript.Record) privacy.Reading {
	reading, err := s.meter.Observe(r)
	if err != nil {
		s.log.Warn("privacy meter", "err", err)
	}
	return reading
}

// publish keeps the latest reading and forwards it to the dashboard
// without ever blocking the bridge.
func (s *Session) publish(r privacy.Reading) {
	s.mu.Lock()
	rc := r
	s.lastReading = &rc
	s.mu.Unlock()
	if s.readings == nil {
		return
	}
	select {
	case s.readings <- r:
	default:
		// The dashboard is behind; it gets the next reading.
	}
}

// Reading returns the privacy meter's latest reading, or nil before the
// first filter.
func (s *Session) Reading() *privacy.Reading {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastReading == nil {
		return nil
	}
	r := *s.lastReading
	return &r
}

// goneReasons returns, for the explicit peers that were refused or
// disconnected, "; addr: reason" each (the transport refusal of
// --transport v2, a peer without NODE_BLOOM): what the no-peer error adds.
func (s *Session) goneReasons() string {
	var b strings.Builder
	for _, addr := range s.cfg.Node.Connect {
		if r := s.lastGone[addr]; r != "" {
			fmt.Fprintf(&b, "; %s: %s", addr, r)
		}
	}
	return b.String()
}

// peerList names the peers the session tries.
func (s *Session) peerList() []string {
	if len(s.cfg.Node.Connect) > 0 {
		return s.cfg.Node.Connect
	}
	return []string{"DNS seeds of " + s.network.Name}
}

// UniverseFile is the name, in the light node's directory (next to the
// transcript), of the privacy meter's universe estimate: the
// transactions counted in the merkleblocks the wallet's peers served,
// kept across restarts.
const UniverseFile = "universe.json"

// universeVersion is the format version of UniverseFile.
const universeVersion = 1

// UniversePath returns the universe estimate of the wallet in datadir.
func UniversePath(datadir string) string {
	return filepath.Join(NodePath(datadir), UniverseFile)
}

// universeState is UniverseFile's content: Txs transactions were counted
// in the merkleblocks of heights From..To (the total each merkleblock
// states, which its merkle root commits to but a light client cannot
// check without the transactions).
type universeState struct {
	Version      int    `json:"version"`
	Network      string `json:"network"`
	From         int32  `json:"from_height"`
	To           int32  `json:"to_height"`
	Txs          uint64 `json:"txs"`
	ScriptsPerTx int    `json:"scripts_per_tx"`
}

// universeFeed keeps the meter's universe |A|: the transactions of the
// blocks filtered in earlier runs (base) plus this run's (spv's
// Status.Tested), times privacy.ScriptsPerTx; on mainnet the whole
// chain's figure (privacy.MainnetChainTxData) instead, since the
// adversary tests every script on chain, not only those of the blocks
// this wallet fetched.
type universeFeed struct {
	path    string
	network string
	base    universeState // earlier runs, as loaded
	cur     universeState // base plus this run
	runFrom int32         // first block of this run (-1: none yet)
	kept    uint64        // the part of base this run did not count again
}

// loadUniverse reads the estimate of dir. A missing file starts from
// nothing; a malformed one, or one of another network, is logged and
// ignored (the estimate is only the meter's, never the wallet's).
func loadUniverse(dir, network string, log *slog.Logger) universeFeed {
	u := universeFeed{path: filepath.Join(dir, UniverseFile), network: network, runFrom: -1}
	u.base = universeState{Version: universeVersion, Network: network, From: -1, To: -1, ScriptsPerTx: privacy.ScriptsPerTx}
	raw, err := os.ReadFile(u.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		log.Warn("privacy meter: universe estimate unreadable, starting over", "path", u.path, "err", err)
	default:
		var st universeState
		if err := json.Unmarshal(raw, &st); err != nil || st.Version != universeVersion || st.Network != network || st.From > st.To {
			log.Warn("privacy meter: universe estimate malformed, starting over", "path", u.path, "err", err)
			break
		}
		u.base = st
	}
	u.cur, u.kept = u.base, u.base.Txs
	return u
}

// block notes a block this run filtered: the first one fixes where this
// run's count starts. When it starts inside the range earlier runs
// counted (a rescan), the counted range's part below it is kept, pro rata
// (the per-block counts are not stored), and this run's count replaces
// the rest.
func (u *universeFeed) block(h int32, again bool) {
	if u.runFrom >= 0 || again {
		return
	}
	u.runFrom = h
	b := u.base
	switch {
	case b.To < 0 || h > b.To:
		u.kept = b.Txs
	case h <= b.From:
		u.kept = 0
	default:
		u.kept = uint64(float64(b.Txs) * float64(h-b.From) / float64(b.To-b.From+1))
	}
}

// update sets this run's count: tested transactions through height to.
func (u *universeFeed) update(tested uint64, to int32) {
	if u.runFrom < 0 {
		return
	}
	c := u.base
	if c.From < 0 || u.runFrom < c.From {
		c.From = u.runFrom
	}
	c.To = max(to, u.runFrom)
	c.Txs = u.kept + tested
	u.cur = c
}

// size returns the universe the meter uses and its description.
func (u *universeFeed) size() (uint64, string) {
	if u.network == privacy.MainnetChainTxData.Network {
		return privacy.MainnetChainTxData.Candidates(), privacy.MainnetChainTxData.Describe()
	}
	c := u.cur
	if c.To < 0 {
		return 0, "no merkleblock counted yet (estimate kept in " + u.path + ")"
	}
	return privacy.UniverseFromTxs(c.Txs), privacy.DescribeTxUniverse(c.Txs, c.From, c.To, u.path)
}

// universeFileMode is UniverseFile's permission.
const universeFileMode = 0o600

// save writes the estimate atomically (atomicfile.Write: a temporary file
// renamed over it). Nothing counted, nothing written.
func (u *universeFeed) save() error {
	if u.cur.To < 0 {
		return nil
	}
	raw, err := json.Marshal(u.cur)
	if err != nil {
		return fmt.Errorf("encode universe estimate: %w", err)
	}
	if err := atomicfile.Write(u.path, append(raw, '\n'), universeFileMode); err != nil {
		return fmt.Errorf("save universe estimate: %w", err)
	}
	return nil
}
