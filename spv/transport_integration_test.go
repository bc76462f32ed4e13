package spv_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/bcoin"
	"github.com/bloomwatch/bloomwatch/testnet/dnsseed"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// transportChain is a server with a built scenario chain and the keyring
// whose wallet it pays.
type transportChain struct {
	srv   *testnet.Chain
	key   *testnet.Keyring
	xpub  string
	truth *testnet.Truth
	birth int32
}

// newTransportChain builds the cold-sync scenario's chain (payments to 6
// receive addresses, 30 % spent, noise) on srv.
func newTransportChain(t *testing.T, srv *testnet.Chain) *transportChain {
	t.Helper()
	key, err := testnet.NewKeyring(testnet.DemoSeed, regtest(t).Params)
	require.NoError(t, err)
	xpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	truth, err := srv.BuildChain(t.Context(), testnet.ChainSpec{
		Blocks: 30, TxsPerBlock: 2, Keyring: key, Purpose: testnet.PurposeBIP84,
		WatchAddrs: 6, PaymentsPerAddr: 2, SpendFraction: 0.3, Seed: 26,
	})
	require.NoError(t, err)
	return &transportChain{srv: srv, key: key, xpub: xpub, truth: truth, birth: truth.StartHeight + 1}
}

// transportNode starts a node with a fresh wallet of c's keyring, syncing
// from addr under the transport policy tp.
func transportNode(t *testing.T, c *transportChain, tp spv.Transport, addr string) (*spv.Node, *spv.Subscription) {
	t.Helper()
	dir := t.TempDir()
	w := implWallet(t, t, filepath.Join(dir, "wallet"), c.xpub, c.birth, 0)
	cfg := implConfig(filepath.Join(dir, "spv"), w, addr)
	cfg.Transport = tp
	cfg.Tuning.HandshakeTimeout = 5 * time.Second
	n, err := spv.New(cfg)
	require.NoError(t, err)
	sub := n.Subscribe()
	t.Cleanup(sub.Cancel)
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() {
		require.NoError(t, n.Stop(), "stop node")
	})
	return n, sub
}

// syncedOver syncs a fresh wallet over tp from addr, checks it against the
// server's view of the keyring and returns the node and the filterloads
// it recorded.
func syncedOver(t *testing.T, c *transportChain, tp spv.Transport, addr, want string, opts ...func(*spv.Config)) (*spv.Node, []transcript.Record) {
	t.Helper()
	dir := t.TempDir()
	w := implWallet(t, t, filepath.Join(dir, "wallet"), c.xpub, c.birth, 0)
	cfg := implConfig(filepath.Join(dir, "spv"), w, addr)
	cfg.Transport = tp
	cfg.Tuning.HandshakeTimeout = 5 * time.Second
	for _, o := range opts {
		o(&cfg)
	}
	n, err := spv.New(cfg)
	require.NoError(t, err)
	sub := n.Subscribe()
	defer sub.Cancel()
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() {
		require.NoError(t, n.Stop(), "stop node")
	})
	implWaitAt(t, n, c.truth.TipHash, time.Minute)
	view, err := c.srv.ScanTruth(t.Context(), c.key, testnet.PurposeBIP84, c.birth)
	require.NoError(t, err)
	require.Equal(t, c.truth.Balance, view.Balance, "the node's view (%d sat, %d txs) differs from the built chain's (%d, %d)", view.Balance, len(view.Txs), c.truth.Balance, len(c.truth.Txs))
	require.Len(t, view.Txs, len(c.truth.Txs), "the node's view (%d sat, %d txs) differs from the built chain's (%d, %d)", view.Balance, len(view.Txs), c.truth.Balance, len(c.truth.Txs))
	implRequireWallet(t, w, view)
	peers := n.Peers()
	require.Len(t, peers, 1, "peers %+v, want one over %s", peers, want)
	require.Equal(t, want, peers[0].Transport, "peers %+v, want one over %s", peers, want)
	var loads []transcript.Record
	for {
		select {
		case ev := <-sub.Events():
			if fl, ok := ev.(spv.FilterLoaded); ok {
				loads = append(loads, fl.Record)
			}
			continue
		default:
		}
		break
	}
	require.NotEmpty(t, loads, "no filterload event")
	for _, r := range loads {
		require.Equal(t, want, r.Transport, "filterload record: transport %q v %d wire %d, want %s, v%d, a wire length", r.Transport, r.V, r.Wire, want, transcript.TransportVersion)
		require.Equal(t, transcript.TransportVersion, r.V, "filterload record: transport %q v %d wire %d, want %s, v%d, a wire length", r.Transport, r.V, r.Wire, want, transcript.TransportVersion)
		require.NotEqual(t, 0, r.Wire, "filterload record: transport %q v %d wire %d, want %s, v%d, a wire length", r.Transport, r.V, r.Wire, want, transcript.TransportVersion)
	}
	return n, loads
}

