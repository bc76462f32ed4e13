package spv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/dnsseed"
	"github.com/bloomwatch/bloomwatch/testnet/socks"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// seedName is the DNS seed of the test networks; the test DNS server on
// 127.0.0.1 answers for it.
const seedName = "seed.bloomwatch.test"

// seededNetwork returns regtest with seedName as its one DNS seed
// (filtering by service bits) and port as its default P2P port: the port
// of the loopback btcd node the seed's answers lead to.
func seededNetwork(t testing.TB, port string) *netparams.Network {
	t.Helper()
	n := *regtest(t)
	n.DefaultPort = port
	n.Seeds = []chaincfg.DNSSeed{{Host: seedName, HasFiltering: true}}
	return &n
}

// startDNSSeed starts the test DNS server, closed at cleanup.
func startDNSSeed(t testing.TB) *dnsseed.Seed {
	t.Helper()
	s, err := dnsseed.Start()
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
	})
	return s
}

// noLookups is a Resolver that records every name asked of it: the node's
// goroutines ask, and the test requires none at its end, on its own
// goroutine.
type noLookups struct {
	mu    sync.Mutex
	hosts []string
}

// newNoLookups returns a noLookups whose check runs when t ends.
func newNoLookups(t testing.TB) *noLookups {
	r := &noLookups{}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		require.Empty(t, r.hosts, "local DNS lookups while a proxy is set")
	})
	return r
}

// LookupHost implements spv.Resolver.
func (r *noLookups) LookupHost(_ context.Context, host string) ([]string, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, host)
	r.mu.Unlock()
	return nil, errors.New("no local lookups")
}

// startSpv starts a light node with cfg (network, data dir and watcher
// set by the caller) and stops it at cleanup.
func startSpv(t testing.TB, cfg spv.Config) *spv.Node {
	t.Helper()
	n, err := spv.New(cfg)
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() {
		require.NoError(t, n.Stop(), "stop")
	})
	return n
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		require.False(t, time.Now().After(deadline), "timeout waiting for %s", what)
		time.Sleep(25 * time.Millisecond)
	}
}

// waitSyncedTo waits until the node's watcher reaches height.
func waitSyncedTo(t testing.TB, n *spv.Node, height int32, d time.Duration) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("sync to %d", height), d, func() bool {
		st := n.Status()
		require.NoError(t, st.Err, "sync failed")
		return st.Synced && st.WatcherHeight >= height
	})
}

func TestSyncFromDNSSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	truth := buildChain(t, h, k, scripts, 30, 3, 5)
	_, tip, _ := h.Node().BestBlock()
	_, port, _ := net.SplitHostPort(h.Node().P2PAddr())

	// The seed knows no x5 subdomain (NXDOMAIN): the node falls back to
	// the plain name, which leads to the btcd node.
	seed := startDNSSeed(t)
	seed.SetAnswer(seedName, dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})

	dir := t.TempDir()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	n := startSpv(t, spv.Config{
		Network: seededNetwork(t, port), DataDir: dir, Watcher: w, Log: testLogger(),
		Resolver: seed.Resolver(),
		Tuning:   spv.Tuning{RetryMin: 100 * time.Millisecond, RetryMax: time.Second, SeedTimeout: 2 * time.Second},
	})
	waitSyncedTo(t, n, tip, 60*time.Second)
	checkTruth(t, w, truth)

	names := seed.QueriedNames()
	x5, plain := slices.Index(names, "x5."+seedName), slices.Index(names, seedName)
	require.Equal(t, 0, x5, "queried %v: want x5.%s first, then %s", names, seedName, seedName)
	require.GreaterOrEqual(t, plain, 0, "queried %v: want x5.%s first, then %s", names, seedName, seedName)
	peers := n.Peers()
	require.Len(t, peers, 1, "peers %+v, want the seed's %s", peers, h.Node().P2PAddr())
	require.Equal(t, h.Node().P2PAddr(), peers[0].Addr, "peers %+v, want the seed's %s", peers, h.Node().P2PAddr())
	recs := readTranscript(t, dir)
	require.NotEqual(t, 0, len(recs), "no filter recorded")
	for _, r := range recs {
		require.Equal(t, h.Node().P2PAddr(), r.Peer, "filter to %s", r.Peer)
		require.False(t, r.Via != "" && r.Via != transcript.ViaDirect, "direct connection recorded via %q", r.Via)
	}
}

func TestSyncThroughProxyFromSeedNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h, k := demoHarness(t)
	scripts := keyScripts(t, k, 6)
	_, start, err := h.Node().BestBlock()
	require.NoError(t, err)
	truth := buildChain(t, h, k, scripts, 30, 3, 6)
	_, tip, _ := h.Node().BestBlock()

	// A second full node with the same chain.
	h2, err := testnet.StartNode(ctx, testnet.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h2.Stop() })
	require.NoError(t, h2.ConnectToCtx(ctx, h.Node()))
	// The node at the seed's name: it knows both full nodes and three
	// addresses without NODE_BLOOM (never to be dialed), and hands them
	// out in answer to getaddr (btcd gives a random 23 %: one of five).
	bloom := wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness
	known := []testnet.KnownAddr{
		{Addr: h.Node().P2PAddr(), Services: bloom},
		{Addr: h2.P2PAddr(), Services: bloom},
	}
	noBloom := map[string]bool{}
	for range 3 {
		a := net.JoinHostPort("127.0.0.1", freePort(t))
		noBloom[a] = true
		known = append(known, testnet.KnownAddr{Addr: a, Services: wire.SFNodeNetwork | wire.SFNodeWitness})
	}
	seedDir := t.TempDir()
	require.NoError(t, testnet.WritePeersFile(seedDir, h.Params(), known))
	seedNode, err := testnet.StartNode(ctx, testnet.Config{DataDir: seedDir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = seedNode.Stop() })
	_, seedPort, _ := net.SplitHostPort(seedNode.P2PAddr())

	// The seed's name resolves (for the proxy only) to 127.0.0.1; the
	// network's port is the seed node's.
	dns := startDNSSeed(t)
	dns.SetAnswer(seedName, dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	dns.SetAnswer("x5."+seedName, dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	proxy, err := socks.Start(socks.Options{Resolver: dns.Resolver()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })

	dir := t.TempDir()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	n := startSpv(t, spv.Config{
		Network: seededNetwork(t, seedPort), DataDir: dir, Watcher: w, Log: testLogger(),
		Proxy: proxy.Addr(), Resolver: newNoLookups(t),
		MaxPeers: 2,
		Tuning:   spv.Tuning{RetryMin: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond, SeedTimeout: 5 * time.Second, MinPeers: 2, MinPeersWait: 90 * time.Second},
	})
	waitSyncedTo(t, n, tip, 2*time.Minute)
	checkTruth(t, w, truth)
	want := []string{h.Node().P2PAddr(), h2.P2PAddr()}
	slices.Sort(want)
	waitUntil(t, "both peers", 30*time.Second, func() bool {
		var got []string
		for _, p := range n.Peers() {
			got = append(got, p.Addr)
		}
		slices.Sort(got)
		return slices.Equal(got, want)
	})

	// Every connection went through the proxy, each on its own
	// credential; the seed was reached by name, never resolved here.
	conns := proxy.Conns()
	users := map[string]bool{}
	local := map[string]bool{}
	seedFetches := 0
	for _, c := range conns {
		require.True(t, strings.HasPrefix(c.User, "bw"), "connection without an isolation credential: %+v", c)
		require.False(t, users[c.User], "credential %s used twice", c.User)
		users[c.User] = true
		if c.Local != "" {
			local[c.Local] = true
		}
		switch {
		case c.Dest == net.JoinHostPort(seedName, seedPort):
			seedFetches++
		case slices.Contains(want, c.Dest):
		case noBloom[c.Dest]:
			require.FailNow(t, fmt.Sprintf("dialed %s, announced without NODE_BLOOM", c.Dest))
		default:
			require.FailNow(t, fmt.Sprintf("unexpected proxy request %+v", c))
		}
	}
	require.NotEqual(t, 0, seedFetches, "the seed's name never went to the proxy: %+v", conns)
	for _, name := range dns.QueriedNames() {
		require.Equal(t, seedName, name, "DNS server asked for %s (only the proxy asks, and only for the seed's name)", name)
	}
	// btcd saw the light node only at the proxy's outbound addresses.
	for _, node := range []*testnet.Node{h.Node(), h2} {
		infos, err := node.RPC().GetPeerInfo()
		require.NoError(t, err)
		seen := 0
		for _, p := range infos {
			if !strings.Contains(p.SubVer, "bloomwatch") {
				continue
			}
			seen++
			require.True(t, local[p.Addr], "%s sees bloomwatch at %s, not a proxy connection (%v)", node.P2PAddr(), p.Addr, local)
		}
		require.NotEqual(t, 0, seen, "%s has no bloomwatch peer", node.P2PAddr())
	}

	// The transcript names each filter's isolation credential: the one
	// the proxy logged for a connection to that peer, a different one
	// per peer.
	recs := readTranscript(t, dir)
	byPeer := map[string]map[string]bool{}
	for _, r := range recs {
		if r.Kind != transcript.KindFilterLoad {
			continue
		}
		if byPeer[r.Peer] == nil {
			byPeer[r.Peer] = map[string]bool{}
		}
		byPeer[r.Peer][r.Via] = true
	}
	for _, addr := range want {
		require.NotEqual(t, 0, len(byPeer[addr]), "no filter recorded for %s", addr)
	}
	checkTranscriptVia(t, byPeer, conns)
}

// checkTranscriptVia checks the transcript's Via against the proxy's
// log: each filter names the credential of a proxy connection to its
// peer, and no credential serves two peers.
func checkTranscriptVia(t *testing.T, byPeer map[string]map[string]bool, conns []socks.Conn) {
	t.Helper()
	owner := map[string]string{}
	for peer, vias := range byPeer {
		for via := range vias {
			id, ok := transcript.IsolationID(via)
			require.True(t, ok, "filter to %s recorded via %q, want an isolation id", peer, via)
			prev, dup := owner[id]
			require.False(t, dup && prev != peer, "credential %s carried filters to %s and %s", id, prev, peer)
			owner[id] = peer
			require.True(t, slices.ContainsFunc(conns, func(c socks.Conn) bool { return c.User == id && c.Dest == peer }), "filter to %s via %s: no such proxy connection", peer, id)
		}
	}
}

// freePort returns a 127.0.0.1 port nothing listens on.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	return port
}
