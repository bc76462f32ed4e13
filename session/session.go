package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// progressEvery is how often, at most, a headless session logs its
// progress (at the end of a batch of events: nothing happens, nothing is
// logged).
const progressEvery = 2 * time.Second

// dashboardBuffer is the capacity of the dashboard's event channel; the
// bridge waits when it is full (the node never does: its subscription
// queue is unbounded), until the session's quit. A variable so that a
// test can fill it quickly.
var dashboardBuffer = 1024

// walletBuffer is the capacity of the dashboard's wallet channel; the
// bridge waits when it is full, until the session's quit (a change is a
// delta: none may be dropped). It holds one read per event batch.
const walletBuffer = 16

// readingBuffer is the capacity of the dashboard's reading channel; a
// reading that does not fit is dropped (the next one supersedes it).
const readingBuffer = 64

// ErrNoPeer ends a session in which no peer was usable for
// Config.PeerTimeout.
var ErrNoPeer = errors.New("no reachable peer")

// ErrCheckAbandoned ends an UntilSynced session in which an omission
// check it waited for could not finish (spv.BlockUnchecked with
// Abandoned): no second peer got the block within spv.Tuning.CheckWait,
// or the second peers went away or did not answer. The block stays as its
// download peer delivered it, so the wallet cannot be called synced.
var ErrCheckAbandoned = errors.New("omission check not finished")

// Config configures a Session. Wallet is required.
type Config struct {
	// Wallet is the watch-only wallet to sync (OpenWallet opens or
	// creates it). The session does not close it.
	Wallet *wallet.Wallet
	// Node configures the light node: the peers (Connect, empty for the
	// network's DNS seeds; MaxPeers; Proxy, NoProxyIsolation; Transport),
	// the filter (FPRate, Decoys, FilterPadding), the omission checks
	// (SpotCheckEvery, FullBlockEvery, Tuning.CheckPeers) and the rest of
	// spv.Config, each with the default spv.Config gives it. The session sets Network, DataDir,
	// Watcher and Log itself (the wallet's network, NodePath of its data
	// dir, the wallet, the session's log): New refuses a Config that sets
	// one of them.
	Node spv.Config
	// UntilSynced ends the session when the wallet reaches the best
	// peer's tip and no block awaits an omission check (spv.SyncDone),
	// or with ErrCheckAbandoned when such a check cannot finish (each
	// waits at most spv.Tuning.CheckWait for a second peer).
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
	// cfRecs are this run's compact-filter records (CFRequested),
	// under mu: what the BIP158 peers saw.
	cfRecs []transcript.Record
	// cfMode is set once the node syncs over BIP158 (bridge only).
	cfMode      bool
	started     time.Time
	firstFilter time.Time
	syncedAt    time.Time

	// quit is closed when Stop begins: the bridge stops waiting for a
	// dashboard that no longer reads (Stop then waits for the bridge).
	quit       chan struct{}
	quitOnce   sync.Once
	bridgeDone chan struct{}
	// events, readings and walletChanges are a dashboard's feeds (nil
	// without Config.Dashboard).
	events        chan spv.Event
	readings      chan privacy.Reading
	walletChanges chan wallet.ChangeResult
	// changes and counts read the wallet (its Changes, for a dashboard;
	// its AddressCounts, without one; a test counts the reads);
	// batchDone, when set (a test), is called after each batch of events
	// with its size.
	changes   func(*wallet.ChangeCursor) (wallet.Change, error)
	counts    func() (wallet.AddressCounts, error)
	batchDone func(events int)
	// userSub is the subscription Events hands a program without a
	// dashboard (made at its first call; guarded by mu).
	userSub *spv.Subscription

	doneOnce sync.Once
	done     chan struct{}
	doneErr  error
	// synced is closed by the bridge at the first SyncDone (before the
	// session's end, when that ends it).
	syncedOnce sync.Once
	synced     chan struct{}
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
		synced:     make(chan struct{}),
	}
	s.changes, s.counts = s.w.Changes, s.w.AddressCounts
	if cfg.Dashboard {
		s.events = make(chan spv.Event, dashboardBuffer)
		s.readings = make(chan privacy.Reading, readingBuffer)
		s.walletChanges = make(chan wallet.ChangeResult, walletBuffer)
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
	// The adversary keeps every filter it ever received: earlier runs'
	// filters count before this run adds to them (folded at once, the
	// model brought up to date after the last).
	if _, err := s.meter.Restore(bip37Records(node.Transcript())); err != nil {
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
// without Config.Dashboard); a reading the dashboard is too slow for is
// dropped (the next supersedes it). Closed when the session stops.
func (s *Session) Readings() <-chan privacy.Reading { return s.readings }

// WalletChanges returns the wallet's changes for a dashboard (nil without
// Config.Dashboard): the first holds every address and unspent output,
// each later one what a batch of the node's events changed (one
// Wallet.Changes read per batch, shared with the privacy meter), in order;
// a failed read comes as its error. The dashboard must drain it (the
// bridge waits for it, until Stop). Closed when the session stops.
func (s *Session) WalletChanges() <-chan wallet.ChangeResult { return s.walletChanges }

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
