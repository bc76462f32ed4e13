package dnsseed

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// startSeed starts a Seed closed at cleanup.
func startSeed(t *testing.T) *Seed {
	t.Helper()
	s, err := Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestDNSSeedAnswersAndLogs(t *testing.T) {
	s := startSeed(t)
	s.SetAnswer("x5.seed.bloomwatch.test", Answer{IPs: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}})
	s.SetAnswer("Seed.Bloomwatch.Test.", Answer{IPs: []net.IP{net.ParseIP("127.0.0.1")}})
	s.SetAnswer("fail.bloomwatch.test", Answer{Rcode: dns.RcodeServerFailure})
	s.SetAnswer("txt.bloomwatch.test", Answer{TXT: []string{"not an address"}})
	r := s.Resolver()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	addrs, err := r.LookupHost(ctx, "x5.seed.bloomwatch.test")
	require.NoError(t, err)
	slices.Sort(addrs)
	require.Equal(t, []string{"127.0.0.1", "::1"}, addrs)

	addrs, err = r.LookupHost(ctx, "seed.bloomwatch.test")
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1"}, addrs)

	_, err = r.LookupHost(ctx, "x4.seed.bloomwatch.test")
	var dnsErr *net.DNSError
	require.ErrorAs(t, err, &dnsErr)
	require.True(t, dnsErr.IsNotFound, "x4: %v", err)

	_, err = r.LookupHost(ctx, "fail.bloomwatch.test")
	require.Error(t, err)

	_, err = r.LookupHost(ctx, "txt.bloomwatch.test")
	require.Error(t, err, "a TXT-only answer has no host address")

	names := s.QueriedNames()
	for _, want := range []string{"x5.seed.bloomwatch.test", "seed.bloomwatch.test", "x4.seed.bloomwatch.test", "fail.bloomwatch.test"} {
		require.Contains(t, names, want)
	}
	var types []string
	for _, q := range s.Queries() {
		if q.Name == "x5.seed.bloomwatch.test" {
			types = append(types, q.Type)
		}
	}
	require.Contains(t, types, "A")
	require.Contains(t, types, "AAAA")

	// Removed names are unknown again.
	s.RemoveAnswer("seed.bloomwatch.test")
	_, err = r.LookupHost(ctx, "seed.bloomwatch.test")
	require.ErrorAs(t, err, &dnsErr)
	require.True(t, dnsErr.IsNotFound)
}

func TestDNSSeedJunkTimesOut(t *testing.T) {
	s := startSeed(t)
	s.SetAnswer("junk.bloomwatch.test", Answer{Junk: true})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Resolver().LookupHost(ctx, "junk.bloomwatch.test")
	require.Error(t, err, "random bytes are no answer")
	require.Less(t, time.Since(start), 10*time.Second)
	require.Contains(t, s.QueriedNames(), "junk.bloomwatch.test")
}

func TestDNSSeedCloseIsIdempotent(t *testing.T) {
	s, err := Start()
	require.NoError(t, err)
	addr := s.Addr()
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	// The TCP port no longer accepts.
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		_ = c.Close()
	}
	require.Error(t, err, "%s still accepts after Close", addr)
}
