package spv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Node is the BIP37 light node. Create it with New, run it with Start,
// end it with Stop. All sync state belongs to one manager goroutine;
// the exported methods are safe for concurrent use.
type Node struct {
	cfg   Config
	log   *slog.Logger
	clock timeSource

	store *headers.Store
	bans  *banManager
	trans transcriptLog
	// history holds the transcript's records from earlier runs.
	history []transcript.Record
	tweak   uint32
	// rng draws the reload schedule's jitter (the manager's goroutine
	// only).
	rng *rand.Rand
	// decoys are the persisted decoys (Config.Decoys); the manager
	// owns them once started.
	decoys *decoys
	addrs  *addrSource
	dial   *dialer
	// transports is what the node learned of its peers' transports.
	transports *transportMemory
	bcast      *broadcaster
	// rebc holds the transactions the node rebroadcasts until their
	// first confirmation.
	rebc *rebroadcastSet

	msgs   chan any
	quit   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// watchWG holds the goroutine that watches the caller's context:
	// it stops the node itself, so Stop waits for it apart from wg.
	watchWG sync.WaitGroup
	startMu sync.Mutex
	started bool
	stopped bool
	stopErr error

	liveMu    sync.Mutex
	live      map[*peerState]struct{}
	stopping  bool
	bytesGone uint64

	statusMu sync.Mutex
	status   Status
	changed  chan struct{} // closed and replaced on every status change

	m *manager
}

// New checks cfg, creates the data dir and opens the header store, the
// ban list, the privacy transcript and the persistent filter tweak. It
// does not connect to anything: Start does.
func New(cfg Config) (*Node, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: data dir: %w", ErrBadConfig, err)
	}
	n := &Node{
		cfg:     cfg,
		log:     slog.New(newLogLimiter(cfg.Log.Handler(), cfg.clock)),
		clock:   cfg.clock,
		bcast:   newBroadcaster(),
		rebc:    newRebroadcastSet(),
		msgs:    make(chan any, 256),
		quit:    make(chan struct{}),
		live:    make(map[*peerState]struct{}),
		changed: make(chan struct{}),
		rng:     newRand(),
	}
	n.cfg.Connect = dedupe(cfg.Connect)
	slots := cfg.MaxPeers
	if len(n.cfg.Connect) > 0 {
		slots = min(slots, len(n.cfg.Connect))
	}
	n.addrs = newAddrSource(n, slots)
	n.transports = newTransportMemory(n.cfg.Connect)
	n.dial = newDialer(n.cfg)
	var recovered bool
	if n.tweak, recovered, err = loadOrCreateTweak(cfg.DataDir); err != nil {
		return nil, err
	}
	if recovered {
		n.log.Warn("filter state was missing: the tweak is taken back from the transcript's last filterload",
			"file", filterStateFile, "tweak", n.tweak)
	}
	if n.decoys, err = loadDecoys(cfg.DataDir, cfg.Decoys); err != nil {
		return nil, err
	}
	if n.bans, err = openBanManager(cfg.DataDir, cfg.clock, cfg.Tuning.BanDuration); err != nil {
		return nil, err
	}
	if n.store, err = headers.Open(cfg.DataDir, cfg.Network,
		headers.WithSideBranchLimits(cfg.Tuning.SideBranchMargin, cfg.Tuning.MaxSideHeaders)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHeaderStore, err)
	}
	if n.trans, n.history, err = openTranscriptLog(cfg.DataDir); err != nil {
		_ = n.store.Close()
		return nil, err
	}
	hash, height := n.store.Tip()
	n.status = Status{HeaderHeight: height, HeaderHash: hash, WatcherHeight: -1, Decoys: len(n.decoys.active())}
	return n, nil
}

// Start connects to peers and starts syncing. The node runs until Stop or
// until ctx ends (then it stops itself as Stop would, without waiting for
// a caller). A second Start returns ErrAlreadyStarted.
func (n *Node) Start(ctx context.Context) error {
	n.startMu.Lock()
	defer n.startMu.Unlock()
	if n.stopped {
		return ErrStopped
	}
	if n.started {
		return ErrAlreadyStarted
	}
	if len(n.cfg.Connect) == 0 && len(n.cfg.Network.Seeds) == 0 {
		return fmt.Errorf("%w: network %s", ErrNoPeerSource, n.cfg.Network.Name)
	}
	m, err := newManager(n)
	if err != nil {
		return err
	}
	n.m = m
	n.started = true
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	// Subscribed before the manager runs: no block is missed.
	rsub := n.Subscribe()
	n.wg.Add(2)
	go func() {
		defer n.wg.Done()
		m.run()
	}()
	go func() {
		defer n.wg.Done()
		n.rebroadcastLoop(runCtx, rsub)
	}()
	for i := range n.addrs.slots {
		n.wg.Add(1)
		go n.connLoop(runCtx, i)
	}
	// Stop when the caller's context ends. The goroutine ends with
	// runCtx, which stop cancels; Stop waits for it.
	n.watchWG.Add(1)
	go func() {
		defer n.watchWG.Done()
		select {
		case <-ctx.Done():
			_ = n.stop()
		case <-runCtx.Done():
		}
	}()
	return nil
}

