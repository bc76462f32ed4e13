package spv

import (
	"context"
	"net"

	"github.com/bloomwatch/bloomwatch/spv/netparams"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// seedQuery returns the host name to resolve for seed, asking for
// NODE_BLOOM peers through the seed's service-bit prefix when it supports
// filtering.
func seedQuery(seed chaincfg.DNSSeed, _ *netparams.Network) string {
	return netparams.SeedQuery(seed, wire.SFNodeBloom)
}

// netResolver resolves seed host names with the system resolver.
type netResolver struct{}

// lookup returns the IP addresses of host.
func (netResolver) lookup(ctx context.Context, host string) ([]string, error) {
	return net.DefaultResolver.LookupHost(ctx, host)
}

// joinHostPort joins an IP and a port.
func joinHostPort(ip, port string) string { return net.JoinHostPort(ip, port) }
