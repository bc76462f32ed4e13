package spv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/testnet/dnsseed"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// testSeedHost is the DNS seed name the tests' seed server answers for.
const testSeedHost = "seed.bloomwatch.test"

// logSink collects a node's log for assertions.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns the log so far.
func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newLogSink returns a sink and a debug-level logger writing to it.
func newLogSink() (*logSink, *slog.Logger) {
	s := &logSink{}
	return s, slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// seededRegtest returns a copy of regtest with one DNS seed (filtering
// by service bits) and port as its default port.
func seededRegtest(t testing.TB, port string) *netparams.Network {
	t.Helper()
	reg, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	n := *reg
	n.DefaultPort = port
	n.Seeds = []chaincfg.DNSSeed{{Host: testSeedHost, HasFiltering: true}}
	return &n
}

// startTestSeed starts a DNS seed server on 127.0.0.1, closed at cleanup.
func startTestSeed(t testing.TB) *dnsseed.Seed {
	t.Helper()
	s, err := dnsseed.Start()
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
	})
	return s
}

// failResolver records every name asked of it: the node's goroutines ask,
// and the test requires none at its end, on its own goroutine.
type failResolver struct {
	mu    sync.Mutex
	hosts []string
}

// newFailResolver returns a failResolver whose check runs when t ends.
func newFailResolver(t testing.TB) *failResolver {
	r := &failResolver{}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		require.Empty(t, r.hosts, "local lookups while a proxy is set")
	})
	return r
}

// LookupHost implements Resolver.
func (r *failResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, host)
	r.mu.Unlock()
	return nil, errors.New("no local lookups")
}

// seedTestNode returns an unstarted node on network with cfg's
// resolver, proxy and log.
func seedTestNode(t testing.TB, network *netparams.Network, cfg Config) *Node {
	t.Helper()
	cfg.Network = network
	cfg.DataDir = t.TempDir()
	cfg.Watcher = watchtest.NewMemWatcher(0)
	if cfg.Tuning.RetryMin == 0 {
		cfg.Tuning.RetryMin, cfg.Tuning.RetryMax = 20*time.Millisecond, 200*time.Millisecond
	}
	n, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Stop() })
	return n
}

// index returns the position of name in names, or -1.
func index(names []string, name string) int { return slices.Index(names, name) }

func TestSeedQueriesAskServiceSubdomainFirst(t *testing.T) {
	require.Equal(t, uint64(5), uint64(seedServices), "seedServices = %#x, want 0x5 (NODE_NETWORK|NODE_BLOOM, in bitcoin-seeder's default whitelist)", uint64(seedServices))
	got := seedQueries(chaincfg.DNSSeed{Host: "seed.example", HasFiltering: true})
	want := []string{"x5.seed.example", "seed.example"}
	require.True(t, slices.Equal(got, want), "filtering seed: %v, want %v", got, want)
	got = seedQueries(chaincfg.DNSSeed{Host: "seed.example"})
	want = []string{"seed.example"}
	require.True(t, slices.Equal(got, want), "plain seed: %v, want %v", got, want)
	// Every real seed gets x5, never the x4 no seeder whitelists.
	for _, name := range netparams.Names() {
		nw, _ := netparams.Lookup(name)
		for _, s := range nw.Seeds {
			for _, q := range seedQueries(s) {
				require.False(t, strings.HasPrefix(q, "x4."), "%s: asks %s", name, q)
			}
		}
	}
}

func TestSeedAddrsDropJunk(t *testing.T) {
	in := []string{"127.0.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "not-an-ip",
		"127.0.0.1", "::ffff:127.0.0.2", "::1", "ff02::1", ""}
	addrs, junk := seedAddrs(in, "18444")
	want := []string{"127.0.0.1:18444", "127.0.0.2:18444", "[::1]:18444"}
	require.True(t, slices.Equal(addrs, want), "addrs %v, want %v", addrs, want)
	require.Equal(t, 7, junk, "junk %d, want 7", junk)
	var many []string
	for i := range 300 {
		many = append(many, fmt.Sprintf("10.0.%d.%d", i/256, i%256))
	}
	addrs, _ = seedAddrs(many, "8333")
	require.Len(t, addrs, maxSeedAddrs, "%d addrs from one seed, want the cap %d", len(addrs), maxSeedAddrs)
}

