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
	"github.com/stretchr/testify/require"
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
	got := sub.Pending()
	require.GreaterOrEqual(t, got, n-1, "pending %d, want about %d", got, n)
	for i := range n {
		e, _ := recv(t, sub.Events(), "queued event")
		h := e.(BlockProcessed).Height
		require.Equal(t, int32(i), h, "event %d has height %d", i, h)
	}
	sub.Cancel()
	sub.Cancel() // idempotent
	_, ok := recv(t, sub.Events(), "close after Cancel")
	require.False(t, ok, "channel open after Cancel")
	b.publish(SyncDone{}) // no subscribers: fine
	b.close()
	late := b.subscribe()
	_, ok = recv(t, late.Events(), "close of a late subscription")
	require.False(t, ok, "subscription after close is open")
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
	require.LessOrEqual(t, items, 3*queueCompactMin, "queue not compacted: %d items, head %d", items, head)
	require.Less(t, head, 2*queueCompactMin, "queue not compacted: %d items, head %d", items, head)
}

func TestBanManagerScoresBansAndPersists(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	bm, err := openBanManager(dir, clk, time.Hour)
	require.NoError(t, err)
	const a = "127.0.0.1:1"
	for i := 0; i < 4; i++ {
		_, _, banned, err := bm.Misbehaving(a, misbehaviorUnmatchedTx, "x")
		require.NoError(t, err, "banned after %d unmatched txs (err %v)", i+1, err)
		require.False(t, banned, "banned after %d unmatched txs (err %v)", i+1, err)
	}
	score, ban, banned, err := bm.Misbehaving(a, misbehaviorUnmatchedTx, "fifth")
	require.NoError(t, err, "score %d banned %v ban %+v", score, banned, ban)
	require.True(t, banned, "score %d banned %v ban %+v err %v", score, banned, ban, err)
	require.Equal(t, uint32(banThreshold), score, "score %d banned %v ban %+v err %v", score, banned, ban, err)
	require.False(t, ban.Until != clk.now.Add(time.Hour), "score %d banned %v ban %+v err %v", score, banned, ban, err)
	_, _, banned, _ = bm.Misbehaving("127.0.0.1:2", misbehaviorInvalidMerkleTree, "")
	require.True(t, banned, "invalid merkle tree must ban at once")
	bm2, err := openBanManager(dir, clk, time.Hour)
	require.NoError(t, err)
	require.Len(t, bm2.Bans(), 2, "reloaded bans %+v", bm2.Bans())
	clk.now = clk.now.Add(2 * time.Hour)
	_, ok := bm2.IsBanned(a)
	require.False(t, ok, "ban did not expire")
	require.NoError(t, os.WriteFile(filepath.Join(dir, banListFile), []byte("{nope"), 0o600))
	_, err = openBanManager(dir, clk, time.Hour)
	require.ErrorIs(t, err, ErrCorruptBanList, "corrupt list: %v", err)
	_, err = openBanManager(dir, clk, 0)
	require.ErrorIs(t, err, ErrBadConfig, "zero duration: %v", err)
}

func TestMisbehaviorNames(t *testing.T) {
	for m := misbehaviorBadHeader; m <= misbehaviorOmittedTx; m++ {
		require.NotEqual(t, uint32(0), m.Score(), "%d: score %d name %q", m, m.Score(), m.String())
		require.NotEqual(t, "", m.String(), "%d: score %d name %q", m, m.Score(), m.String())
		require.NotEqual(t, byte('m'), m.String()[0], "%d: score %d name %q", m, m.Score(), m.String())
	}
	require.Equal(t, uint32(0), misbehavior(200).Score(), "unknown kind scores")
}

