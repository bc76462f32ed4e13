package spv

import (
	"context"
	"errors"
	gonet "net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// p2wpkh returns a P2WPKH script for a 20-byte program filled with b.
func p2wpkh(b byte) []byte {
	s := []byte{0x00, 0x14}
	for range 20 {
		s = append(s, b)
	}
	return s
}

// fakeClock is a settable Clock.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) TickAfter(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.now.Add(d)
	return ch
}

func TestEventQueueOrderAndSlowReader(t *testing.T) {
	b := newBroadcaster()
	sub := b.subscribe()
	const n = 5000
	for i := range n { // the reader is not reading: publish must not block
		b.publish(BlockProcessed{Height: int32(i)})
	}
	if got := sub.Pending(); got < n-1 {
		t.Fatalf("pending %d, want about %d", got, n)
	}
	for i := range n {
		e, _ := recv(t, sub.Events(), "queued event")
		if h := e.(BlockProcessed).Height; h != int32(i) {
			t.Fatalf("event %d has height %d", i, h)
		}
	}
	sub.Cancel()
	sub.Cancel() // idempotent
	if _, ok := recv(t, sub.Events(), "close after Cancel"); ok {
		t.Fatal("channel open after Cancel")
	}
	b.publish(SyncDone{}) // no subscribers: fine
	b.close()
	late := b.subscribe()
	if _, ok := recv(t, late.Events(), "close of a late subscription"); ok {
		t.Fatal("subscription after close is open")
	}
}

func TestEventQueueCompacts(t *testing.T) {
	q := newEventQueue()
	defer q.stop()
	for i := range 3 * queueCompactMin {
		q.push(SyncDone{Height: int32(i)})
		if i%2 == 1 {
			recv(t, q.out, "queued event")
		}
	}
	q.mu.Lock()
	items, head := len(q.items), q.head
	q.mu.Unlock()
	if items > 3*queueCompactMin || head >= 2*queueCompactMin {
		t.Fatalf("queue not compacted: %d items, head %d", items, head)
	}
}