// plainWant reports whether transport want is v1.
func plainWant(want string) bool { return want == transcript.TransportV1 }

// filterBits returns the bit array of a recorded filterload.
func filterBits(t *testing.T, r transcript.Record) []byte {
	t.Helper()
	f, err := bip37.Deserialize(r.Filter)
	require.NoError(t, err)
	return f.Bits()
}

// TestTransportAgainstBtcd syncs from btcd v0.25.0 started with
// --v2transport through a recording relay on 127.0.0.1: over v2 (auto
// with an explicit peer, and --transport v2) the wallet equals the
// chain's truth and the recorded bytes hold neither a filterload or
// merkleblock command string nor the filter's bits, each way; over v1
// (the control) the recording holds all three.
func TestTransportAgainstBtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{V2Transport: true})
	c := newTransportChain(t, h.Chain)
	for _, tc := range []struct {
		policy spv.Transport
		want   string
	}{
		{spv.TransportAuto, transcript.TransportV2},
		{spv.TransportV2, transcript.TransportV2},
		{spv.TransportV1, transcript.TransportV1},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			relay, err := testnet.StartRelay(t.Context(), h.Node().P2PAddr())
			require.NoError(t, err)
			defer relay.Close()
			var tapMu sync.Mutex
			var taps []spv.WirePacket
			n, loads := syncedOver(t, c, tc.policy, relay.Addr(), tc.want, func(cfg *spv.Config) {
				spv.SetWireTap(cfg, func(p spv.WirePacket) {
					tapMu.Lock()
					taps = append(taps, p)
					tapMu.Unlock()
				})
			})
			require.NoError(t, n.Stop())
			up, down := relay.Recording()
			// What the node counted on its side of the wire is what
			// the relay saw: every byte sent, and every message's
			// frame or packet received (the v2 handshake's key and
			// garbage from the server are no message).
			tapMu.Lock()
			var sent, recvd, burst int
			for _, p := range taps {
				if p.Out {
					sent += p.Bytes
					if p.Cmd == "filterload" && burst == 0 {
						burst = p.Bytes
					}
				} else {
					recvd += p.Bytes
				}
			}
			tapMu.Unlock()
			require.Equal(t, len(up), sent, "the node counted %d bytes sent, %d received; the relay saw %d up, %d down", sent, recvd, len(up), len(down))
			require.LessOrEqual(t, recvd, len(down), "the node counted %d bytes sent, %d received; the relay saw %d up, %d down", sent, recvd, len(up), len(down))
			require.False(t, plainWant(tc.want) && recvd != len(down), "the node counted %d bytes sent, %d received; the relay saw %d up, %d down", sent, recvd, len(up), len(down))
			require.Equal(t, loads[0].Wire, burst, "the first filterload left in a %d-byte write, its record says %d", burst, loads[0].Wire)
			both := append(append([]byte(nil), up...), down...)
			plain := tc.want == transcript.TransportV1
			for _, s := range []string{"filterload", "merkleblock"} {
				got := bytes.Contains(both, []byte(s))
				require.Equal(t, plain, got, "%q in the recording: %v, want %v (%d bytes up, %d down)", s, got, plain, len(up), len(down))
			}
			bits := filterBits(t, loads[0])
			require.GreaterOrEqual(t, len(bits), 16, "a %d-byte filter is too short to look for", len(bits))
			got := bytes.Contains(up, bits)
			require.Equal(t, plain, got, "the filter's %d bytes in the recording: %v, want %v", len(bits), got, plain)
			t.Logf("%s: %d bytes up, %d down, %d reads; filterload wire %d bytes (filter %d)",
				tc.policy, len(up), len(down), len(relay.Chunks()), loads[0].Wire, len(bits))
		})
	}
}

