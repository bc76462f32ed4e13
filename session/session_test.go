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
	"github.com/bloomwatch/bloomwatch/testnet/socks"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
	"github.com/stretchr/testify/require"
)

// syncOnce runs one session over the wallet of dir until it is synced and
// returns its summary.
func syncOnce(t *testing.T, ctx context.Context, dir, peer string, spec wallet.CreateConfig) *session.Summary {
	t.Helper()
	w, _, err := session.OpenWallet(dir, spec)
	require.NoError(t, err)
	defer w.Close()
	s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{peer}, MaxPeers: 1},
		UntilSynced: true, PeerTimeout: time.Minute, Stderr: testWriter{t}})
	require.NoError(t, err)
	require.NoError(t, s.Start(ctx))
	werr := s.Wait(ctx)
	sum, serr := s.Summary()
	require.NoError(t, errors.Join(werr, s.Stop(), serr))
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
	require.NoError(t, err)
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{Blocks: 40, TxsPerBlock: 3, Keyring: key, WatchAddrs: 4, Seed: 7})
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "w")
	spec := wallet.CreateConfig{Network: "regtest", Xpubs: []string{truth.Xpub}, Birthday: truth.StartHeight + 1,
		GapExternal: wallet.DefaultGapExternal, GapInternal: wallet.DefaultGapInternal}
	sum := syncOnce(t, ctx, dir, h.Node().P2PAddr(), spec)
	require.Equal(t, truth.TipHash.String(), sum.TipHash, "summary tip %s balance %d txs %d; truth %s %d %d", sum.TipHash, sum.BalanceSat, len(sum.Txs), truth.TipHash, truth.Balance, len(truth.Txs))
	require.Equal(t, truth.Balance, sum.BalanceSat, "summary tip %s balance %d txs %d; truth %s %d %d", sum.TipHash, sum.BalanceSat, len(sum.Txs), truth.TipHash, truth.Balance, len(truth.Txs))
	require.Len(t, sum.Txs, len(truth.Txs), "summary tip %s balance %d txs %d; truth %s %d %d", sum.TipHash, sum.BalanceSat, len(sum.Txs), truth.TipHash, truth.Balance, len(truth.Txs))
	require.Greater(t, sum.Timing.FirstFilterMs, float64(0), "timing %+v", sum.Timing)
	require.GreaterOrEqual(t, sum.Timing.SyncedMs, sum.Timing.FirstFilterMs, "timing %+v", sum.Timing)
	// The meter saw every filter the node recorded, from the events.
	raw, err := os.ReadFile(session.TranscriptPath(dir))
	require.NoError(t, err)
	all, err := transcript.Read(bytesReader(raw))
	recs := transcript.FilterRecords(all)
	require.NoError(t, err, "transcript: %d filter records", len(recs))
	require.NotEqual(t, 0, len(recs), "transcript: %d filter records, %v", len(recs), err)
	require.NotNil(t, sum.Privacy, "privacy reading %+v, last filter record seq %d", sum.Privacy, recs[len(recs)-1].Seq)
	require.Equal(t, recs[len(recs)-1].Seq, sum.Privacy.Seq, "privacy reading %+v, last filter record seq %d", sum.Privacy, recs[len(recs)-1].Seq)
	require.NotEqual(t, uint64(0), sum.Privacy.Candidates, "privacy reading %+v, last filter record seq %d", sum.Privacy, recs[len(recs)-1].Seq)
	// The meter's wallet size is the wallet's own count, not the filter's
	// estimate m^: N = the addresses on chain (used), beside
	// the addresses watched and the filter's elements.
	p := sum.Privacy
	require.True(t, p.WalletKnown, "meter wallet: N %d, watched %d, elements %d; wallet: used %d of %d derived, %d utxos, filter elements %d", p.Members, p.Watched, p.Elements, sum.Addresses.Used, sum.Addresses.Derived, len(sum.UTXOs), sum.Filter.Elements)
	require.Equal(t, sum.Addresses.Used, p.Members, "meter wallet: N %d, watched %d, elements %d; wallet: used %d of %d derived, %d utxos, filter elements %d", p.Members, p.Watched, p.Elements, sum.Addresses.Used, sum.Addresses.Derived, len(sum.UTXOs), sum.Filter.Elements)
	require.NotEqual(t, 0, p.Members, "meter wallet: N %d, watched %d, elements %d; wallet: used %d of %d derived, %d utxos, filter elements %d", p.Members, p.Watched, p.Elements, sum.Addresses.Used, sum.Addresses.Derived, len(sum.UTXOs), sum.Filter.Elements)
	require.Equal(t, sum.Addresses.Derived, p.Watched, "meter wallet: N %d, watched %d, elements %d; wallet: used %d of %d derived, %d utxos, filter elements %d", p.Members, p.Watched, p.Elements, sum.Addresses.Used, sum.Addresses.Derived, len(sum.UTXOs), sum.Filter.Elements)
	require.Equal(t, sum.Filter.Elements-sum.Decoys, p.Elements, "meter wallet: N %d, watched %d, elements %d; wallet: used %d of %d derived, %d utxos, filter elements %d", p.Members, p.Watched, p.Elements, sum.Addresses.Used, sum.Addresses.Derived, len(sum.UTXOs), sum.Filter.Elements)
	require.GreaterOrEqual(t, p.Elements, p.Watched, "meter wallet: N %d, watched %d, elements %d; wallet: used %d of %d derived, %d utxos, filter elements %d", p.Members, p.Watched, p.Elements, sum.Addresses.Used, sum.Addresses.Derived, len(sum.UTXOs), sum.Filter.Elements)
	require.NotEqual(t, uint64(0), p.ObservedTxTested, "observed rate %v of %d tested, interval %+v", p.ObservedTxFPRate, p.ObservedTxTested, p.ObservedTxFPCI)
	require.NotNil(t, p.ObservedTxFPCI, "observed rate %v of %d tested, interval %+v", p.ObservedTxFPRate, p.ObservedTxTested, p.ObservedTxFPCI)
	require.True(t, p.ObservedTxFPCI.Contains(p.ObservedTxFPRate), "observed rate %v of %d tested, interval %+v", p.ObservedTxFPRate, p.ObservedTxTested, p.ObservedTxFPCI)
	t.Logf("meter: N %d on chain of %d watched, %d elements (m^ %.1f); precision %.3f, entropy %.2f bits",
		p.Members, p.Watched, p.Elements, p.EstElements, p.Precision, p.Entropy)
	// A restart with nothing new: the meter starts from the earlier
	// filters (read once, by the node) and adds the new one.
	again := syncOnce(t, ctx, dir, h.Node().P2PAddr(), spec)
	// The restart's filterload is the first record the new run writes.
	require.Equal(t, sum.TipHash, again.TipHash, "restart: tip %s, reading %+v (want seq %d)", again.TipHash, again.Privacy, len(all))
	require.NotNil(t, again.Privacy, "restart: tip %s, reading %+v (want seq %d)", again.TipHash, again.Privacy, len(all))
	require.Equal(t, uint64(len(all)), again.Privacy.Seq, "restart: tip %s, reading %+v (want seq %d)", again.TipHash, again.Privacy, len(all))
}

