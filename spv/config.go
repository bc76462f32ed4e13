package spv

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/watch"
)

// Defaults for the Config and Tuning fields left zero.
const (
	// DefaultMaxPeers is the number of outbound connections.
	DefaultMaxPeers = 3

	// DefaultBatchSize is the number of filtered blocks requested in one
	// getdata, closed by a ping.
	DefaultBatchSize = 250

	// DefaultStallTimeout is how long a peer may leave a request without
	// any answer before it is disconnected.
	DefaultStallTimeout = 30 * time.Second

	// DefaultRetryMin and DefaultRetryMax bound the reconnect backoff.
	DefaultRetryMin = 500 * time.Millisecond
	// DefaultRetryMax is the largest reconnect backoff.
	DefaultRetryMax = 60 * time.Second

	// DefaultBanDuration is how long a misbehaving peer stays banned.
	DefaultBanDuration = 24 * time.Hour

	// DefaultTickInterval is the manager's housekeeping period (stall
	// checks, peer snapshots).
	DefaultTickInterval = time.Second

	// DefaultDialTimeout bounds one TCP connect.
	DefaultDialTimeout = 10 * time.Second

	// DefaultProxyDialTimeout bounds one connect through Config.Proxy,
	// the SOCKS5 handshake included: Tor builds a circuit for a new
	// isolation credential first (Bitcoin Core waits 20 s for a SOCKS5
	// reply).
	DefaultProxyDialTimeout = 30 * time.Second

	// DefaultSeedTimeout bounds one question to a DNS seed: a DNS
	// lookup, or with a proxy the address fetch from the node at the
	// seed's name (Bitcoin Core answers getaddr on its address timer,
	// 30 s on average).
	DefaultSeedTimeout = time.Minute

	// DefaultHandshakeTimeout bounds a connection's handshake: the
	// BIP324 key exchange when there is one, the version messages and
	// the veracks. A v2 attempt to a peer that stays silent (a v1 peer
	// that neither answers nor hangs up) costs this much before the v1
	// one. btcd's peer package gives up after 30 s whatever this says.
	DefaultHandshakeTimeout = 20 * time.Second

	// DefaultMinPeersWait bounds the wait for Tuning.MinPeers.
	DefaultMinPeersWait = 10 * time.Second

	// DefaultSpotCheckEvery makes every block be asked again from a second
	// peer, when one is connected, to detect omitted transactions. A
	// sampled rate (1/20) costs ~5 % more bytes but catches a single
	// hidden payment only with probability 1/20; checking every block
	// catches each one (TestOmissionDetectionLoop) for 1.31x the bytes of
	// an unchecked regtest sync and 1.83x on 2,000-tx blocks
	// (TestOmissionCheckCost, bench --scenarios checks).
	DefaultSpotCheckEvery = 1

	// DefaultReloadEvery is the mean number of delivered blocks between
	// two scheduled reload points; each interval is drawn uniformly from
	// half to one and a half times it (reload.go). During a catch-up it
	// paces the reloads for new keys: a reserve must cover about this
	// many blocks (and the window in flight) of payments.
	DefaultReloadEvery = 100

	// DefaultReloadInterval is the mean time between two scheduled
	// reload points (drawn like DefaultReloadEvery): what paces reloads
	// once the node follows the live chain.
	DefaultReloadInterval = 30 * time.Minute

	// DefaultQuietBlocks and DefaultQuietTime are the window after a
	// wallet match in which a live node sends no filter: a scheduled
	// reload waits until this many blocks were delivered since the last
	// block holding a wallet transaction and this long has passed since
	// the last wallet transaction (in a block or the mempool), so that
	// the transactions and blocks a peer sent just before a filterload
	// are not the wallet's.
	DefaultQuietBlocks = 3
	// DefaultQuietTime is the time half of the window (see
	// DefaultQuietBlocks).
	DefaultQuietTime = 20 * time.Minute

	// DefaultRefetchWindow aligns re-fetches: blocks fetched again after
	// a gap-limit reload start at a multiple of this many blocks (a day
	// of blocks), not at the block whose payment made the wallet need
	// new keys. The blocks between the boundary and that block are
	// fetched as cover and discarded.
	DefaultRefetchWindow = 144

	// DefaultFullBlockEvery makes each block, with probability 1/n, be
	// asked whole from the peer that filtered it (omission detection
	// without a second peer). 0 in Config means this default.
	DefaultFullBlockEvery = 0

	// DefaultCheckWait bounds how long an omission check of a block near
	// the tip waits for a second peer to get the block (the download
	// peer announced it first). The node is not synced while a check
	// waits; a check that cannot finish within it leaves its block
	// unchecked (BlockUnchecked with Waited).
	DefaultCheckWait = 30 * time.Second
)

