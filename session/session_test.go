package session_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// syncOnce runs one session over the wallet of dir until it is synced and
// returns its summary.
func syncOnce(t *testing.T, ctx context.Context, dir, peer string, spec wallet.CreateConfig) *session.Summary {
	t.Helper()
	w, _, err := session.OpenWallet(dir, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{peer}, MaxPeers: 1},
		UntilSynced: true, PeerTimeout: time.Minute, Stderr: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	werr := s.Wait(ctx)
	sum, serr := s.Summary()
	if err := errors.Join(werr, s.Stop(), serr); err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestSessionSyncsAndFeedsTheMeter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := testnet.NewT(t, testnet.Options{})
	key, err := testnet.NewKeyring(testnet.DemoSeed, h.Params())
	if err != nil {
		t.Fatal(err)
	}
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: 40, TxsPerBlock: 3, Keyring: key, WatchAddrs: 4, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "w")
	spec := wallet.CreateConfig{Network: "regtest", Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
		GapExternal: wallet.DefaultGapExternal, GapInternal: wallet.DefaultGapInternal}
	sum := syncOnce(t, ctx, dir, h.Node().P2PAddr(), spec)
	if sum.TipHash != truth.TipHash.String() || sum.BalanceSat != truth.Balance || len(sum.Txs) != len(truth.Txs) {
		t.Fatalf("summary tip %s balance %d txs %d; truth %s %d %d", sum.TipHash, sum.BalanceSat, len(sum.Txs),
			truth.TipHash, truth.Balance, len(truth.Txs))
	}
	if sum.Timing.FirstFilterMs <= 0 || sum.Timing.SyncedMs < sum.Timing.FirstFilterMs {
		t.Fatalf("timing %+v", sum.Timing)
	}
	// The meter saw every filter the node recorded, from the events.
	raw, err := os.ReadFile(session.TranscriptPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	all, err := transcript.Read(bytesReader(raw))
	recs := transcript.FilterRecords(all)
	if err != nil || len(recs) == 0 {
		t.Fatalf("transcript: %d filter records, %v", len(recs), err)
	}
	if sum.Privacy == nil || sum.Privacy.Seq != recs[len(recs)-1].Seq || sum.Privacy.Candidates == 0 {
		t.Fatalf("privacy reading %+v, last filter record seq %d", sum.Privacy, recs[len(recs)-1].Seq)
	}
	// The meter's wallet size is the wallet's own count, not the filter's
	// estimate m^: N = the addresses on chain (used), beside
	// the addresses watched and the filter's elements.
	p := sum.Privacy
	if !p.WalletKnown || p.Members != sum.Addresses.Used || p.Members == 0 || p.Watched != sum.Addresses.Derived ||
		p.Elements != sum.Filter.Elements-sum.Decoys || p.Elements < p.Watched {
		t.Fatalf("meter wallet: N %d, watched %d, elements %d; wallet: used %d of %d derived, %d utxos, filter elements %d",
			p.Members, p.Watched, p.Elements, sum.Addresses.Used, sum.Addresses.Derived, len(sum.UTXOs), sum.Filter.Elements)
	}
	if p.ObservedTxTested == 0 || p.ObservedTxFPCI == nil || !p.ObservedTxFPCI.Contains(p.ObservedTxFPRate) {
		t.Fatalf("observed rate %v of %d tested, interval %+v", p.ObservedTxFPRate, p.ObservedTxTested, p.ObservedTxFPCI)
	}
	t.Logf("meter: N %d on chain of %d watched, %d elements (m^ %.1f); precision %.3f, entropy %.2f bits",
		p.Members, p.Watched, p.Elements, p.EstElements, p.Precision, p.Entropy)
	// A restart with nothing new: the meter starts from the earlier
	// filters (read once, by the node) and adds the new one.
	again := syncOnce(t, ctx, dir, h.Node().P2PAddr(), spec)
	// The restart's filterload is the first record the new run writes.
	if again.TipHash != sum.TipHash || again.Privacy == nil || again.Privacy.Seq != uint64(len(all)) {
		t.Fatalf("restart: tip %s, reading %+v (want seq %d)", again.TipHash, again.Privacy, len(all))
	}
}

func TestSessionGivesUpWithoutPeers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	w, _, err := session.OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, GapExternal: 1, GapInternal: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{addr}}, PeerTimeout: 500 * time.Millisecond, Stderr: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	err = s.Wait(ctx)
	if serr := s.Stop(); serr != nil {
		t.Fatal(serr)
	}
	if !errors.Is(err, session.ErrNoPeer) {
		t.Fatalf("wait: %v, want ErrNoPeer", err)
	}
}

