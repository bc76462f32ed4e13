package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/bloomwatch/bloomwatch/spv/netparams"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/tui"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// candidatesPerTx estimates the privacy meter's universe |A| from the
// chain a peer filtered: about two output scripts per transaction, each a
// candidate element. The SPV client never sees the whole chain, so this is
// an estimate, and the meter says so (it is only the formulas).
const candidatesPerTx = 2

// progressEvery is how often headless sync logs its progress.
const progressEvery = 2 * time.Second

// bridgeTick is how often the bridge checks the node's status.
const bridgeTick = 200 * time.Millisecond

// session is one running sync: the wallet, the light node, the bridge
// goroutine that feeds the privacy meter and the dashboard from the node's
// events, and the dashboard itself when there is a terminal.
type session struct {
	cfg     sessionConfig
	w       *wallet.Wallet
	network *netparams.Network
	node    *spv.Node
	log     *slog.Logger
	logSink *tui.LogSink
	closeLg func() error
	stderr  io.Writer
	nodeDir string
	sub     *spv.Subscription

	// Owned by the bridge goroutine until bridgeDone is closed.
	meter      *privacy.Meter
	seenSeq    int64
	transOff   int64 // bytes of the transcript already read
	bridgeDone chan struct{}

	tuiEvents  chan spv.Event
	tuiReading chan privacy.Reading

	done    chan error
	program *tea.Program

	mu          sync.Mutex
	lastReading *privacy.Reading
}

// newSession opens the light node for w.
func newSession(ctx context.Context, w *wallet.Wallet, network *netparams.Network, cfg sessionConfig, stderr io.Writer) (*session, error) {
	s := &session{cfg: cfg, w: w, network: network, stderr: stderr, seenSeq: -1,
		meter: privacy.NewMeter(privacy.MeterConfig{}), bridgeDone: make(chan struct{})}
	if cfg.members > 0 {
		s.meter.SetMembers(cfg.members)
	}
	var extra io.Writer
	if cfg.tui {
		s.logSink = tui.NewLogSink(512)
		extra = s.logSink
	}
	lg, closeLg, err := openLog(cfg, w.Dir(), stderr, extra)
	if err != nil {
		return nil, err
	}
	s.log, s.closeLg = lg, closeLg
	s.nodeDir = filepath.Join(w.Dir(), nodeDirName)
	if _, statErr := os.Stat(s.nodeDir); cfg.resetHeaders && statErr == nil {
		if err := headers.Remove(s.nodeDir); err != nil {
			_ = closeLg()
			return nil, fmt.Errorf("reset headers: %w", err)
		}
	}
	node, err := spv.New(spv.Config{
		Network:  network,
		DataDir:  s.nodeDir,
		Connect:  cfg.connect,
		MaxPeers: cfg.maxPeers,
		Watcher:  w,
		FPRate:   cfg.fpRate,
		Log:      lg,
	})
	if err != nil {
		_ = closeLg()
		if errors.Is(err, headers.ErrCorrupt) {
			return nil, fmt.Errorf("light node: %w; the wallet is intact: run sync again with --reset-headers to delete the header store and download the headers again", err)
		}
		if errors.Is(err, headers.ErrLocked) {
			return nil, fmt.Errorf("light node: %w: another bloomwatch is using %s", err, s.nodeDir)
		}
		return nil, fmt.Errorf("light node: %w", err)
	}
	s.node = node
	// The adversary keeps every filter it ever received: replay what
	// earlier runs sent before this run adds to it.
	s.readTranscript()
	return s, nil
}

// run starts the node and waits: for the dashboard to quit, for the sync
// to reach the tip (--until-synced), for the peers to stay unreachable
// past --peer-timeout, or for ctx to end.
func (s *session) run(ctx context.Context, stdout io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.sub = s.node.Subscribe()
	s.done = make(chan error, 1)
	if s.cfg.tui {
		s.tuiEvents = make(chan spv.Event, 1024)
		s.tuiReading = make(chan privacy.Reading, 64)
		s.program = s.newProgram(ctx, stdout, cancel)
	}
	if err := s.node.Start(ctx); err != nil {
		s.sub.Cancel()
		close(s.bridgeDone)
		return fmt.Errorf("start light node: %w", err)
	}
	go s.bridge(ctx)
	if s.cfg.onStart != nil {
		if err := s.cfg.onStart(ctx, s); err != nil {
			return err
		}
	}
	if s.program != nil {
		_, err := s.program.Run()
		if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("dashboard: %w", err)
		}
		select {
		case err := <-s.done:
			return err
		default:
			return s.node.Status().Err
		}
	}
	select {
	case err := <-s.done:
		return err
	case <-ctx.Done():
		// An interrupt (SIGINT/SIGTERM) ends a sync cleanly; stop
		// flushes the wallet.
		return s.node.Status().Err
	}
}

// newProgram builds the dashboard.
func (s *session) newProgram(ctx context.Context, stdout io.Writer, cancel context.CancelFunc) *tea.Program {
	var logLines <-chan string
	if s.logSink != nil {
		logLines = s.logSink.Lines()
	}
	model := tui.New(tui.Config{
		Network: s.network.Name,
		Events:  s.tuiEvents,
		Privacy: s.tuiReading,
		Wallet:  s.w,
		Reload:  s.node.ReloadFilter,
		Quit:    cancel,
		Log:     logLines,
	})
	out, ok := stdout.(*os.File)
	if !ok {
		out = os.Stdout
	}
	return tea.NewProgram(model, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithOutput(out), tea.WithInput(os.Stdin))
}