// Config configures a Node. Network, DataDir and Watcher are required; the
// rest has defaults. Tuning holds the knobs that tests and harnesses
// turn; its zero value is the defaults.
type Config struct {
	// Network selects the chain, its seeds and checkpoints.
	Network *netparams.Network
	// DataDir holds the header store, the privacy transcript
	// (transcript.jsonl), the ban list, the persistent filter tweak and,
	// with Decoys, the persisted decoys.
	DataDir string
	// Connect lists explicit peers (host:port). When empty the node asks
	// the network's DNS seeds for NODE_BLOOM peers (mainnet and testnets
	// only).
	Connect []string
	// MaxPeers is the number of outbound connections (DefaultMaxPeers).
	MaxPeers int
	// Watcher is what the node syncs.
	Watcher watch.Watcher
	// FPRate is the filter's false-positive target at its capacity
	// (filterpolicy.DefaultFPRate).
	FPRate float64
	// Log receives the node's log; nil discards it. Never stdout while a
	// TUI runs.
	Log *slog.Logger

	// Proxy is a SOCKS5 proxy (IP:port, or localhost:port) that every
	// peer connection goes through, as Bitcoin Core's -proxy (Tor's
	// SOCKS port is 127.0.0.1:9050). While it is set bloomwatch resolves
	// no name itself: host names in Connect go to the proxy unresolved,
	// and DNS seeds are reached by connecting to each seed's name on the
	// network's port through the proxy and asking the node there for
	// addresses (getaddr), as Core does with a name proxy. Resolver is
	// never called. Empty: direct connections.
	Proxy string
	// NoProxyIsolation turns per-connection stream isolation off. By
	// default each connection through Proxy authenticates with a
	// username and password of its own (Core's -proxyrandomize), which
	// Tor's IsolateSOCKSAuth (on by default) maps to a circuit of its
	// own, so no two connections share an exit; the transcript's
	// Record.Via names each filter's isolation id. With
	// NoProxyIsolation every connection offers no credentials and
	// shares the proxy's default stream (Record.Via "proxy").
	NoProxyIsolation bool
	// Resolver looks up DNS seed names (the x5.<seed> service-bit
	// subdomain first, then the plain name) and host names in Connect
	// when there is no Proxy (net.DefaultResolver when nil).
	Resolver Resolver
	// SpotCheckEvery asks each block, with probability 1/n, again from a
	// second peer and compares the matched txids (omission detection);
	// 1 checks every block; negative disables it (DefaultSpotCheckEvery
	// when 0).
	SpotCheckEvery int
	// FullBlockEvery asks each block, with probability 1/n, whole from
	// the peer that filtered it and replays it through that peer's
	// filter (omission detection with one peer, at the cost of the full
	// block); negative disables it (DefaultFullBlockEvery when 0).
	FullBlockEvery int
	// UserAgent is sent in the version message ("bloomwatch" when empty).
	UserAgent string
	// Transport is the P2P transport policy: TransportAuto (the
	// default, "" too), TransportV2 or TransportV1 (see Transport).
	Transport Transport
	// FilterPadding is how filterloads sent over v2 are padded
	// (filterpolicy.PadSteps when empty).
	FilterPadding filterpolicy.FilterPadding
	// ReloadEvery is the mean spacing, in delivered blocks, of the
	// scheduled reload points at which the filters of every peer are
	// reloaded together when the watcher's elements grew, a filter
	// drifted or a decoy retired (DefaultReloadEvery;
	// Tuning.ReloadInterval is the spacing in time); nothing else
	// reloads a filter but a new peer, a download peer that lacks
	// outpoints, the gap-limit race and the user.
	ReloadEvery int
	// RefetchWindow aligns re-fetches to multiples of this many blocks
	// (DefaultRefetchWindow); 1 re-fetches from the block itself.
	RefetchWindow int
	// Decoys, from 0 (the default: none) to MaxDecoys, is how many
	// graph-near decoys every filter holds beside the watcher's elements:
	// the scripts of the watcher's counterparties, chosen from its
	// transactions as they arrive and persisted in DecoyFile (decoys.go).
	// They cost the false positives of the counterparties' later
	// transactions (Status.DecoyMatches).
	Decoys int
	// Protocol is how blocks are found: ProtocolBIP37 (the default, ""
	// too), ProtocolBIP158 (compact block filters, cfsync.go) or
	// ProtocolAuto; Prefer is ProtocolAuto's choice for a peer that
	// serves both (ProtocolBIP37 when empty).
	Protocol Protocol
	Prefer   Protocol

	// Tuning holds the timing, batching and observation knobs; its zero
	// value is the defaults, which is what a user wants.
	Tuning Tuning

	// clock is the time source (the system clock when nil); wireTap,
	// when set, receives every write of the node and every message of
	// its peers as an on-path observer sees them: length and time. It
	// is called on the connections' goroutines and must not block. Only
	// the package's tests set them (export_test.go for the external
	// ones).
	clock   timeSource
	wireTap func(wirePacket)
}

