package main

import (
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/privacy/btcdrpc"
)

// dialChain connects to btcd's JSON-RPC server at hostPort (loopback
// only) and reads its tip; upTo caps the chain's height when
// non-negative. An address btcdrpc refuses is a usage error.
func dialChain(hostPort, user, pass string, upTo int32) (*btcdrpc.Chain, error) {
	c, err := btcdrpc.Dial(hostPort, user, pass, upTo)
	if ae := (*btcdrpc.AddressError)(nil); errors.As(err, &ae) {
		return nil, usagef("--btcd-rpc %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("--btcd-rpc %w", err)
	}
	return c, nil
}