// TestEventsWithoutDashboard: a session without a dashboard hands its
// events to the program that asks (Events was nil unless Config.Dashboard
// was set): the same channel at every call, closed when the session stops.
func TestEventsWithoutDashboard(t *testing.T) {
	w, _, err := session.OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, GapExternal: 1, GapInternal: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{"127.0.0.1:1"}}, Stderr: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	events := s.Events()
	if events == nil || s.Events() != events {
		t.Fatalf("Events() = %v, then %v: want one channel", events, s.Events())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		case <-ctx.Done():
			t.Fatal("the events channel was not closed at Stop")
		}
	}
}

func TestOpenWalletNeedsANetwork(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := session.OpenWallet(dir, wallet.CreateConfig{}); !errors.Is(err, session.ErrNeedNetwork) {
		t.Fatalf("err %v", err)
	}
	if wallet.Exists(dir) {
		t.Fatal("a wallet was written")
	}
}

func TestSessionPassesTheProxy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	w, _, err := session.OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, GapExternal: 1, GapInternal: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{addr}, Proxy: "tor.example:9050"}, Stderr: testWriter{t}}); !errors.Is(err, spv.ErrBadConfig) {
		t.Fatalf("proxy by name: %v, want spv.ErrBadConfig", err)
	}
	for _, shared := range []bool{false, true} {
		proxy, err := testnet.StartSOCKS(testnet.SOCKSOptions{Auth: testnet.SOCKSPasswordOrNone})
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		s, err := session.New(session.Config{Wallet: w, PeerTimeout: 500 * time.Millisecond,
			Node: spv.Config{Connect: []string{addr}, Proxy: proxy.Addr(), NoProxyIsolation: shared}, Stderr: testWriter{t}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		err = s.Wait(ctx)
		cancel()
		if serr := s.Stop(); serr != nil {
			t.Fatal(serr)
		}
		if !errors.Is(err, session.ErrNoPeer) {
			t.Fatalf("wait: %v, want ErrNoPeer", err)
		}
		conns := proxy.Conns()
		if len(conns) == 0 {
			t.Fatalf("shared=%v: the peer was dialed around the proxy", shared)
		}
		for _, c := range conns {
			if c.Dest != addr || (c.User == "") != shared {
				t.Errorf("shared=%v: proxy request %+v", shared, c)
			}
		}
	}
}

// TestNodeConfigIsPassedOn checks that Config.Node reaches the light node
// as given (a field the session has no copy of: StallTimeout, CheckPeers)
// and that New refuses the four fields the session sets itself.
func TestNodeConfigIsPassedOn(t *testing.T) {
	w, _, err := session.OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, GapExternal: 1, GapInternal: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := session.New(session.Config{Wallet: w, Node: spv.Config{Tuning: spv.Tuning{CheckPeers: spv.MaxCheckPeers + 1}},
		Stderr: testWriter{t}}); !errors.Is(err, spv.ErrBadConfig) {
		t.Fatalf("CheckPeers past the maximum: %v, want spv.ErrBadConfig", err)
	}
	for name, node := range map[string]spv.Config{
		"DataDir": {DataDir: t.TempDir()},
		"Watcher": {Watcher: w},
		"Log":     {Log: slog.Default()},
	} {
		if _, err := session.New(session.Config{Wallet: w, Node: node, Stderr: testWriter{t}}); !errors.Is(err, spv.ErrBadConfig) {
			t.Errorf("Node.%s set: %v, want spv.ErrBadConfig", name, err)
		}
	}
}

// TestOpenWalletAddsWhatItLacks opens an existing wallet with a
// configuration that names one more address and one more raw script: both
// are imported, the address given again is no error.
func TestOpenWalletAddsWhatItLacks(t *testing.T) {
	dir := t.TempDir()
	first := wallet.CreateConfig{Network: "regtest", Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}}
	w, created, err := session.OpenWallet(dir, first)
	if err != nil || !created {
		t.Fatalf("create: %v, created %v", err, created)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	script := append([]byte{0x00, 0x14}, bytes.Repeat([]byte{7}, 20)...) // P2WPKH
	again := first
	again.Addresses = append(again.Addresses, "bcrt1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qzf4jry")
	again.Scripts = [][]byte{script}
	w, created, err = session.OpenWallet(dir, again)
	if err != nil || created {
		t.Fatalf("open: %v, created %v", err, created)
	}
	defer w.Close()
	c, err := w.AddressCounts()
	if err != nil {
		t.Fatal(err)
	}
	if c.Imported != 3 {
		t.Fatalf("imported %d, want 3 (two addresses and a script)", c.Imported)
	}
}