// finish ends the session's wait with err (nil: done), once.
func (s *session) finish(err error) {
	select {
	case s.done <- err:
	default:
		return // already finished
	}
	if s.program != nil {
		s.program.Quit()
	}
}

// bridge is the one goroutine of cmd/: it drains the node's events, feeds
// the privacy meter with every transcript record the node wrote, forwards
// both to the dashboard, and on its ticker ends the session when the
// wallet reaches the tip (--until-synced), when the node fails, or when no
// peer has been usable for --peer-timeout. It ends when the node closes
// the subscription (at Stop).
func (s *session) bridge(ctx context.Context) {
	defer close(s.bridgeDone)
	tick := time.NewTicker(bridgeTick)
	defer tick.Stop()
	lastProgress := time.Now()
	peerDeadline := time.Now().Add(s.cfg.peerTimeout)
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
			case s.cfg.untilSynced && st.Synced:
				s.finish(nil)
			}
			if len(st.Peers) > 0 || st.Synced {
				peerDeadline = time.Now().Add(s.cfg.peerTimeout)
			} else if s.cfg.peerTimeout > 0 && time.Now().After(peerDeadline) {
				s.finish(fmt.Errorf("no reachable peer for %s (tried %v)", s.cfg.peerTimeout, s.peerList()))
			}
			if !s.cfg.tui && time.Since(lastProgress) >= progressEvery {
				lastProgress = time.Now()
				s.log.Info("progress", "headers", st.HeaderHeight, "wallet", st.WatcherHeight,
					"peer_height", st.PeerHeight, "peers", len(st.Peers), "matched", st.Matched,
					"false_positives", st.FalsePositives, "bytes", st.BytesReceived)
			}
		}
	}
}

// handleEvent updates the meter and forwards ev to the dashboard.
func (s *session) handleEvent(ctx context.Context, ev spv.Event) {
	switch ev.(type) {
	case spv.FilterLoaded:
		s.readTranscript()
	case spv.BlockProcessed:
		st := s.node.Status()
		s.publish(s.meter.SetCandidates(st.Tested * candidatesPerTx))
	case spv.SyncDone:
		// The node publishes SyncDone once the watcher is applied (and
		// flushed) up to the best peer's tip: react at once rather than
		// at the next tick, which cost up to 200 ms of a short sync.
		if s.cfg.untilSynced {
			s.finish(nil)
		}
	}
	if s.tuiEvents == nil || ctx.Err() != nil {
		return // no dashboard (or it is gone): keep draining
	}
	select {
	case s.tuiEvents <- ev:
	case <-ctx.Done():
	}
}

// peerList names the peers sync tries.
func (s *session) peerList() []string {
	if len(s.cfg.connect) > 0 {
		return s.cfg.connect
	}
	return []string{"DNS seeds of " + s.network.Name}
}

// readTranscript observes the transcript records not seen yet.
func (s *session) readTranscript() {
	f, err := os.Open(filepath.Join(s.nodeDir, transcript.FileName))
	if err != nil {
		return // none written yet
	}
	defer f.Close()
	// Only what was appended since the last read, up to the last
	// complete line: the transcript grows by one record per filter sent
	// and a long session must not read it all again at every reload.
	if _, err := f.Seek(s.transOff, io.SeekStart); err != nil {
		s.log.Warn("privacy meter: read transcript", "err", err)
		return
	}
	chunk, err := io.ReadAll(f)
	if err != nil {
		s.log.Warn("privacy meter: read transcript", "err", err)
		return
	}
	end := bytes.LastIndexByte(chunk, '\n') + 1
	if end == 0 {
		return
	}
	recs, err := transcript.Read(bytes.NewReader(chunk[:end]))
	if err != nil {
		s.log.Warn("privacy meter: read transcript", "err", err)
		return
	}
	s.transOff += int64(end)
	for _, r := range recs {
		if int64(r.Seq) <= s.seenSeq {
			continue
		}
		s.seenSeq = int64(r.Seq)
		reading, err := s.meter.Observe(r)
		if err != nil {
			s.log.Warn("privacy meter", "err", err)
			continue
		}
		s.publish(reading)
	}
}

// publish keeps the latest reading and forwards it to the dashboard
// without ever blocking the bridge.
func (s *session) publish(r privacy.Reading) {
	s.mu.Lock()
	rc := r
	s.lastReading = &rc
	s.mu.Unlock()
	if s.tuiReading == nil {
		return
	}
	select {
	case s.tuiReading <- r:
	default:
		// The dashboard is behind; it gets the next reading.
	}
}

// stop stops the node (which flushes the wallet), waits for the bridge
// and closes the log.
func (s *session) stop() error {
	err := s.node.Stop()
	if s.sub != nil {
		<-s.bridgeDone
	}
	// A last look at the transcript: records written just before Stop.
	s.readTranscript()
	if cerr := s.closeLg(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}