func TestSessionGivesUpWithoutPeers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	w, _, err := session.OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, GapExternal: 1, GapInternal: 1})
	require.NoError(t, err)
	defer w.Close()
	s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{addr}}, PeerTimeout: 500 * time.Millisecond, Stderr: testWriter{t}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Start(ctx))
	err = s.Wait(ctx)
	require.NoError(t, s.Stop())
	require.ErrorIs(t, err, session.ErrNoPeer, "wait: %v, want ErrNoPeer", err)
}

// TestEventsWithoutDashboard: a session without a dashboard hands its
// events to the program that asks (Events was nil unless Config.Dashboard
// was set): the same channel at every call, closed when the session stops.
func TestEventsWithoutDashboard(t *testing.T) {
	w, _, err := session.OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, GapExternal: 1, GapInternal: 1})
	require.NoError(t, err)
	defer w.Close()
	s, err := session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{"127.0.0.1:1"}}, Stderr: testWriter{t}})
	require.NoError(t, err)
	events := s.Events()
	require.NotNil(t, events, "Events() = %v, then %v: want one channel", events, s.Events())
	require.Equal(t, events, s.Events(), "Events() = %v, then %v: want one channel", events, s.Events())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Start(ctx))
	require.NoError(t, s.Stop())
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		case <-ctx.Done():
			require.FailNow(t, "the events channel was not closed at Stop")
		}
	}
}