func TestBuildFilterPolicy(t *testing.T) {
	op := wire.OutPoint{Hash: chainhash.Hash{1}, Index: 3}
	els := watch.Elements{Data: [][]byte{{1, 2, 3}, {4, 5, 6}}, OutPoints: []wire.OutPoint{op}}
	f, err := filterpolicy.BuildFilter(els, filterpolicy.DefaultFPRate, 42)
	require.NoError(t, err)
	require.Equal(t, bip37.UpdateAll, f.Flags(), "filter flags %v tweak %d k %d", f.Flags(), f.Tweak(), f.HashFuncs())
	require.Equal(t, uint32(42), f.Tweak(), "filter flags %v tweak %d k %d", f.Flags(), f.Tweak(), f.HashFuncs())
	require.NotEqual(t, uint32(0), f.HashFuncs(), "filter flags %v tweak %d k %d", f.Flags(), f.Tweak(), f.HashFuncs())
	d := (watch.ElementDelta{Data: els.Data, OutPoints: els.OutPoints})
	require.True(t, deltaHeld(f, d, true), "filter does not hold its elements")
	require.True(t, deltaHeld(f, d, false), "filter does not hold its elements")
	more := els
	more.Data = append(more.Data, []byte{9, 9, 9, 9, 9, 9})
	d = (watch.ElementDelta{Data: more.Data})
	require.False(t, deltaHeld(f, d, true), "filter holds an element it lacks")
	require.False(t, deltaHeld(f, d, false), "filter holds an element it lacks")
	require.False(t, deltaHeld(f, watch.ElementDelta{OutPoints: []wire.OutPoint{{Hash: chainhash.Hash{2}}}}, true), "filter holds an outpoint it lacks")
	// Same capacity bucket, same tweak: the bits of the smaller set are
	// a subset of the larger one's (reloads add bits, never move them).
	g, err := filterpolicy.BuildFilter(more, filterpolicy.DefaultFPRate, 42)
	require.NoError(t, err)
	require.Equal(t, f.Size(), g.Size(), "sizes %d and %d in one capacity bucket", f.Size(), g.Size())
	for i, b := range f.Bits() {
		require.Equal(t, byte(0), b&^g.Bits()[i], "byte %d: bits of the old filter missing in the new one", i)
	}
	// An empty element set still gives a match-nothing filter, not a
	// match-everything one.
	e, err := filterpolicy.BuildFilter(watch.Elements{}, filterpolicy.DefaultFPRate, 1)
	require.NoError(t, err, "empty filter: %v size %d", err, e.Size())
	require.NotEqual(t, 0, e.Size(), "empty filter: %v size %d", err, e.Size())
	require.False(t, e.MatchTx(wire.NewMsgTx(1)), "empty filter: %v size %d", err, e.Size())
	// Rates that give k = 0 are refused.
	_, err = filterpolicy.BuildFilter(els, 0.9, 1)
	require.ErrorIs(t, err, filterpolicy.ErrFilterMatchesAll, "k=0 filter: %v", err)
}

func TestTweakPersists(t *testing.T) {
	dir := t.TempDir()
	a, rec, err := loadOrCreateTweak(dir)
	require.NoError(t, err, "%v %v", err, rec)
	require.False(t, rec, "%v %v", err, rec)
	b, rec, err := loadOrCreateTweak(dir)
	require.NoError(t, err, "tweak %d then %d (%v, recovered %v)", a, b, err, rec)
	require.Equal(t, b, a, "tweak %d then %d (%v, recovered %v)", a, b, err, rec)
	require.False(t, rec, "tweak %d then %d (%v, recovered %v)", a, b, err, rec)
	require.NoError(t, os.WriteFile(filepath.Join(dir, filterStateFile), []byte(`{"version":9}`), 0o600))
	_, _, err = loadOrCreateTweak(dir)
	require.ErrorIs(t, err, ErrCorruptFilterState, "bad version: %v", err)
}

