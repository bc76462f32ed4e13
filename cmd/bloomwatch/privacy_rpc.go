package main

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"
)

// localhostName is the only host name --btcd-rpc accepts; any other host
// must be a loopback IP literal, so no name resolution can send the
// credentials elsewhere.
const localhostName = "localhost"

// rpcDialTimeout bounds the reachability probe made before the RPC client
// is created: rpcclient retries a refused HTTP POST ten times with growing
// back-off (about 20 s), which would hide a wrong port behind a long wait.
const rpcDialTimeout = 3 * time.Second

// rpcChain reads blocks from a btcd JSON-RPC server (HTTP POST, no TLS,
// loopback only) and keeps every block it read, since the analyzer walks
// the chain more than once (universe, graph, saturation). It suits the
// regtest and simnet chains the project analyzes; a mainnet chain would
// not fit in memory.
type rpcChain struct {
	client *rpcclient.Client
	tip    int32
	cache  map[int32]*wire.MsgBlock
}

var _ privacy.Chain = (*rpcChain)(nil)

// checkLoopback accepts HOST:PORT only for a loopback host.
func checkLoopback(hostPort string) error {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil || port == "" {
		return usagef("--btcd-rpc %q: want HOST:PORT", hostPort)
	}
	if host == localhostName {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return usagef("--btcd-rpc %q: only a loopback address (127.0.0.1, ::1 or localhost) is allowed", hostPort)
	}
	return nil
}

// dialChain connects to btcd at hostPort and reads its tip; upTo caps the
// chain's height when non-negative.
func dialChain(hostPort, user, pass string, upTo int32) (*rpcChain, error) {
	if err := checkLoopback(hostPort); err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("tcp", hostPort, rpcDialTimeout)
	if err != nil {
		return nil, fmt.Errorf("--btcd-rpc %s: %w", hostPort, err)
	}
	_ = conn.Close()
	client, err := rpcclient.New(&rpcclient.ConnConfig{
		Host: hostPort, User: user, Pass: pass, HTTPPostMode: true, DisableTLS: true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("--btcd-rpc %s: %w", hostPort, err)
	}
	count, err := client.GetBlockCount()
	if err != nil {
		client.Shutdown()
		return nil, fmt.Errorf("--btcd-rpc %s: getblockcount: %w", hostPort, err)
	}
	c := &rpcChain{client: client, tip: int32(count), cache: map[int32]*wire.MsgBlock{}}
	if upTo >= 0 && upTo < c.tip {
		c.tip = upTo
	}
	return c, nil
}

// BestHeight implements privacy.Chain.
func (c *rpcChain) BestHeight() (int32, error) { return c.tip, nil }

// BlockAt implements privacy.Chain.
func (c *rpcChain) BlockAt(height int32) (*wire.MsgBlock, error) {
	if height < 0 || height > c.tip {
		return nil, fmt.Errorf("no block at height %d (tip %d)", height, c.tip)
	}
	if b, ok := c.cache[height]; ok {
		return b, nil
	}
	hash, err := c.client.GetBlockHash(int64(height))
	if err != nil {
		return nil, fmt.Errorf("getblockhash %d: %w", height, err)
	}
	b, err := c.client.GetBlock(hash)
	if err != nil {
		return nil, fmt.Errorf("getblock %s: %w", hash, err)
	}
	if got := b.BlockHash(); got != *hash {
		return nil, fmt.Errorf("getblock %s: server returned block %s", hash, got)
	}
	c.cache[height] = b
	return b, nil
}

// Close shuts the client down.
func (c *rpcChain) Close() {
	c.client.Shutdown()
}