// Tuning holds the Config knobs that tests, harnesses and measurements
// set: timeouts, batch sizes, reload timing. Every field's zero value is
// its default.
type Tuning struct {
	// RetryMin and RetryMax bound the reconnect backoff
	// (DefaultRetryMin, DefaultRetryMax).
	RetryMin, RetryMax time.Duration
	// SideBranchMargin and MaxSideHeaders bound the side-branch headers
	// the header store keeps (headers.DefaultSideBranchMargin and
	// headers.DefaultMaxSideHeaders when 0): a branch trailing by more
	// than the margin is refused, and past MaxSideHeaders the branches
	// with the least work are evicted, never the one that becomes best. A
	// peer sending branches past the margin, whose branches are evicted
	// or that holds more than a quarter of MaxSideHeaders is scored
	// (misbehaviorLowWorkHeaders).
	SideBranchMargin, MaxSideHeaders int
	// ReloadFPRatio reloads a peer's filter when its predicted
	// false-positive rate exceeds ReloadFPRatio*Config.FPRate
	// (filterpolicy.DefaultReloadFPRatio).
	ReloadFPRatio float64
	// BatchSize is the number of filtered blocks per getdata
	// (DefaultBatchSize).
	BatchSize int
	// Window is the number of blocks requested ahead of the watcher
	// (filterpolicy.DefaultWindow; at least BatchSize).
	Window int
	// StallTimeout disconnects a peer that makes no progress on what it
	// owes (filtered blocks, transactions, full blocks, a batch's pong)
	// or leaves a getheaders unanswered this long (DefaultStallTimeout).
	// Progress is an answer to a request: other messages, such as an
	// unsolicited empty headers, do not count.
	StallTimeout time.Duration
	// BanDuration is how long a misbehaving peer stays banned
	// (DefaultBanDuration).
	BanDuration time.Duration
	// TickInterval is the housekeeping period (DefaultTickInterval).
	TickInterval time.Duration
	// DialTimeout bounds one TCP connect (DefaultDialTimeout), through
	// Config.Proxy the SOCKS5 handshake included
	// (DefaultProxyDialTimeout).
	DialTimeout time.Duration
	// SeedTimeout bounds one question to a DNS seed (DefaultSeedTimeout).
	SeedTimeout time.Duration
	// CheckWait bounds the wait of an omission check for a second peer
	// to have its block (DefaultCheckWait).
	CheckWait time.Duration
	// CheckPeers is how many second peers are asked about each block a
	// cross-peer check covers, when that many can answer (drawn afresh
	// for each block, other network groups first: checkers.go); each
	// costs one more filtered block (DefaultCheckPeers when 0, at most
	// MaxCheckPeers).
	CheckPeers int
	// MinPeers is the number of ready peers the node waits for, at most
	// MinPeersWait, before it picks a download peer for the first time
	// (default 2 when Config.Connect names two peers or more and
	// Config.MaxPeers allows two connections, else 1). With more than
	// one, the best announced chain is chosen among them and spot checks
	// have a second peer from the start. Later the sync goes on with
	// whatever peers remain.
	MinPeers int
	// MinPeersWait bounds the wait for MinPeers (DefaultMinPeersWait).
	MinPeersWait time.Duration
	// HandshakeTimeout bounds each connection's handshake
	// (DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
	// ReloadInterval is the mean spacing in time of the scheduled reload
	// points (DefaultReloadInterval; Config.ReloadEvery is the spacing
	// in blocks).
	ReloadInterval time.Duration
	// QuietBlocks and QuietTime are the window after a wallet match in
	// which a live node sends no filter (DefaultQuietBlocks,
	// DefaultQuietTime); negative: none.
	QuietBlocks int
	QuietTime   time.Duration
}