// TestTweakRecoveredFromTranscript: filter.json deleted beside a
// transcript that recorded filters: the tweak of the last filterload comes
// back (a fresh random one would make the next filter independent of the
// ones the peers hold); a transcript that cannot be read stops it without
// writing anything.
func TestTweakRecoveredFromTranscript(t *testing.T) {
	dir := t.TempDir()
	tr, _, err := transcript.Open(dir)
	require.NoError(t, err)
	for _, tweak := range []uint32{7, 0xdeadbeef} {
		f, err := bip37.NewFilter(20, 0.001, tweak, bip37.UpdateAll)
		require.NoError(t, err)
		_, err = tr.Append(transcript.Record{Time: time.Unix(1_700_000_000, 0), Peer: "127.0.0.1:1", Kind: transcript.KindFilterLoad,
			Filter: f.Serialize(), Reason: transcript.ReasonInitial})
		require.NoError(t, err)
	}
	require.NoError(t, tr.Close())
	got, rec, err := loadOrCreateTweak(dir)
	require.NoError(t, err, "tweak %#x, recovered %v, %v; want the last filterload's 0xdeadbeef", got, rec, err)
	require.True(t, rec, "tweak %#x, recovered %v, %v; want the last filterload's 0xdeadbeef", got, rec, err)
	require.Equal(t, uint32(0xdeadbeef), got, "tweak %#x, recovered %v, %v; want the last filterload's 0xdeadbeef", got, rec, err)
	again, rec, err := loadOrCreateTweak(dir)
	require.NoError(t, err, "not written back: %#x %v", again, rec)
	require.False(t, rec, "not written back: %#x %v %v", again, rec, err)
	require.Equal(t, got, again, "not written back: %#x %v %v", again, rec, err)
	// A transcript that cannot be read: an error, no filter.json.
	bad := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bad, transcript.FileName), []byte("{not json}\n"), 0o600))
	_, _, err = loadOrCreateTweak(bad)
	require.Error(t, err, "an unreadable transcript gave a tweak")
	_, err = os.Stat(filepath.Join(bad, filterStateFile))
	require.ErrorIs(t, err, os.ErrNotExist, "filter.json written after a failure: %v", err)
}

func TestNewRefusesCorruptTranscript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, transcript.FileName)
	require.NoError(t, os.WriteFile(path, []byte("garbage\n{}\n"), 0o600))
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	_, err = New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(0, p2wpkh(1))})
	require.ErrorIs(t, err, ErrCorruptTranscript, "corrupt transcript: %v", err)
	require.ErrorIs(t, err, transcript.ErrBad, "corrupt transcript: %v", err)
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
	require.NoError(t, err)
	ps := &peerState{addr: "sim:1", p: p}
	ps.sendHook = func(msg wire.Message) { sent = append(sent, msg) }
	m.handle(peerReadyMsg{ps: ps})
	for _, msg := range sent {
		_, ok := msg.(*wire.MsgFilterLoad)
		require.False(t, ok, "a filterload went out that the transcript does not hold")
	}
	require.ErrorIs(t, m.st.Err, ErrTranscriptWrite, "sync error %v, want ErrTranscriptWrite", m.st.Err)
	require.Nil(t, ps.mirror, "mirror set for a filter never sent")
}

func TestConfigDefaults(t *testing.T) {
	_, err := (Config{}).withDefaults()
	require.ErrorIs(t, err, ErrBadConfig, "empty config: %v", err)
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	base := Config{Network: net, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(0)}
	c, err := base.withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultMaxPeers, c.MaxPeers, "defaults %+v", c)
	require.Equal(t, filterpolicy.DefaultFPRate, c.FPRate, "defaults %+v", c)
	require.GreaterOrEqual(t, c.Tuning.Window, c.Tuning.BatchSize, "defaults %+v", c)
	require.NotNil(t, c.Log, "defaults %+v", c)
	require.False(t, c.clock == nil, "defaults %+v", c)
	for _, bad := range []func(*Config){
		func(c *Config) { c.FPRate = 1 },
		func(c *Config) { c.Tuning.ReloadFPRatio = 0.5 },
		func(c *Config) { c.MaxPeers = -1 },
		func(c *Config) { c.Watcher = nil },
		func(c *Config) { c.DataDir = "" },
	} {
		c := base
		bad(&c)
		_, err := c.withDefaults()
		require.ErrorIs(t, err, ErrBadConfig, "bad config accepted: %v", err)
	}
}