func TestLookupSeedAgainstDNSServer(t *testing.T) {
	x5 := "x5." + testSeedHost
	lo := []net.IP{net.ParseIP("127.0.0.1")}
	cases := []struct {
		name       string
		x5, plain  *dnsseed.Answer // nil: NXDOMAIN
		want       []string
		plainAsked bool
		logs       []string
	}{
		{name: "x5 answers", x5: &dnsseed.Answer{IPs: lo}, plain: &dnsseed.Answer{IPs: []net.IP{net.ParseIP("127.0.0.9")}},
			want: []string{"127.0.0.1:18444"}},
		{name: "x5 unknown, plain answers", plain: &dnsseed.Answer{IPs: lo},
			want: []string{"127.0.0.1:18444"}, plainAsked: true,
			logs: []string{"DNS seed query gave no peer", "name=" + x5, "next=" + testSeedHost}},
		{name: "x5 answers no address", x5: &dnsseed.Answer{TXT: []string{"hello"}}, plain: &dnsseed.Answer{IPs: lo},
			want: []string{"127.0.0.1:18444"}, plainAsked: true},
		{name: "server failure, then junk records", x5: &dnsseed.Answer{Rcode: dns.RcodeServerFailure},
			plain:      &dnsseed.Answer{IPs: []net.IP{net.ParseIP("0.0.0.0"), net.ParseIP("224.0.0.1"), net.ParseIP("255.255.255.255")}},
			plainAsked: true,
			logs:       []string{"name=" + x5, "name=" + testSeedHost, "none a usable IP address"}},
		{name: "junk bytes", x5: &dnsseed.Answer{Junk: true}, plain: &dnsseed.Answer{Junk: true},
			plainAsked: true, logs: []string{"name=" + x5, "name=" + testSeedHost}},
		{name: "nothing at all", plainAsked: true, logs: []string{"name=" + x5, "name=" + testSeedHost}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seed := startTestSeed(t)
			if c.x5 != nil {
				seed.SetAnswer(x5, *c.x5)
			}
			if c.plain != nil {
				seed.SetAnswer(testSeedHost, *c.plain)
			}
			sink, log := newLogSink()
			n := seedTestNode(t, seededRegtest(t, "18444"), Config{Resolver: seed.Resolver(), Log: log, Tuning: Tuning{SeedTimeout: 300 * time.Millisecond}})
			addrs, err := n.addrs.lookupSeed(context.Background(), n.cfg.Network.Seeds[0])
			names := seed.QueriedNames()
			require.NotEqual(t, 0, len(names), "queried %v, want %s first", names, x5)
			require.Equal(t, x5, names[0], "queried %v, want %s first", names, x5)
			got := index(names, testSeedHost) >= 0
			require.Equal(t, c.plainAsked, got, "plain name asked: %v, want %v (queried %v)", got, c.plainAsked, names)
			if c.want != nil {
				require.NoError(t, err, "addrs %v, err %v; want %v", addrs, err, c.want)
				require.True(t, slices.Equal(addrs, c.want), "addrs %v, err %v; want %v", addrs, err, c.want)
			} else {
				require.ErrorIs(t, err, ErrSeedEmpty, "err %v, want ErrSeedEmpty naming the seed", err)
				require.ErrorContains(t, err, testSeedHost, "err %v, want ErrSeedEmpty naming the seed", err)
			}
			for _, l := range c.logs {
				require.Contains(t, sink.String(), l, "log lacks %q:\n%s", l, sink.String())
			}
		})
	}
}