func TestBanManagerScoresBansAndPersists(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	bm, err := openBanManager(dir, clk, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	const a = "127.0.0.1:1"
	for i := 0; i < 4; i++ {
		if _, _, banned, err := bm.Misbehaving(a, misbehaviorUnmatchedTx, "x"); err != nil || banned {
			t.Fatalf("banned after %d unmatched txs (err %v)", i+1, err)
		}
	}
	score, ban, banned, err := bm.Misbehaving(a, misbehaviorUnmatchedTx, "fifth")
	if err != nil || !banned || score != banThreshold || ban.Until != clk.now.Add(time.Hour) {
		t.Fatalf("score %d banned %v ban %+v err %v", score, banned, ban, err)
	}
	if _, _, banned, _ := bm.Misbehaving("127.0.0.1:2", misbehaviorInvalidMerkleTree, ""); !banned {
		t.Fatal("invalid merkle tree must ban at once")
	}
	bm2, err := openBanManager(dir, clk, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(bm2.Bans()) != 2 {
		t.Fatalf("reloaded bans %+v", bm2.Bans())
	}
	clk.now = clk.now.Add(2 * time.Hour)
	if _, ok := bm2.IsBanned(a); ok {
		t.Fatal("ban did not expire")
	}
	if err := os.WriteFile(filepath.Join(dir, banListFile), []byte("{nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openBanManager(dir, clk, time.Hour); !errors.Is(err, ErrCorruptBanList) {
		t.Fatalf("corrupt list: %v", err)
	}
	if _, err := openBanManager(dir, clk, 0); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("zero duration: %v", err)
	}
}

func TestMisbehaviorNames(t *testing.T) {
	for m := misbehaviorBadHeader; m <= misbehaviorOmittedTx; m++ {
		if m.Score() == 0 || m.String() == "" || m.String()[0] == 'm' {
			t.Errorf("%d: score %d name %q", m, m.Score(), m.String())
		}
	}
	if misbehavior(200).Score() != 0 {
		t.Error("unknown kind scores")
	}
}

func TestBuildFilterPolicy(t *testing.T) {
	op := wire.OutPoint{Hash: chainhash.Hash{1}, Index: 3}
	els := watch.Elements{Data: [][]byte{{1, 2, 3}, {4, 5, 6}}, OutPoints: []wire.OutPoint{op}}
	f, err := filterpolicy.BuildFilter(els, filterpolicy.DefaultFPRate, 42)
	if err != nil {
		t.Fatal(err)
	}
	if f.Flags() != bip37.UpdateAll || f.Tweak() != 42 || f.HashFuncs() == 0 {
		t.Fatalf("filter flags %v tweak %d k %d", f.Flags(), f.Tweak(), f.HashFuncs())
	}
	if d := (watch.ElementDelta{Data: els.Data, OutPoints: els.OutPoints}); !deltaHeld(f, d, true) || !deltaHeld(f, d, false) {
		t.Fatal("filter does not hold its elements")
	}
	more := els
	more.Data = append(more.Data, []byte{9, 9, 9, 9, 9, 9})
	if d := (watch.ElementDelta{Data: more.Data}); deltaHeld(f, d, true) || deltaHeld(f, d, false) {
		t.Fatal("filter holds an element it lacks")
	}
	if deltaHeld(f, watch.ElementDelta{OutPoints: []wire.OutPoint{{Hash: chainhash.Hash{2}}}}, true) {
		t.Fatal("filter holds an outpoint it lacks")
	}
	// Same capacity bucket, same tweak: the bits of the smaller set are
	// a subset of the larger one's (reloads add bits, never move them).
	g, err := filterpolicy.BuildFilter(more, filterpolicy.DefaultFPRate, 42)
	if err != nil {
		t.Fatal(err)
	}
	if g.Size() != f.Size() {
		t.Fatalf("sizes %d and %d in one capacity bucket", f.Size(), g.Size())
	}
	for i, b := range f.Bits() {
		if b&^g.Bits()[i] != 0 {
			t.Fatalf("byte %d: bits of the old filter missing in the new one", i)
		}
	}
	// An empty element set still gives a match-nothing filter, not a
	// match-everything one.
	e, err := filterpolicy.BuildFilter(watch.Elements{}, filterpolicy.DefaultFPRate, 1)
	if err != nil || e.Size() == 0 || e.MatchTx(wire.NewMsgTx(1)) {
		t.Fatalf("empty filter: %v size %d", err, e.Size())
	}
	// Rates that give k = 0 are refused.
	if _, err := filterpolicy.BuildFilter(els, 0.9, 1); !errors.Is(err, filterpolicy.ErrFilterMatchesAll) {
		t.Fatalf("k=0 filter: %v", err)
	}
}

func TestTweakPersists(t *testing.T) {
	dir := t.TempDir()
	a, rec, err := loadOrCreateTweak(dir)
	if err != nil || rec {
		t.Fatal(err, rec)
	}
	b, rec, err := loadOrCreateTweak(dir)
	if err != nil || a != b || rec {
		t.Fatalf("tweak %d then %d (%v, recovered %v)", a, b, err, rec)
	}
	if err := os.WriteFile(filepath.Join(dir, filterStateFile), []byte(`{"version":9}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadOrCreateTweak(dir); !errors.Is(err, ErrCorruptFilterState) {
		t.Fatalf("bad version: %v", err)
	}
}

// TestTweakRecoveredFromTranscript: filter.json deleted beside a
// transcript that recorded filters: the tweak of the last filterload comes
// back (a fresh random one would make the next filter independent of the
// ones the peers hold); a transcript that cannot be read stops it without
// writing anything.
func TestTweakRecoveredFromTranscript(t *testing.T) {
	dir := t.TempDir()
	tr, _, err := transcript.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tweak := range []uint32{7, 0xdeadbeef} {
		f, err := bip37.NewFilter(20, 0.001, tweak, bip37.UpdateAll)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Append(transcript.Record{Time: time.Unix(1_700_000_000, 0), Peer: "127.0.0.1:1", Kind: transcript.KindFilterLoad,
			Filter: f.Serialize(), Reason: transcript.ReasonInitial}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	got, rec, err := loadOrCreateTweak(dir)
	if err != nil || !rec || got != 0xdeadbeef {
		t.Fatalf("tweak %#x, recovered %v, %v; want the last filterload's 0xdeadbeef", got, rec, err)
	}
	if again, rec, err := loadOrCreateTweak(dir); err != nil || rec || again != got {
		t.Fatalf("not written back: %#x %v %v", again, rec, err)
	}
	// A transcript that cannot be read: an error, no filter.json.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, transcript.FileName), []byte("{not json}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadOrCreateTweak(bad); err == nil {
		t.Fatal("an unreadable transcript gave a tweak")
	}
	if _, err := os.Stat(filepath.Join(bad, filterStateFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("filter.json written after a failure: %v", err)
	}
}

func TestNewRefusesCorruptTranscript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, transcript.FileName)
	if err := os.WriteFile(path, []byte("garbage\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	net, err := netparams.Lookup("regtest")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(0, p2wpkh(1))})
	if !errors.Is(err, ErrCorruptTranscript) || !errors.Is(err, transcript.ErrBad) {
		t.Fatalf("corrupt transcript: %v", err)
	}
}

// failingLog is a transcript that cannot be written (a full or broken
// disk).
type failingLog struct{}

func (failingLog) Append(r transcript.Record) (transcript.Record, error) {
	return r, errors.New("no space left on device")
}
func (failingLog) Close() error { return nil }

func TestFilterNotSentWhenTranscriptFails(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	n.trans = failingLog{}
	var sent []wire.Message
	p, err := peer.NewOutboundPeer(&peer.Config{ChainParams: n.cfg.Network.Params}, "sim:1")
	if err != nil {
		t.Fatal(err)
	}
	ps := &peerState{addr: "sim:1", p: p}
	ps.sendHook = func(msg wire.Message) { sent = append(sent, msg) }
	m.handle(peerReadyMsg{ps: ps})
	for _, msg := range sent {
		if _, ok := msg.(*wire.MsgFilterLoad); ok {
			t.Fatal("a filterload went out that the transcript does not hold")
		}
	}
	if !errors.Is(m.st.Err, ErrTranscriptWrite) {
		t.Fatalf("sync error %v, want ErrTranscriptWrite", m.st.Err)
	}
	if ps.mirror != nil {
		t.Fatal("mirror set for a filter never sent")
	}
}

func TestConfigDefaults(t *testing.T) {
	if _, err := (Config{}).withDefaults(); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("empty config: %v", err)
	}
	net, err := netparams.Lookup("regtest")
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Network: net, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(0)}
	c, err := base.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxPeers != DefaultMaxPeers || c.FPRate != filterpolicy.DefaultFPRate || c.Tuning.Window < c.Tuning.BatchSize || c.Log == nil || c.Tuning.Clock == nil {
		t.Fatalf("defaults %+v", c)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.FPRate = 1 },
		func(c *Config) { c.Tuning.ReloadFPRatio = 0.5 },
		func(c *Config) { c.MaxPeers = -1 },
		func(c *Config) { c.Watcher = nil },
		func(c *Config) { c.DataDir = "" },
	} {
		c := base
		bad(&c)
		if _, err := c.withDefaults(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("bad config accepted: %v", err)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	ok := &wire.MsgVersion{ProtocolVersion: int32(wire.ProtocolVersion), Services: wire.SFNodeNetwork | wire.SFNodeBloom}
	if err := checkVersion(ok); err != nil {
		t.Fatal(err)
	}
	noBloom := *ok
	noBloom.Services = wire.SFNodeNetwork
	if err := checkVersion(&noBloom); !errors.Is(err, ErrPeerNoBloom) {
		t.Fatalf("no bloom: %v", err)
	}
	old := *ok
	old.ProtocolVersion = 70001
	if err := checkVersion(&old); !errors.Is(err, ErrPeerTooOld) {
		t.Fatalf("old: %v", err)
	}
}

func TestNodeLifecycleWithoutPeers(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	if err != nil {
		t.Fatal(err)
	}
	// A port nobody listens on: the node keeps dialing with backoff.
	ln, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	n, err := New(Config{Network: net, DataDir: dir, Connect: []string{addr}, Watcher: watchtest.NewMemWatcher(1),
		RetryMin: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(1)}); err == nil {
		t.Fatal("second node on the same data dir opened")
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(ctx); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second start: %v", err)
	}
	sub := n.Subscribe()
	wctx, wcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	if err := n.WaitSynced(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("synced without peers: %v", err)
	}
	wcancel()
	if st := n.Status(); st.Synced || len(st.Peers) != 0 || st.HeaderHeight != 0 {
		t.Fatalf("status %+v", st)
	}
	cancel() // the caller's context ends: the node stops itself
	deadline := time.Now().Add(5 * time.Second)
	for !n.Status().Stopped {
		if time.Now().After(deadline) {
			t.Fatal("node did not stop with its context")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	for ok := true; ok; { // the node closes its subscriptions at Stop
		_, ok = recv(t, sub.Events(), "close of the subscription at Stop")
	}
	if err := n.WaitSynced(context.Background()); !errors.Is(err, ErrStopped) {
		t.Fatalf("wait after stop: %v", err)
	}
	if err := n.Start(context.Background()); !errors.Is(err, ErrStopped) {
		t.Fatalf("start after stop: %v", err)
	}
	for time.Now().Before(deadline) && runtime.NumGoroutine() > before {
		time.Sleep(5 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines after stop, %d before", g, before)
	}
	// The data dir can be opened again.
	n2, err := New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := n2.Stop(); err != nil {
		t.Fatal(err)
	}
	n3, err := New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := n3.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestStartWithoutPeerSource(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(Config{Network: net, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	if err := n.Start(context.Background()); !errors.Is(err, ErrNoPeerSource) {
		t.Fatalf("start without peers or seeds: %v", err)
	}
}

// netListen listens on a free loopback port.
func netListen() (gonet.Listener, error) { return gonet.Listen("tcp", "127.0.0.1:0") }

func TestFixedAddressRotation(t *testing.T) {
	// 5 addresses, 2 slots: slot 0 cycles 0,2,4; slot 1 cycles 1,3.
	want := map[int][]int{0: {0, 2, 4, 0}, 1: {1, 3, 1, 3}}
	for slot, seq := range want {
		for attempt, idx := range seq {
			if got := fixedIndex(5, 2, slot, attempt); got != idx {
				t.Errorf("slot %d attempt %d: %d, want %d", slot, attempt, got, idx)
			}
		}
	}
	if got := fixedIndex(2, 3, 1, 7); got != 1 {
		t.Errorf("more slots than addresses: %d", got)
	}
	if got := dedupe([]string{"a", "b", "a", "c", "b"}); len(got) != 3 || got[2] != "c" {
		t.Errorf("dedupe %v", got)
	}
}