func TestOpenWalletNeedsANetwork(t *testing.T) {
	dir := t.TempDir()
	_, _, err := session.OpenWallet(dir, wallet.CreateConfig{})
	require.ErrorIs(t, err, session.ErrNeedNetwork, "err %v", err)
	require.False(t, wallet.Exists(dir), "a wallet was written")
}

func TestSessionPassesTheProxy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	w, _, err := session.OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, GapExternal: 1, GapInternal: 1})
	require.NoError(t, err)
	defer w.Close()
	_, err = session.New(session.Config{Wallet: w, Node: spv.Config{Connect: []string{addr}, Proxy: "tor.example:9050"}, Stderr: testWriter{t}})
	require.ErrorIs(t, err, spv.ErrBadConfig, "proxy by name: %v, want spv.ErrBadConfig", err)
	for _, shared := range []bool{false, true} {
		proxy, err := socks.Start(socks.Options{Auth: socks.PasswordOrNone})
		require.NoError(t, err)
		defer proxy.Close()
		s, err := session.New(session.Config{Wallet: w, PeerTimeout: 500 * time.Millisecond,
			Node: spv.Config{Connect: []string{addr}, Proxy: proxy.Addr(), NoProxyIsolation: shared}, Stderr: testWriter{t}})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		require.NoError(t, s.Start(ctx))
		err = s.Wait(ctx)
		cancel()
		require.NoError(t, s.Stop())
		require.ErrorIs(t, err, session.ErrNoPeer, "wait: %v, want ErrNoPeer", err)
		conns := proxy.Conns()
		require.NotEqual(t, 0, len(conns), "shared=%v: the peer was dialed around the proxy", shared)
		for _, c := range conns {
			require.Equal(t, addr, c.Dest, "shared=%v: proxy request %+v", shared, c)
			require.Equal(t, shared, (c.User == ""), "shared=%v: proxy request %+v", shared, c)
		}
	}
}

// TestNodeConfigIsPassedOn checks that Config.Node reaches the light node
// as given (a field the session has no copy of: StallTimeout, CheckPeers)
// and that New refuses the four fields the session sets itself.
func TestNodeConfigIsPassedOn(t *testing.T) {
	w, _, err := session.OpenWallet(t.TempDir(), wallet.CreateConfig{Network: "regtest",
		Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}, GapExternal: 1, GapInternal: 1})
	require.NoError(t, err)
	defer w.Close()
	_, err = session.New(session.Config{Wallet: w, Node: spv.Config{Tuning: spv.Tuning{CheckPeers: spv.MaxCheckPeers + 1}},
		Stderr: testWriter{t}})
	require.ErrorIs(t, err, spv.ErrBadConfig, "CheckPeers past the maximum: %v, want spv.ErrBadConfig", err)
	for name, node := range map[string]spv.Config{
		"DataDir": {DataDir: t.TempDir()},
		"Watcher": {Watcher: w},
		"Log":     {Log: slog.Default()},
	} {
		_, err := session.New(session.Config{Wallet: w, Node: node, Stderr: testWriter{t}})
		require.ErrorIs(t, err, spv.ErrBadConfig, "Node.%s set: %v, want spv.ErrBadConfig", name, err)
	}
}

// TestOpenWalletAddsWhatItLacks opens an existing wallet with a
// configuration that names one more address and one more raw script: both
// are imported, the address given again is no error.
func TestOpenWalletAddsWhatItLacks(t *testing.T) {
	dir := t.TempDir()
	first := wallet.CreateConfig{Network: "regtest", Addresses: []string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"}}
	w, created, err := session.OpenWallet(dir, first)
	require.NoError(t, err, "create: %v, created %v", err, created)
	require.True(t, created, "create: %v, created %v", err, created)
	require.NoError(t, w.Close())
	script := append([]byte{0x00, 0x14}, bytes.Repeat([]byte{7}, 20)...) // P2WPKH
	again := first
	again.Addresses = append(again.Addresses, "bcrt1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qzf4jry")
	again.Scripts = [][]byte{script}
	w, created, err = session.OpenWallet(dir, again)
	require.NoError(t, err, "open: %v, created %v", err, created)
	require.False(t, created, "open: %v, created %v", err, created)
	defer w.Close()
	c, err := w.AddressCounts()
	require.NoError(t, err)
	require.Equal(t, 3, c.Imported, "imported %d, want 3 (two addresses and a script)", c.Imported)
}