// Stop disconnects every peer, waits for the node's goroutines, flushes
// the watcher and closes the stores. It is idempotent: later calls return
// the first call's result. When it returns, no goroutine of the node is
// left, the one that stopped the node at the end of Start's context
// included.
func (n *Node) Stop() error {
	err := n.stop()
	n.watchWG.Wait()
	return err
}

// stop is Stop without waiting for the context watcher, which calls it.
func (n *Node) stop() error {
	n.startMu.Lock()
	defer n.startMu.Unlock()
	if n.stopped {
		return n.stopErr
	}
	n.stopped = true
	close(n.quit)
	if n.cancel != nil {
		n.cancel()
	}
	n.disconnectAll()
	n.wg.Wait()
	if n.m != nil {
		n.m.saveChecks(true) // the manager is gone: its state is ours
	}
	var errs []error
	if f, ok := n.cfg.Watcher.(watch.Flusher); ok && n.started {
		if err := f.Flush(); err != nil {
			errs = append(errs, fmt.Errorf("%w: flush: %w", ErrWatcher, err))
		}
	}
	if err := n.trans.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := n.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("%w: close: %w", ErrHeaderStore, err))
	}
	n.bcast.close()
	n.setStatus(func(s *Status) { s.Peers = nil; s.Stopped = true })
	n.stopErr = errors.Join(errs...)
	return n.stopErr
}

// Subscribe returns a new event subscription. Events are queued without
// bound so a slow reader never stalls the sync; Cancel it when done. After
// Stop the subscription's channel is closed.
func (n *Node) Subscribe() *Subscription { return n.bcast.subscribe() }

