package spv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// seedServices are the service bits bloomwatch asks DNS seeds for and
// requires of the addresses peers announce: NODE_NETWORK (blocks from the
// wallet's birthday on, not only the last 288) and NODE_BLOOM (BIP111).
// bitcoin-seeder answers only the service filters of its whitelist (by
// default x1, x5, x9, x49, xd, x400, x404, x408, x448, x40c, and x809 and
// x849 in recent versions); x5 is in it, and every xd (…|NODE_WITNESS)
// node is also an x5 node. NODE_BLOOM alone (x4) is not in it, so a seed
// answers x4 with nothing.
const seedServices = wire.SFNodeNetwork | wire.SFNodeBloom

// ErrSeedEmpty is returned (wrapped with the seed's name and the causes)
// when a DNS seed gives no usable peer address: every name asked failed,
// answered nothing, or answered only junk; with a proxy, when the node
// reached at the seed's name announced no usable address.
var ErrSeedEmpty = errors.New("spv: DNS seed gave no usable peer address")

// Resolver looks up host names: DNS seeds, and explicit peers given by
// name when there is no proxy. *net.Resolver implements it
// (net.DefaultResolver is the default); tests point one at a DNS server
// on 127.0.0.1.
type Resolver interface {
	// LookupHost returns the addresses (IP literals) of host.
	LookupHost(ctx context.Context, host string) (addrs []string, err error)
}

var _ Resolver = net.DefaultResolver

// seedQueries returns the names to resolve for seed, in order: the
// service-bit subdomain x5.<host> when the seed filters by service bits,
// then the plain host, whose unfiltered answer is the fallback (the
// handshake refuses peers without NODE_BLOOM).
func seedQueries(seed chaincfg.DNSSeed) []string {
	q := netparams.SeedQuery(seed, seedServices)
	if q == seed.Host {
		return []string{seed.Host}
	}
	return []string{q, seed.Host}
}

// lookupSeed asks one DNS seed for peers: the names of seedQueries in
// turn, stopping at the first that gives a usable address. It returns the
// addresses as host:port with the network's default port, or an error
// wrapping ErrSeedEmpty. Each failed name is logged.
func (a *addrSource) lookupSeed(ctx context.Context, seed chaincfg.DNSSeed) ([]string, error) {
	port := a.n.cfg.Network.DefaultPort
	var errs []string
	names := seedQueries(seed)
	for i, name := range names {
		qctx, cancel := context.WithTimeout(ctx, a.n.cfg.Tuning.SeedTimeout)
		ips, err := a.n.cfg.Resolver.LookupHost(qctx, name)
		cancel()
		addrs, junk := seedAddrs(ips, port)
		if len(addrs) > 0 {
			a.n.log.Debug("DNS seed answered", "name", name, "addrs", len(addrs), "junk", junk)
			return addrs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case err != nil:
			err = fmt.Errorf("%s: %w", name, err)
		case junk > 0:
			err = fmt.Errorf("%s: %d answers, none a usable IP address", name, junk)
		default:
			err = fmt.Errorf("%s: no addresses", name)
		}
		errs = append(errs, err.Error())
		next := "none"
		if i+1 < len(names) {
			next = names[i+1]
		}
		a.n.log.Info("DNS seed query gave no peer", "seed", seed.Host, "name", name, "err", err, "next", next)
	}
	return nil, fmt.Errorf("%w: %s: %s", ErrSeedEmpty, seed.Host, strings.Join(errs, "; "))
}

// seedAddrs turns a seed's answer into peer addresses with port: IP
// literals that can be a peer (not unparsable, unspecified, multicast or
// the IPv4 broadcast address), without repeats, at most maxSeedAddrs.
// junk counts the answers dropped.
func seedAddrs(answers []string, port string) (addrs []string, junk int) {
	seen := make(map[netip.Addr]bool, len(answers))
	for _, s := range answers {
		ip, err := netip.ParseAddr(s)
		if err != nil || !usableIP(ip) {
			junk++
			continue
		}
		ip = ip.Unmap()
		if seen[ip] || len(addrs) >= maxSeedAddrs {
			continue
		}
		seen[ip] = true
		addrs = append(addrs, net.JoinHostPort(ip.String(), port))
	}
	return addrs, junk
}

// usableIP reports whether ip can be a peer's address.
func usableIP(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && !ip.IsUnspecified() && !ip.IsMulticast() &&
		ip != netip.AddrFrom4([4]byte{255, 255, 255, 255})
}