// TestTransportFallback syncs under auto from servers that speak only v1
// (btcd v0.25.0 without --v2transport, which hangs up on the v2 key, and
// bcoin 1.0.2, which answers it with v1 reject messages: the node tries
// v2 first with an explicit peer and falls back at once), and checks that
// under --transport v2 they are refused with ErrPeerPlaintext, never
// synced.
func TestTransportFallback(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd and bcoin")
	}
	servers := []struct {
		name, how string // how: the v2 attempt's end, as logged
		start     func(t *testing.T) *testnet.Chain
	}{
		{"btcd without v2", "sent nothing", func(t *testing.T) *testnet.Chain { return testnet.NewT(t, testnet.Options{}).Chain }},
		{"bcoin", "answered in v1", func(t *testing.T) *testnet.Chain { return bcoin.NewT(t, bcoin.Options{}).Chain }},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := newTransportChain(t, s.start(t))
			t.Run("auto", func(t *testing.T) {
				mark := time.Now()
				logs := &logBuffer{}
				syncedOver(t, c, spv.TransportAuto, c.srv.P2PAddr(), transcript.TransportV1, func(cfg *spv.Config) {
					cfg.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				})
				got := logs.count("reconnecting over v1", fmt.Sprintf("v2_handshake=%q", s.how))
				require.Equal(t, 1, got, "%d v2 attempts that %s, want 1", got, s.how)
				t.Logf("synced over v1 after the v2 attempt in %s", time.Since(mark).Round(time.Millisecond))
			})
			t.Run("v2 refused", func(t *testing.T) {
				n, sub := transportNode(t, c, spv.TransportV2, c.srv.P2PAddr())
				deadline := time.After(30 * time.Second)
				for {
					select {
					case ev := <-sub.Events():
						switch ev := ev.(type) {
						case spv.PeerConnected:
							require.FailNow(t, fmt.Sprintf("connected to a v1 server under --transport v2: %+v", ev.Peer))
						case spv.FilterLoaded:
							require.FailNow(t, fmt.Sprintf("a filter sent under --transport v2 to a v1 server: %+v", ev))
						case spv.PeerDisconnected:
							require.Equal(t, spv.ErrPeerPlaintext.Error(), ev.Reason, "disconnected for %q, want %q", ev.Reason, spv.ErrPeerPlaintext)
							st := n.Status()
							require.False(t, st.Synced, "status %+v", st)
							require.Empty(t, st.Peers, "status %+v", st)
							return
						}
					case <-deadline:
						require.FailNow(t, "no refusal within 30 s")
					}
				}
			})
		})
	}
}

// TestSeedPeerReachedAgainOverV2 learns a btcd --v2transport node from a
// DNS seed on 127.0.0.1 (a seed's answer carries no NODE_P2P_V2, so the
// node connects over v1 under auto), sees NODE_P2P_V2 in its version
// message and leaves before sending any filter, to sync over v2: no
// filter record names v1. Under --transport v1 it stays on v1.
func TestSeedPeerReachedAgainOverV2(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h := testnet.NewT(t, testnet.Options{V2Transport: true})
	c := newTransportChain(t, h.Chain)
	_, port, _ := net.SplitHostPort(h.Node().P2PAddr())
	seed := startDNSSeed(t)
	seed.SetAnswer(seedName, dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	for _, tc := range []struct {
		policy   spv.Transport
		want     string
		upgrades int
	}{{spv.TransportAuto, transcript.TransportV2, 1}, {spv.TransportV1, transcript.TransportV1, 0}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			logs := &logBuffer{}
			var dir string
			syncedOver(t, c, tc.policy, "", tc.want, func(cfg *spv.Config) {
				cfg.Connect = nil
				cfg.Network = seededNetwork(t, port)
				cfg.Resolver = seed.Resolver()
				cfg.Tuning.SeedTimeout = 2 * time.Second
				cfg.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				dir = cfg.DataDir
			})
			got := logs.count("reconnecting over v2 before sending a filter")
			require.Equal(t, tc.upgrades, got, "%d reconnections over v2, want %d", got, tc.upgrades)
			for _, r := range readTranscript(t, dir) {
				require.Equal(t, tc.want, r.Transport, "record %d (%s) left over %q, want %s", r.Seq, r.Kind, r.Transport, tc.want)
			}
		})
	}
}