// waitLog polls the sink until it holds every line of want.
func waitLog(t testing.TB, sink *logSink, want ...string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		missing := ""
		for _, w := range want {
			if !strings.Contains(sink.String(), w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		require.False(t, time.Now().After(deadline), "log never had %q:\n%s", missing, sink.String())
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNodeSurvivesJunkSeed(t *testing.T) {
	seed := startTestSeed(t)
	seed.SetAnswer("x5."+testSeedHost, dnsseed.Answer{IPs: []net.IP{net.ParseIP("0.0.0.0")}})
	seed.SetAnswer(testSeedHost, dnsseed.Answer{Junk: true})
	sink, log := newLogSink()
	n := seedTestNode(t, seededRegtest(t, "18444"), Config{Resolver: seed.Resolver(), Log: log, MaxPeers: 2, Tuning: Tuning{SeedTimeout: 200 * time.Millisecond}})
	require.NoError(t, n.Start(context.Background()))
	waitLog(t, sink, "DNS seed gave no peer", "no new peer address from the DNS seeds")
	// The seed is asked again.
	deadline := time.Now().Add(15 * time.Second)
	for strings.Count(sink.String(), "no new peer address from the DNS seeds") < 2 {
		require.False(t, time.Now().After(deadline), "seed not asked again:\n%s", sink.String())
		time.Sleep(20 * time.Millisecond)
	}
	st := n.Status()
	require.Len(t, st.Peers, 0, "status %+v", st)
	require.NoError(t, st.Err, "status %+v", st)
	done := make(chan error, 1)
	go func() { done <- n.Stop() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "Stop hangs while the seeds are asked")
	}
}

func TestCheckProxy(t *testing.T) {
	good := map[string]string{
		"127.0.0.1:9050":          "127.0.0.1:9050",
		"localhost:9050":          "127.0.0.1:9050",
		"LOCALHOST:1080":          "127.0.0.1:1080",
		"[::1]:9050":              "[::1]:9050",
		"10.1.2.3:1":              "10.1.2.3:1",
		"[::ffff:127.0.0.1]:9050": "127.0.0.1:9050",
	}
	for in, want := range good {
		got, err := CheckProxy(in)
		require.NoError(t, err, "CheckProxy(%q) = %q, %v; want %q", in, got, err, want)
		require.Equal(t, want, got, "CheckProxy(%q) = %q, %v; want %q", in, got, err, want)
	}
	for _, in := range []string{"tor.example:9050", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "0.0.0.0:9050", ":9050", "[fe80::1%lo]:9050"} {
		_, err := CheckProxy(in)
		require.ErrorIs(t, err, ErrBadConfig, "CheckProxy(%q): %v, want ErrBadConfig", in, err)
	}
	cfg, err := Config{Network: seededRegtest(t, "1"), DataDir: "x", Watcher: watchtest.NewMemWatcher(0), Proxy: "localhost:9050"}.withDefaults()
	require.NoError(t, err, "defaults: proxy %q resolver %v timeouts %v %v", cfg.Proxy, cfg.Resolver, cfg.Tuning.SeedTimeout, cfg.Tuning.DialTimeout)
	require.Equal(t, "127.0.0.1:9050", cfg.Proxy, "defaults: proxy %q resolver %v timeouts %v %v err %v", cfg.Proxy, cfg.Resolver, cfg.Tuning.SeedTimeout, cfg.Tuning.DialTimeout, err)
	require.Same(t, net.DefaultResolver, cfg.Resolver, "defaults: proxy %q resolver %v timeouts %v %v err %v", cfg.Proxy, cfg.Resolver, cfg.Tuning.SeedTimeout, cfg.Tuning.DialTimeout, err)
	require.Equal(t, DefaultSeedTimeout, cfg.Tuning.SeedTimeout, "defaults: proxy %q resolver %v timeouts %v %v err %v", cfg.Proxy, cfg.Resolver, cfg.Tuning.SeedTimeout, cfg.Tuning.DialTimeout, err)
	require.Equal(t, DefaultProxyDialTimeout, cfg.Tuning.DialTimeout, "defaults: proxy %q resolver %v timeouts %v %v err %v", cfg.Proxy, cfg.Resolver, cfg.Tuning.SeedTimeout, cfg.Tuning.DialTimeout, err)
	cfg, _ = (Config{Network: seededRegtest(t, "1"), DataDir: "x", Watcher: watchtest.NewMemWatcher(0)}).withDefaults()
	require.Equal(t, DefaultDialTimeout, cfg.Tuning.DialTimeout, "direct dial timeout %v", cfg.Tuning.DialTimeout)
}