// withDefaults returns c with zero fields filled and checks it.
func (c Config) withDefaults() (Config, error) {
	if c.Network == nil || c.Network.Params == nil {
		return c, fmt.Errorf("%w: no network", ErrBadConfig)
	}
	if c.DataDir == "" {
		return c, fmt.Errorf("%w: no data dir", ErrBadConfig)
	}
	if c.Watcher == nil {
		return c, fmt.Errorf("%w: no watcher", ErrBadConfig)
	}
	if c.MaxPeers < 0 || c.Tuning.BatchSize < 0 || c.Tuning.Window < 0 {
		return c, fmt.Errorf("%w: negative peer, batch or window count", ErrBadConfig)
	}
	if c.Decoys < 0 || c.Decoys > MaxDecoys {
		return c, fmt.Errorf("%w: Decoys %d not in [0, %d]", ErrBadConfig, c.Decoys, MaxDecoys)
	}
	if c.MaxPeers == 0 {
		c.MaxPeers = DefaultMaxPeers
	}
	if c.FPRate == 0 {
		c.FPRate = filterpolicy.DefaultFPRate
	}
	if !(c.FPRate > 0 && c.FPRate < 1) {
		return c, fmt.Errorf("%w: FPRate %v not in (0, 1)", ErrBadConfig, c.FPRate)
	}
	if c.Tuning.ReloadFPRatio == 0 {
		c.Tuning.ReloadFPRatio = filterpolicy.DefaultReloadFPRatio
	}
	if c.Tuning.ReloadFPRatio < 1 {
		return c, fmt.Errorf("%w: ReloadFPRatio %v below 1", ErrBadConfig, c.Tuning.ReloadFPRatio)
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.clock == nil {
		c.clock = systemClock{}
	}
	if c.Tuning.BatchSize == 0 {
		c.Tuning.BatchSize = DefaultBatchSize
	}
	if c.Tuning.Window == 0 {
		c.Tuning.Window = filterpolicy.DefaultWindow
	}
	if c.Tuning.Window < c.Tuning.BatchSize {
		c.Tuning.Window = c.Tuning.BatchSize
	}
	if c.Tuning.StallTimeout <= 0 {
		c.Tuning.StallTimeout = DefaultStallTimeout
	}
	if c.Tuning.CheckWait <= 0 {
		c.Tuning.CheckWait = DefaultCheckWait
	}
	if c.Tuning.RetryMin <= 0 {
		c.Tuning.RetryMin = DefaultRetryMin
	}
	if c.Tuning.RetryMax <= 0 {
		c.Tuning.RetryMax = DefaultRetryMax
	}
	if c.Tuning.RetryMax < c.Tuning.RetryMin {
		c.Tuning.RetryMax = c.Tuning.RetryMin
	}
	if c.Tuning.BanDuration <= 0 {
		c.Tuning.BanDuration = DefaultBanDuration
	}
	if c.Tuning.TickInterval <= 0 {
		c.Tuning.TickInterval = DefaultTickInterval
	}
	if c.Tuning.DialTimeout <= 0 {
		c.Tuning.DialTimeout = DefaultDialTimeout
		if c.Proxy != "" {
			c.Tuning.DialTimeout = DefaultProxyDialTimeout
		}
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.Tuning.SeedTimeout <= 0 {
		c.Tuning.SeedTimeout = DefaultSeedTimeout
	}
	if c.Proxy != "" {
		proxy, err := CheckProxy(c.Proxy)
		if err != nil {
			return c, err
		}
		c.Proxy = proxy
	}
	if c.SpotCheckEvery == 0 {
		c.SpotCheckEvery = DefaultSpotCheckEvery
	}
	if c.FullBlockEvery == 0 {
		c.FullBlockEvery = DefaultFullBlockEvery
	}
	switch {
	case c.Tuning.CheckPeers == 0:
		c.Tuning.CheckPeers = DefaultCheckPeers
	case c.Tuning.CheckPeers < 0 || c.Tuning.CheckPeers > MaxCheckPeers:
		return c, fmt.Errorf("%w: CheckPeers %d outside 1..%d", ErrBadConfig, c.Tuning.CheckPeers, MaxCheckPeers)
	}
	if c.Tuning.MinPeers <= 0 {
		// With two peers named, the first sync waits for both (at most
		// MinPeersWait): started on whichever finished its handshake
		// first, a short catch-up could end before the other was ready
		// and every block of it went unchecked (the demo's 30-block
		// chain: 30 of 30 in one run of two, the v2 handshake to one
		// btcd against the v1 fallback to the other).
		c.Tuning.MinPeers = 1
		if len(c.Connect) >= 2 && c.MaxPeers >= 2 {
			c.Tuning.MinPeers = 2
		}
	}
	t, err := ParseTransport(string(c.Transport))
	if err != nil {
		return c, err
	}
	c.Transport = t
	if c.Protocol, err = ParseProtocol(string(c.Protocol)); err != nil {
		return c, err
	}
	if c.Prefer, err = ParseProtocol(string(c.Prefer)); err != nil || c.Prefer == ProtocolAuto {
		return c, fmt.Errorf("%w: prefer %q (want bip37 or bip158)", ErrBadConfig, c.Prefer)
	}
	if c.Protocol != ProtocolBIP37 && c.Decoys > 0 {
		return c, fmt.Errorf("%w: decoys are bloom-filter elements: no decoys over %s", ErrBadConfig, c.Protocol)
	}
	if c.FilterPadding, err = filterpolicy.ParseFilterPadding(string(c.FilterPadding)); err != nil {
		return c, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	if c.Tuning.HandshakeTimeout <= 0 {
		c.Tuning.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.ReloadEvery < 0 || c.Tuning.ReloadInterval < 0 || c.RefetchWindow < 0 {
		return c, fmt.Errorf("%w: negative reload spacing or refetch window", ErrBadConfig)
	}
	if c.ReloadEvery == 0 {
		c.ReloadEvery = DefaultReloadEvery
	}
	if c.Tuning.ReloadInterval == 0 {
		c.Tuning.ReloadInterval = DefaultReloadInterval
	}
	if c.Tuning.QuietBlocks == 0 {
		c.Tuning.QuietBlocks = DefaultQuietBlocks
	}
	if c.Tuning.QuietBlocks < 0 {
		c.Tuning.QuietBlocks = 0
	}
	if c.Tuning.QuietTime == 0 {
		c.Tuning.QuietTime = DefaultQuietTime
	}
	if c.Tuning.QuietTime < 0 {
		c.Tuning.QuietTime = 0
	}
	if c.RefetchWindow == 0 {
		c.RefetchWindow = DefaultRefetchWindow
	}
	if c.Tuning.MinPeersWait <= 0 {
		c.Tuning.MinPeersWait = DefaultMinPeersWait
	}
	if c.UserAgent == "" {
		c.UserAgent = "bloomwatch"
	}
	return c, nil
}

// checkProxy checks a Config.Proxy value and returns it with localhost
// spelled 127.0.0.1: the proxy must be an IP address (or localhost) and
// a port, because a proxy's name would need the local lookup a proxy is
// meant to avoid.
func CheckProxy(proxy string) (string, error) {
	host, port, err := net.SplitHostPort(proxy)
	if err != nil {
		return "", fmt.Errorf("%w: proxy %q: %w", ErrBadConfig, proxy, err)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return "", fmt.Errorf("%w: proxy %q: port must be 1 to 65535", ErrBadConfig, proxy)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" || ip.IsUnspecified() {
		return "", fmt.Errorf("%w: proxy %q: host must be an IP address or localhost (a name would be resolved locally)", ErrBadConfig, proxy)
	}
	return net.JoinHostPort(ip.Unmap().String(), port), nil
}

// CheckPeerAddr checks a Config.Connect entry: HOST:PORT with a host and a
// port from 1 to 65535. Errors wrap ErrBadConfig.
func CheckPeerAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: peer %q: want HOST:PORT: %w", ErrBadConfig, addr, err)
	}
	if host == "" {
		return fmt.Errorf("%w: peer %q: empty host", ErrBadConfig, addr)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return fmt.Errorf("%w: peer %q: bad port %q", ErrBadConfig, addr, port)
	}
	return nil
}
