package btcdrpc

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"
)

// localhostName is the only host name Dial accepts; any other host must be
// a loopback IP literal, so no name resolution can send the credentials
// elsewhere.
const localhostName = "localhost"

// dialTimeout bounds the reachability probe Dial makes before it creates
// the RPC client: rpcclient retries a refused HTTP POST ten times with
// growing back-off (about 20 s), which would hide a wrong port behind a
// long wait.
const dialTimeout = 3 * time.Second

// Reasons an address is refused, wrapped by AddressError.
var (
	// ErrBadAddress is an address that is not HOST:PORT.
	ErrBadAddress = errors.New("want HOST:PORT")
	// ErrNotLoopback is a host that is neither localhost nor a loopback
	// IP literal.
	ErrNotLoopback = errors.New("only a loopback address (127.0.0.1, ::1 or localhost) is allowed")
)

// AddressError is an address Dial refuses before connecting. Its Err is
// ErrBadAddress or ErrNotLoopback; a command line reports it as bad input.
type AddressError struct {
	Addr string
	Err  error
}

// Error implements error.
func (e *AddressError) Error() string { return fmt.Sprintf("%q: %v", e.Addr, e.Err) }

// Unwrap returns the reason, for errors.Is.
func (e *AddressError) Unwrap() error { return e.Err }

// CheckLoopback returns nil when hostPort is HOST:PORT with a loopback
// host, else an *AddressError.
func CheckLoopback(hostPort string) error {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil || port == "" {
		return &AddressError{Addr: hostPort, Err: ErrBadAddress}
	}
	if host == localhostName {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return &AddressError{Addr: hostPort, Err: ErrNotLoopback}
	}
	return nil
}

// Chain is a btcd node's best chain, read block by block over JSON-RPC
// and kept in memory once read. It is not safe for concurrent use.
type Chain struct {
	client  *rpcclient.Client
	tip     int32
	cache   map[int32]*wire.MsgBlock
	noCache bool
}

var _ element.Chain = (*Chain)(nil)

// Dial checks that hostPort is a loopback address (an *AddressError if
// not), probes it, connects to btcd there with the RPC credentials and
// reads its tip. A non-negative upTo caps the chain's height (the tip
// when the node's is lower). Close the chain when done.
func Dial(hostPort, user, pass string, upTo int32) (*Chain, error) {
	if err := CheckLoopback(hostPort); err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("tcp", hostPort, dialTimeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", hostPort, err)
	}
	_ = conn.Close()
	client, err := rpcclient.New(&rpcclient.ConnConfig{
		Host: hostPort, User: user, Pass: pass, HTTPPostMode: true, DisableTLS: true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", hostPort, err)
	}
	count, err := client.GetBlockCount()
	if err != nil {
		client.Shutdown()
		return nil, fmt.Errorf("%s: getblockcount: %w", hostPort, err)
	}
	c := &Chain{client: client, tip: int32(count), cache: map[int32]*wire.MsgBlock{}}
	if upTo >= 0 && upTo < c.tip {
		c.tip = upTo
	}
	return c, nil
}

// BestHeight implements element.Chain: the node's tip when Dial read it,
// or the cap Dial was given.
func (c *Chain) BestHeight() (int32, error) { return c.tip, nil }

// BlockAt implements element.Chain. It checks that the block the node
// returns hashes to the hash it gave for the height.
func (c *Chain) BlockAt(height int32) (*wire.MsgBlock, error) {
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
	if !c.noCache {
		c.cache[height] = b
	}
	return b, nil
}

// SetCaching turns the block cache on (the default: the analyzer walks
// the chain more than once) or off (a single pass over a long chain, such
// as ExportUniverse's, must not hold it).
func (c *Chain) SetCaching(on bool) {
	c.noCache = !on
	if !on {
		c.cache = map[int32]*wire.MsgBlock{}
	}
}

// Close shuts the RPC client down.
func (c *Chain) Close() {
	c.client.Shutdown()
}
