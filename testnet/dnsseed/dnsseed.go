// Package dnsseed is a DNS seed on 127.0.0.1 for bloomwatch's tests
// (Start): it answers the names it is given with the addresses of
// loopback nodes and records every query, so peer discovery is tested
// without asking a real seed.
package dnsseed

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// Seed is a DNS server on 127.0.0.1 (UDP and TCP on one port, built on
// github.com/miekg/dns) that plays a Bitcoin DNS seed: it answers A and
// AAAA queries for the names it was given (SetAnswer), such as a seed's
// plain name and its service-bit subdomains (x5.<seed>), and NXDOMAIN for
// any other name, as bitcoin-seeder does for a filter outside its
// whitelist. It logs every query (Queries). It never forwards a query
// anywhere. Resolver returns a Go resolver that sends every query to it
// and nowhere else.
type Seed struct {
	addr string
	udp  *dns.Server
	tcp  *dns.Server

	mu      sync.Mutex
	answers map[string]Answer // by lower-case FQDN
	queries []Query
	closed  bool
	errs    chan error
}

// Answer is what a Seed answers for one name.
type Answer struct {
	// IPs are answered as A (IPv4) and AAAA (IPv6) records, TTL 60.
	IPs []net.IP
	// Rcode, when not zero, is answered instead (dns.RcodeServerFailure,
	// dns.RcodeRefused, ...), with no records.
	Rcode int
	// Junk answers with random bytes instead of a DNS message.
	Junk bool
	// TXT adds TXT records (what a seed that does not serve A records
	// might answer).
	TXT []string
}

// Query is one question a Seed received.
type Query struct {
	// Name is the queried name, lower case, without the final dot.
	Name string
	// Type is the query type: "A", "AAAA", ...
	Type string
}

// startAttempts is how many ports Start tries for its UDP
// and TCP pair.
const startAttempts = 5

// Start starts a Seed on a free 127.0.0.1 port with no names.
// Close stops it.
func Start() (*Seed, error) {
	var lastErr error
	for range startAttempts {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("dnsseed: %w", err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			_ = pc.Close()
			lastErr = err
			continue // the TCP port was taken: another pair
		}
		s := &Seed{addr: pc.LocalAddr().String(), answers: make(map[string]Answer), errs: make(chan error, 2)}
		started := make(chan struct{}, 2)
		notify := func() { started <- struct{}{} }
		s.udp = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(s.serve), NotifyStartedFunc: notify}
		s.tcp = &dns.Server{Listener: l, Handler: dns.HandlerFunc(s.serve), NotifyStartedFunc: notify}
		for _, srv := range []*dns.Server{s.udp, s.tcp} {
			go func() { s.errs <- srv.ActivateAndServe() }()
		}
		for range 2 {
			select {
			case <-started:
			case err := <-s.errs:
				return nil, errors.Join(fmt.Errorf("dnsseed: %w", err), s.Close())
			case <-time.After(testnet.StartTimeout):
				return nil, errors.Join(fmt.Errorf("dnsseed: %w: not serving", testnet.ErrTimeout), s.Close())
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("dnsseed: no free UDP and TCP port pair: %w", lastErr)
}

// Addr returns the server's address, "127.0.0.1:port" (UDP and TCP).
func (s *Seed) Addr() string { return s.addr }

// SetAnswer sets what the server answers for name (case-insensitive,
// with or without the final dot); it replaces an earlier answer.
func (s *Seed) SetAnswer(name string, a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[dns.CanonicalName(name)] = a
}

// RemoveAnswer makes the server answer NXDOMAIN for name again.
func (s *Seed) RemoveAnswer(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.answers, dns.CanonicalName(name))
}

// Queries returns the questions received so far, in order.
func (s *Seed) Queries() []Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Query(nil), s.queries...)
}

// QueriedNames returns the distinct names asked, in the order first
// asked.
func (s *Seed) QueriedNames() []string {
	var out []string
	seen := make(map[string]bool)
	for _, q := range s.Queries() {
		if !seen[q.Name] {
			seen[q.Name] = true
			out = append(out, q.Name)
		}
	}
	return out
}

// Resolver returns a pure-Go resolver whose every query goes to this
// server (UDP, and TCP for truncated answers) and nowhere else: the
// system's name servers are never asked. /etc/hosts is still read
// first, as the Go resolver always does.
func (s *Seed) Resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, s.addr)
		},
	}
}

// Close stops the server. It is idempotent.
func (s *Seed) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	var errs []error
	for _, srv := range []*dns.Server{s.udp, s.tcp} {
		if err := srv.Shutdown(); err != nil {
			errs = append(errs, err)
			// Never started: close its socket ourselves.
			if srv.PacketConn != nil {
				_ = srv.PacketConn.Close()
			}
			if srv.Listener != nil {
				_ = srv.Listener.Close()
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("dnsseed: dns seed close: %w", errors.Join(errs...))
	}
	return nil
}

// serve answers one DNS message.
func (s *Seed) serve(w dns.ResponseWriter, req *dns.Msg) {
	defer w.Close()
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.TrimSuffix(dns.CanonicalName(q.Name), ".")
	s.mu.Lock()
	s.queries = append(s.queries, Query{Name: name, Type: dns.TypeToString[q.Qtype]})
	a, ok := s.answers[dns.CanonicalName(q.Name)]
	s.mu.Unlock()
	switch {
	case !ok:
		m.Rcode = dns.RcodeNameError
	case a.Junk:
		junk := make([]byte, 64)
		_, _ = rand.Read(junk)
		_, _ = w.Write(junk)
		return
	case a.Rcode != 0:
		m.Rcode = a.Rcode
	default:
		hdr := func(t uint16) dns.RR_Header {
			return dns.RR_Header{Name: q.Name, Rrtype: t, Class: dns.ClassINET, Ttl: 60}
		}
		for _, ip := range a.IPs {
			switch ip4 := ip.To4(); {
			case ip4 != nil && q.Qtype == dns.TypeA:
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr(dns.TypeA), A: ip4})
			case ip4 == nil && ip.To16() != nil && q.Qtype == dns.TypeAAAA:
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr(dns.TypeAAAA), AAAA: ip})
			}
		}
		if len(a.TXT) > 0 && (q.Qtype == dns.TypeTXT || len(m.Answer) == 0) {
			m.Answer = append(m.Answer, &dns.TXT{Hdr: hdr(dns.TypeTXT), Txt: a.TXT})
		}
	}
	_ = w.WriteMsg(m)
}
