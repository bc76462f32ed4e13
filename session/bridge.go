package session

import (
	"context"
	"fmt"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// batchWindow is how long the bridge gathers events after the first of a
// batch before it reads the wallet (once) for all of them: at most one
// read per window while blocks arrive, none while nothing happens. A
// variable so that a test can make batches small.
var batchWindow = 100 * time.Millisecond

// feed is what the bridge knows of the node and the wallet: built from the
// node's events and the wallet's changes, never read back from either.
type feed struct {
	// cursor is where the bridge is in the wallet's changes; counts are
	// the wallet's address counts as last read; dirty is set by an event
	// that may have changed the wallet since.
	cursor wallet.ChangeCursor
	counts wallet.AddressCounts
	dirty  bool
	// fed is set by an event the meter was fed since the last reading
	// published: the batch's end reads the meter once for all of them.
	fed bool
	// elements and decoys are the last filter's (FilterLoaded).
	elements, decoys int
	// peers are the connected peers' addresses.
	peers map[string]struct{}
	// The figures of the headless progress line.
	headerHeight, walletHeight, peerHeight int32
	matched, relevant, falsePositives      int
	tested, bytes                          uint64
	// cf counts what a sync over BIP158 delivered (cfsummary.go).
	cf cfFeed
}

// bridge is the session's one goroutine: it drains the node's events,
// feeds the privacy meter (the record of every filter and request sent,
// what the peers sent for the behaviour attack, settled when the node
// stops), forwards events, readings and the wallet's changes to the
// dashboard, and ends the session when the wallet reaches the tip
// (UntilSynced, SyncDone), when syncing stops on a failure
// (SyncStopped), or when no peer has been connected for PeerTimeout.
// Events come in batches (the first event and what follows within
// batchWindow); after a batch that may have changed the wallet it reads
// the wallet once (Wallet.Changes with a dashboard, for the dashboard and
// the meter alike; Wallet.AddressCounts without one), then computes the
// meter's reading once for the batch and publishes it. It never reads the
// node's status: the events carry what it needs. It ends when the node
// closes the subscription (at Stop).
func (s *Session) bridge(ctx context.Context) {
	defer close(s.bridgeDone)
	if s.events != nil {
		defer close(s.events)
	}
	if s.walletChanges != nil {
		defer close(s.walletChanges)
	}
	if s.readings != nil {
		defer close(s.readings)
	}
	f := &feed{peers: make(map[string]struct{}), walletHeight: -1, cf: cfFeed{walletChanged: true}}
	// The first read: every address and output for the dashboard, the
	// counts for the meter.
	f.dirty = true
	s.readWallet(ctx, f)
	s.publishReading(f)

	noPeer := newDeadline(s.cfg.PeerTimeout)
	defer noPeer.stop()
	noPeer.arm()
	var batch *time.Timer
	var batchEnd <-chan time.Time
	events := s.sub.Events()
	n := 0 // events in the current batch
	lastProgress := time.Now()
	endBatch := func() {
		s.readWallet(ctx, f)
		s.publishReading(f)
		if !s.cfg.Dashboard && time.Since(lastProgress) >= progressEvery {
			lastProgress = time.Now()
			s.log.Info("progress", "headers", f.headerHeight, "wallet", f.walletHeight,
				"peer_height", f.peerHeight, "peers", len(f.peers), "matched", f.matched,
				"false_positives", f.falsePositives, "bytes", f.bytes)
		}
		if s.batchDone != nil {
			s.batchDone(n)
		}
		n = 0
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				if batch != nil {
					batch.Stop()
				}
				if n > 0 {
					endBatch()
				}
				s.settle(f)
				return
			}
			n++
			end, why := s.handleEvent(ctx, f, ev)
			if len(f.peers) > 0 {
				noPeer.disarm()
			} else {
				noPeer.arm()
			}
			switch {
			case end:
				// The batch ends here: the wallet read comes before
				// the session's end, so that what a caller reads then
				// (Summary) has it.
				if batch != nil {
					batch.Stop()
				}
				batch, batchEnd = nil, nil
				endBatch()
				s.finish(why)
			case batchEnd == nil:
				batch = time.NewTimer(batchWindow)
				batchEnd = batch.C
			}
		case <-batchEnd:
			batch, batchEnd = nil, nil
			endBatch()
		case <-noPeer.c:
			noPeer.fired()
			s.finish(fmt.Errorf("%w for %s (tried %v%s)", ErrNoPeer, s.cfg.PeerTimeout, s.peerList(), s.goneReasons()))
		}
	}
}