func TestCheckVersion(t *testing.T) {
	ok := &wire.MsgVersion{ProtocolVersion: int32(wire.ProtocolVersion), Services: wire.SFNodeNetwork | wire.SFNodeBloom}
	require.NoError(t, checkVersion(ok))
	noBloom := *ok
	noBloom.Services = wire.SFNodeNetwork
	err := checkVersion(&noBloom)
	require.ErrorIs(t, err, ErrPeerNoBloom, "no bloom: %v", err)
	old := *ok
	old.ProtocolVersion = 70001
	err = checkVersion(&old)
	require.ErrorIs(t, err, ErrPeerTooOld, "old: %v", err)
}

func TestNodeLifecycleWithoutPeers(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	// A port nobody listens on: the node keeps dialing with backoff.
	ln, err := netListen()
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	n, err := New(Config{Network: net, DataDir: dir, Connect: []string{addr}, Watcher: watchtest.NewMemWatcher(1), Tuning: Tuning{RetryMin: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond}})
	require.NoError(t, err)
	_, err = New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(1)})
	require.Error(t, err, "second node on the same data dir opened")
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, n.Start(ctx))
	require.ErrorIs(t, n.Start(ctx), ErrAlreadyStarted, "second start")
	sub := n.Subscribe()
	wctx, wcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	require.ErrorIs(t, n.WaitSynced(wctx), context.DeadlineExceeded, "synced without peers")
	wcancel()
	st := n.Status()
	require.False(t, st.Synced, "status %+v", st)
	require.Len(t, st.Peers, 0, "status %+v", st)
	require.Equal(t, int32(0), st.HeaderHeight, "status %+v", st)
	cancel() // the caller's context ends: the node stops itself
	deadline := time.Now().Add(5 * time.Second)
	for !n.Status().Stopped {
		require.False(t, time.Now().After(deadline), "node did not stop with its context")
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, n.Stop())
	for ok := true; ok; { // the node closes its subscriptions at Stop
		_, ok = recv(t, sub.Events(), "close of the subscription at Stop")
	}
	require.ErrorIs(t, n.WaitSynced(context.Background()), ErrStopped, "wait after stop")
	require.ErrorIs(t, n.Start(context.Background()), ErrStopped, "start after stop")
	for time.Now().Before(deadline) && runtime.NumGoroutine() > before {
		time.Sleep(5 * time.Millisecond)
	}
	g := runtime.NumGoroutine()
	require.LessOrEqual(t, g, before, "%d goroutines after stop, %d before", g, before)
	// The data dir can be opened again.
	n2, err := New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(1)})
	require.NoError(t, err)
	require.NoError(t, n2.Stop())
	n3, err := New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(1)})
	require.NoError(t, err)
	require.NoError(t, n3.Stop())
}

func TestStartWithoutPeerSource(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n, err := New(Config{Network: net, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(1)})
	require.NoError(t, err)
	defer n.Stop()
	err = n.Start(context.Background())
	require.ErrorIs(t, err, ErrNoPeerSource, "start without peers or seeds: %v", err)
}

// netListen listens on a free loopback port.
func netListen() (gonet.Listener, error) { return gonet.Listen("tcp", "127.0.0.1:0") }

func TestFixedAddressRotation(t *testing.T) {
	// 5 addresses, 2 slots: slot 0 cycles 0,2,4; slot 1 cycles 1,3.
	want := map[int][]int{0: {0, 2, 4, 0}, 1: {1, 3, 1, 3}}
	for slot, seq := range want {
		for attempt, idx := range seq {
			got := fixedIndex(5, 2, slot, attempt)
			require.Equal(t, idx, got, "slot %d attempt %d: %d, want %d", slot, attempt, got, idx)
		}
	}
	got := fixedIndex(2, 3, 1, 7)
	require.Equal(t, 1, got, "more slots than addresses: %d", got)
	deduped := dedupe([]string{"a", "b", "a", "c", "b"})
	require.Len(t, deduped, 3, "dedupe %v", deduped)
	require.Equal(t, "c", deduped[2], "dedupe %v", deduped)
}
