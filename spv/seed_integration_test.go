package spv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
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
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// noLookups is a Resolver that fails the test when asked anything.
type noLookups struct{ t testing.TB }

// LookupHost implements spv.Resolver.
func (r noLookups) LookupHost(_ context.Context, host string) ([]string, error) {
	r.t.Errorf("local DNS lookup of %q while a proxy is set", host)
	return nil, errors.New("no local lookups")
}

// startSpv starts a light node with cfg (network, data dir and watcher
// set by the caller) and stops it at cleanup.
func startSpv(t testing.TB, cfg spv.Config) *spv.Node {
	t.Helper()
	n, err := spv.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return n
}

// waitUntil polls cond until it holds or the deadline passes.
func waitUntil(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timeout waiting for %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// waitSyncedTo waits until the node's watcher reaches height.
func waitSyncedTo(t testing.TB, n *spv.Node, height int32, d time.Duration) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("sync to %d", height), d, func() bool {
		st := n.Status()
		if st.Err != nil {
			t.Fatalf("sync failed: %v", st.Err)
		}
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
	if err != nil {
		t.Fatal(err)
	}
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
		RetryMin: 100 * time.Millisecond, RetryMax: time.Second,
		Tuning: spv.Tuning{SeedTimeout: 2 * time.Second},
	})
	waitSyncedTo(t, n, tip, 60*time.Second)
	checkTruth(t, w, truth)

	names := seed.QueriedNames()
	x5, plain := slices.Index(names, "x5."+seedName), slices.Index(names, seedName)
	if x5 != 0 || plain < 0 {
		t.Fatalf("queried %v: want x5.%s first, then %s", names, seedName, seedName)
	}
	if peers := n.Peers(); len(peers) != 1 || peers[0].Addr != h.Node().P2PAddr() {
		t.Fatalf("peers %+v, want the seed's %s", peers, h.Node().P2PAddr())
	}
	recs := readTranscript(t, dir)
	if len(recs) == 0 {
		t.Fatal("no filter recorded")
	}
	for _, r := range recs {
		if r.Peer != h.Node().P2PAddr() {
			t.Errorf("filter to %s", r.Peer)
		}
		if r.Via != "" && r.Via != transcript.ViaDirect {
			t.Errorf("direct connection recorded via %q", r.Via)
		}
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
	if err != nil {
		t.Fatal(err)
	}
	truth := buildChain(t, h, k, scripts, 30, 3, 6)
	_, tip, _ := h.Node().BestBlock()

	// A second full node with the same chain.
	h2, err := testnet.StartNode(ctx, testnet.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h2.Stop() })
	if err := h2.ConnectToCtx(ctx, h.Node()); err != nil {
		t.Fatal(err)
	}
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
	if err := testnet.WritePeersFile(seedDir, h.Params(), known); err != nil {
		t.Fatal(err)
	}
	seedNode, err := testnet.StartNode(ctx, testnet.Config{DataDir: seedDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = seedNode.Stop() })
	_, seedPort, _ := net.SplitHostPort(seedNode.P2PAddr())

	// The seed's name resolves (for the proxy only) to 127.0.0.1; the
	// network's port is the seed node's.
	dns := startDNSSeed(t)
	dns.SetAnswer(seedName, dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	dns.SetAnswer("x5."+seedName, dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	proxy, err := socks.Start(socks.Options{Resolver: dns.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })

	dir := t.TempDir()
	w := watchtest.NewMemWatcher(start+1, scripts...)
	n := startSpv(t, spv.Config{
		Network: seededNetwork(t, seedPort), DataDir: dir, Watcher: w, Log: testLogger(),
		Proxy: proxy.Addr(), Resolver: noLookups{t},
		MaxPeers: 2,
		RetryMin: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond,
		Tuning: spv.Tuning{SeedTimeout: 5 * time.Second, MinPeers: 2, MinPeersWait: 90 * time.Second},
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
		if !strings.HasPrefix(c.User, "bw") {
			t.Errorf("connection without an isolation credential: %+v", c)
		}
		if users[c.User] {
			t.Errorf("credential %s used twice", c.User)
		}
		users[c.User] = true
		if c.Local != "" {
			local[c.Local] = true
		}
		switch {
		case c.Dest == net.JoinHostPort(seedName, seedPort):
			seedFetches++
		case slices.Contains(want, c.Dest):
		case noBloom[c.Dest]:
			t.Errorf("dialed %s, announced without NODE_BLOOM", c.Dest)
		default:
			t.Errorf("unexpected proxy request %+v", c)
		}
	}
	if seedFetches == 0 {
		t.Errorf("the seed's name never went to the proxy: %+v", conns)
	}
	for _, name := range dns.QueriedNames() {
		if name != seedName {
			t.Errorf("DNS server asked for %s (only the proxy asks, and only for the seed's name)", name)
		}
	}
	// btcd saw the light node only at the proxy's outbound addresses.
	for _, node := range []*testnet.Node{h.Node(), h2} {
		infos, err := node.RPC().GetPeerInfo()
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, p := range infos {
			if !strings.Contains(p.SubVer, "bloomwatch") {
				continue
			}
			seen++
			if !local[p.Addr] {
				t.Errorf("%s sees bloomwatch at %s, not a proxy connection (%v)", node.P2PAddr(), p.Addr, local)
			}
		}
		if seen == 0 {
			t.Errorf("%s has no bloomwatch peer", node.P2PAddr())
		}
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
		if len(byPeer[addr]) == 0 {
			t.Errorf("no filter recorded for %s", addr)
		}
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
			if !ok {
				t.Errorf("filter to %s recorded via %q, want an isolation id", peer, via)
				continue
			}
			if prev, dup := owner[id]; dup && prev != peer {
				t.Errorf("credential %s carried filters to %s and %s", id, prev, peer)
			}
			owner[id] = peer
			if !slices.ContainsFunc(conns, func(c socks.Conn) bool { return c.User == id && c.Dest == peer }) {
				t.Errorf("filter to %s via %s: no such proxy connection", peer, id)
			}
		}
	}
}

// freePort returns a 127.0.0.1 port nothing listens on.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_ = ln.Close()
	return port
}