// handleEvent updates the feed and the meter with one event and forwards
// it to the dashboard. It reports whether the event ends the session
// (SyncDone or an abandoned omission check with UntilSynced,
// SyncStopped) and why (nil: the tip).
func (s *Session) handleEvent(ctx context.Context, f *feed, ev spv.Event) (end bool, why error) {
	switch ev := ev.(type) {
	case spv.PeerConnected:
		s.noteCFStart(ev.Time)
		f.peers[ev.Peer.Addr] = struct{}{}
		f.peerHeight = max(f.peerHeight, ev.Peer.StartHeight, ev.Peer.LastBlock)
	case spv.PeerDisconnected:
		delete(f.peers, ev.Addr)
		if s.lastGone == nil {
			s.lastGone = map[string]string{}
		}
		s.lastGone[ev.Addr] = ev.Reason
	case spv.PeerBanned:
		delete(f.peers, ev.Addr)
	case spv.PeersUpdated:
		clear(f.peers)
		for _, p := range ev.Peers {
			f.peers[p.Addr] = struct{}{}
			f.peerHeight = max(f.peerHeight, p.StartHeight, p.LastBlock)
		}
		f.bytes = ev.BytesReceived
	case spv.HeadersProgress:
		f.headerHeight, f.peerHeight = ev.Height, max(f.peerHeight, ev.PeerHeight)
	case spv.FilterLoaded:
		s.mu.Lock()
		if s.firstFilter.IsZero() {
			s.firstFilter = ev.Time
		}
		s.mu.Unlock()
		// The filter's own figures come with it; the wallet's counts are
		// those of the last read until the batch's read (a new filter
		// follows new keys: the wallet changed).
		f.elements, f.decoys, f.dirty, f.fed = ev.Elements, ev.Decoys, true, true
		s.meter.SetWallet(f.walletCounts())
		s.feedMeter(ev.Record)
	case spv.BlockProcessed:
		cf := s.overBIP158()
		if !ev.Again && !cf {
			s.meter.ObserveBlock(ev.Matched, ev.Relevant) // the on-path observer
		}
		f.walletHeight, f.headerHeight = ev.Height, max(f.headerHeight, ev.Height)
		f.peerHeight = max(f.peerHeight, ev.PeerHeight)
		f.matched += ev.Matched
		f.relevant += ev.Relevant
		f.falsePositives += ev.FalsePositives
		f.tested, f.dirty = ev.Tested, true
		if cf {
			// The BIP37 meter and its universe count merkleblocks; the
			// block is one the BIP158 peers' reading counts.
			f.cf.block(ev)
			f.fed = true
			break
		}
		s.universe.block(ev.Height, ev.Again)
		s.universe.update(ev.Tested, ev.Height)
		s.meter.SetObserved(uint64(max(f.falsePositives, 0)), ev.Tested-min(ev.Tested, uint64(max(f.relevant, 0))))
		s.meter.SetUniverse(s.universe.size())
		f.fed = true
	case spv.Reorg:
		f.walletHeight, f.dirty = min(f.walletHeight, ev.ForkHeight), true
		f.cf.walletChanged = true
	case spv.BlocksRequested:
		s.feedMeter(ev.Record)
		f.fed = true
	case spv.CFRequested:
		s.noteCF(ev.Record)
		s.cfMode = true
		f.fed = true
	case spv.BlockMatches:
		// What a peer sent in a filtered block (the behaviour attack's
		// side of the peer; judged when MatchedTx comes).
		for _, id := range ev.Matched {
			s.meter.ObserveSent(ev.Time, ev.Peer, ev.Height, behaviour.SentTx{ID: id})
		}
	case spv.MatchedTx:
		// The watcher's verdict on a transaction a peer sent, or a
		// mempool relay, for the behaviour attack.
		if ev.Peer != "" && (ev.Relevant || ev.Height < 0) {
			s.meter.ObserveSent(ev.Time, ev.Peer, ev.Height, behaviour.SentTx{ID: ev.Txid, Wallet: ev.Relevant})
		}
		// An unconfirmed payment marks its address used, a relayed false
		// positive counts in the wallet's statistics (a block's come with
		// BlockProcessed): the batch's read publishes the reading (no
		// block follows a relay).
		f.dirty = true
	case spv.SyncStopped:
		end, why = true, ev.Err
	case spv.BlockUnchecked:
		if ev.Abandoned && s.cfg.UntilSynced {
			end, why = true, fmt.Errorf("%w: block %d %v stays as its download peer delivered it: %s",
				ErrCheckAbandoned, ev.Height, ev.Hash, ev.Reason)
		}
	case spv.SyncDone:
		s.mu.Lock()
		if s.syncedAt.IsZero() {
			s.syncedAt = ev.Time
		}
		s.mu.Unlock()
		s.syncedOnce.Do(func() { close(s.synced) })
		// SyncDone comes once the watcher is applied (and flushed) up
		// to the best peer's tip.
		end = s.cfg.UntilSynced
	}
	if s.events == nil || ctx.Err() != nil {
		return end, why // no dashboard (or it is gone): keep draining
	}
	select {
	case s.events <- ev:
	case <-ctx.Done():
	case <-s.quit:
	}
	return end, why
}