// WaitSynced returns nil once the watcher is applied up to the best
// peer's tip and no block awaits an omission check (Status.Synced), the
// node's fatal error if syncing stopped (a watcher error),
// ErrStopped after Stop, or ctx's error.
func (n *Node) WaitSynced(ctx context.Context) error {
	for {
		n.statusMu.Lock()
		st, ch := n.status, n.changed
		n.statusMu.Unlock()
		switch {
		case st.Err != nil:
			return st.Err
		case st.Synced:
			return nil
		case st.Stopped:
			return ErrStopped
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// ReloadFilter asks the node to send a fresh filterload to every peer
// (the TUI's `r` key); reason is recorded in the transcript.
func (n *Node) ReloadFilter(reason string) {
	if reason == "" {
		reason = "manual"
	}
	n.post(reloadMsg{reason: reason})
}

// Peers returns the connected peers.
func (n *Node) Peers() []PeerInfo {
	n.statusMu.Lock()
	defer n.statusMu.Unlock()
	return append([]PeerInfo(nil), n.status.Peers...)
}

// Status returns a snapshot of the node's state.
func (n *Node) Status() Status {
	n.statusMu.Lock()
	st := n.status
	st.Peers = append([]PeerInfo(nil), st.Peers...)
	n.statusMu.Unlock()
	st.BytesReceived = n.bytesReceived()
	st.Rebroadcasts = n.rebc.snapshot()
	return st
}

// bytesReceived counts the bytes read from every peer, past and present.
func (n *Node) bytesReceived() uint64 {
	n.liveMu.Lock()
	defer n.liveMu.Unlock()
	b := n.bytesGone
	for ps := range n.live {
		b += ps.p.BytesReceived()
	}
	return b
}

// Bans returns the bans in force.
func (n *Node) Bans() []Ban { return n.bans.Bans() }

// Tweak returns the node's persistent filter tweak: the one every filter
// it loads over BIP37 uses.
func (n *Node) Tweak() uint32 { return n.tweak }

// Headers returns the node's header store (read-only use: getters are safe
// for concurrent use).
func (n *Node) Headers() *headers.Store { return n.store }

// Status is a snapshot of the node's state.
type Status struct {
	// HeaderHeight and HeaderHash are the header chain's tip.
	HeaderHeight int32
	HeaderHash   chainhash.Hash
	// WatcherHeight and WatcherHash are the last block the watcher
	// applied (-1 when none).
	WatcherHeight int32
	WatcherHash   chainhash.Hash
	// PeerHeight is the best height a peer announced.
	PeerHeight int32
	// Synced is true while the watcher is at the best peer's tip (AtTip)
	// and no block awaits an omission check (AwaitingCheck 0): what the
	// node reports was checked against a second peer wherever one could
	// answer.
	Synced bool
	// AtTip is true while the watcher is at the best peer's tip, checks
	// aside.
	AtTip bool
	// AwaitingCheck counts the blocks whose omission check is not
	// finished: sent and not answered, waiting for a second peer to get
	// the block (up to Tuning.CheckWait), or left unfinished by an
	// earlier run and not checked again yet.
	AwaitingCheck int
	// ChecksAbandoned counts omission checks begun that could not finish
	// (BlockUnchecked with Abandoned); their blocks count in Unchecked.
	ChecksAbandoned int
	// Stopped is true after Stop.
	Stopped bool
	// Err is the error that stopped syncing (a watcher failure).
	Err   error
	Peers []PeerInfo
	// Filter describes the filter loaded most recently.
	Filter FilterInfo
	// BytesReceived counts bytes read from every peer, past and present.
	BytesReceived uint64
	// Blocks counts filtered blocks applied; Matched the transactions
	// delivered with them; Relevant and FalsePositives the watcher's
	// verdicts; Dropped the transactions dropped because they did not
	// match the local filter.
	Blocks, Matched, Relevant, FalsePositives, Dropped int
	// Tested counts the transactions of the blocks applied (the
	// denominator of ObservedFPRate).
	Tested uint64
	// ObservedFPRate is FalsePositives / (Tested - Relevant).
	ObservedFPRate float64
	// Reorgs counts best-chain switches; Rerequested the blocks fetched
	// again after a filter change or an omission (cover blocks of an
	// aligned re-fetch included).
	Reorgs, Rerequested int
	// GapRaces counts the reloads made because the download peer's
	// filter lacked an element the watcher needed (its lookahead reserve
	// ran out before a scheduled reload): each re-fetches blocks.
	GapRaces int
	// ReloadPending names the reason of a reload waiting for the next
	// scheduled point ("" when none).
	ReloadPending string
	// SpotChecks counts blocks asked again from a second peer;
	// FullBlockChecks whole blocks asked from the peer that filtered
	// them; Omissions the checks in which a peer left out a matched
	// transaction (or understated a block's transaction count).
	SpotChecks, FullBlockChecks, Omissions int
	// ChecksInFlight counts omission checks sent and not answered yet
	// and those waiting for a second peer to have their block (a block
	// may have several: AwaitingCheck counts blocks).
	ChecksInFlight int
	// Unchecked counts delivered blocks whose second-peer check was due
	// while no second peer had the block (and no full-block check was
	// drawn): with one peer, nothing shows whether it hid a transaction.
	Unchecked int
	// DriftDropped counts the dropped transactions that the mirror did
	// not match but an honest server could have (drift.go): not scored.
	DriftDropped int
	// MempoolTxs counts unconfirmed transactions offered to the watcher.
	MempoolTxs int
	// MempoolRefused counts those it refused (see TxRefusal).
	MempoolRefused int
	// Decoys counts the decoys the filters hold (Config.Decoys);
	// DecoyMatches the delivered false positives that matched a decoy
	// (an output or scriptSig push, or a spend of a decoy-matched
	// transaction's output): what the decoys cost; DecoysRetired the
	// busy decoys taken out of the filters in this run.
	Decoys, DecoyMatches, DecoysRetired int
	// Protocol is the session's protocol (ProtocolAuto until the first
	// ready peer settles it); CF counts the compact-filter sync's work
	// over BIP158.
	Protocol Protocol
	CF       CFStats
	// Rebroadcasts lists the transactions the node rebroadcasts until
	// their first confirmation (rebroadcast.go), in the order they were
	// broadcast.
	Rebroadcasts []PendingRebroadcast
}

// FilterInfo describes a loaded filter (Status.Filter, FilterLoaded).
type FilterInfo struct {
	// Elements counts what the filter holds: the watcher's data elements
	// and outpoints, and the Decoys beside them (Config.Decoys).
	Elements int
	Decoys   int
	Capacity uint32
	Bytes    int
	// HashFuncs, Tweak and Flags are the filterload's parameters.
	HashFuncs uint32
	Tweak     uint32
	Flags     string
	// FPRate is the theoretical rate at Elements; PredictedFPRate the
	// rate of the download peer's filter after the server's UPDATE_ALL
	// insertions seen so far; TargetFPRate the rate asked for
	// (Config.FPRate) at the capacity.
	FPRate          float64
	PredictedFPRate float64
	TargetFPRate    float64
	// Capped reports a filter built at BIP37's 36,000-byte cap, which
	// cannot reach TargetFPRate at its capacity.
	Capped bool
	// Loads counts filterload messages sent to any peer, this one
	// included.
	Loads int
	// Seq is the transcript record number of the filterload: the one
	// number a filter has everywhere (the dashboard's "Filter #", the
	// log, privacy analyze, transcript.jsonl).
	Seq uint64
}

// setStatus changes the status under its lock and wakes WaitSynced.
func (n *Node) setStatus(f func(*Status)) {
	n.statusMu.Lock()
	f(&n.status)
	close(n.changed)
	n.changed = make(chan struct{})
	n.statusMu.Unlock()
}

// post sends a message to the manager; it gives up when the node stops.
func (n *Node) post(m any) {
	select {
	case n.msgs <- m:
	case <-n.quit:
	}
}

// publish hands an event to every subscriber without blocking.
func (n *Node) publish(e Event) { n.bcast.publish(e) }

// at returns the event time stamp for now.
func (n *Node) at() At { return At{Time: n.clock.Now()} }

// reloadMsg asks the manager for a filter reload.
type reloadMsg struct{ reason string }

// tickMsg is the manager's housekeeping tick.
type tickMsg struct{ now time.Time }