// readWallet reads the wallet, once, when an event marked it possibly
// changed: its changes for a dashboard (which gets the change, or the
// error, keeping what it has), its address counts alone without one
// (in memory: Wallet.AddressCounts); the meter gets the new counts.
func (s *Session) readWallet(ctx context.Context, f *feed) {
	if !f.dirty {
		return
	}
	f.dirty = false
	if s.walletChanges == nil {
		counts, err := s.counts()
		if err != nil {
			s.log.Warn("wallet counts not read", "err", err)
			return
		}
		f.counts = counts
		s.meter.SetWallet(f.walletCounts())
		f.fed = true
		return
	}
	c, err := s.changes(&f.cursor)
	if err != nil {
		s.log.Warn("wallet changes not read", "err", err)
	} else {
		f.counts = c.Counts
		s.meter.SetWallet(f.walletCounts())
		f.fed = true
	}
	if ctx.Err() != nil {
		return
	}
	select {
	case s.walletChanges <- wallet.ChangeResult{Change: c, Err: err}:
	case <-ctx.Done():
	case <-s.quit:
	}
}

// walletCounts returns the wallet's own counts for the privacy meter
// (privacy.WalletCounts says which is N): its used and watched addresses
// as the last wallet read counted them, and the elements and decoys of
// the filter last loaded.
func (f *feed) walletCounts() privacy.WalletCounts {
	return privacy.WalletCounts{
		OnChain:  f.counts.Used(),
		Watched:  f.counts.Derived + f.counts.Imported,
		Elements: max(f.elements-f.decoys, 0),
		Decoys:   f.decoys,
	}
}

// settle publishes, once the node has stopped, the reading with the
// behaviour attack recomputed over everything seen (the meter's Current
// may show one a few sendings old): the last reading the dashboard gets
// and Summary reports.
func (s *Session) settle(f *feed) {
	s.mu.Lock()
	have := s.lastReading != nil
	s.mu.Unlock()
	if have {
		s.publish(s.withCF(f, s.meter.Settle()))
	}
}

// feedMeter feeds one transcript record to the meter (a record it refuses is
// logged); the batch's reading has it.
func (s *Session) feedMeter(r transcript.Record) {
	if err := s.meter.Feed(r); err != nil {
		s.log.Warn("privacy meter", "err", err)
	}
}

// publishReading publishes the meter's reading, computed once, when the
// meter was fed since the last one (over BIP158, with what the peers
// learned: withCF).
func (s *Session) publishReading(f *feed) {
	if !f.fed {
		return
	}
	f.fed = false
	s.publish(s.withCF(f, s.meter.Current()))
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

// deadline is a timer that can be armed, disarmed and re-armed: the
// session's PeerTimeout, running while no peer is connected. A zero
// duration never fires.
type deadline struct {
	d     time.Duration
	t     *time.Timer
	c     <-chan time.Time
	armed bool
}

// newDeadline returns a disarmed deadline of d.
func newDeadline(d time.Duration) *deadline { return &deadline{d: d} }

// arm starts the deadline unless it runs already.
func (dl *deadline) arm() {
	if dl.d <= 0 || dl.armed {
		return
	}
	dl.armed = true
	if dl.t == nil {
		dl.t = time.NewTimer(dl.d)
	} else {
		dl.t.Reset(dl.d)
	}
	dl.c = dl.t.C
}

// disarm stops the deadline.
func (dl *deadline) disarm() {
	if !dl.armed {
		return
	}
	dl.armed = false
	dl.t.Stop()
	dl.c = nil
}

// fired records that the deadline's channel delivered: it does not fire
// again until re-armed after a disarm.
func (dl *deadline) fired() { dl.c = nil }

// stop releases the timer.
func (dl *deadline) stop() {
	if dl.t != nil {
		dl.t.Stop()
	}
}
