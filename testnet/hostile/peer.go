package hostile

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Defaults of the Config knobs.
const (
	// DefaultForkHeight is where LowWorkFork and FakeWorkFork branch off.
	DefaultForkHeight = 1
	// DefaultFloodMessages is the number of inv messages InvFlood sends.
	DefaultFloodMessages = 20
	// DefaultFloodSize is the number of entries per flood inv.
	DefaultFloodSize = 5000
	// DefaultExtraTxs is how many unmatched txs InflateFP adds per block.
	DefaultExtraTxs = 3
	// DefaultOmitRate is the share of blocks with matches in which
	// OmitRandomMatch lies.
	DefaultOmitRate = 0.2
	// DefaultKeepAliveInterval is how often StallKeepAlive sends its
	// empty headers message.
	DefaultKeepAliveInterval = 2 * time.Second
	// handshakeTimeout bounds the wait for the node's version message.
	handshakeTimeout = 10 * time.Second
	// writeTimeout bounds each write, so a node that stops reading cannot
	// block the peer forever.
	writeTimeout = 30 * time.Second
	// userAgentName is the name in the user agent the peer advertises.
	userAgentName = "bloomwatch-hostile"
)

// Config configures a hostile peer.
type Config struct {
	// Upstream is the honest node the chain is read from (required);
	// testnet.Node.RPC() fits.
	Upstream Upstream
	// Params are the upstream's chain parameters (required): network
	// magic and genesis.
	Params *chaincfg.Params
	// Scenario is the misbehaviour (default Honest).
	Scenario Scenario
	// Log receives one line per notable action (nil: discard).
	Log io.Writer
	// Times caps how often the misbehaviour is applied per connection;
	// 0 means at every opportunity.
	Times int
	// ForkHeight is the last common block of the forks of LowWorkFork and
	// FakeWorkFork (default DefaultForkHeight).
	ForkHeight int32
	// FloodMessages and FloodSize shape InvFlood (defaults
	// DefaultFloodMessages, DefaultFloodSize; FloodSize at most
	// wire.MaxInvPerMsg).
	FloodMessages, FloodSize int
	// ExtraTxs is how many unmatched transactions InflateFP adds to each
	// merkleblock (default DefaultExtraTxs).
	ExtraTxs int
	// ProtocolVersion is the version advertised (default
	// wire.ProtocolVersion).
	ProtocolVersion uint32
	// OmitRate is the share of merkleblocks with matches in which
	// OmitRandomMatch lies (default DefaultOmitRate).
	OmitRate float64
	// Seed seeds the random bytes of Garbage and InvFlood and the
	// choices of OmitRandomMatch.
	Seed int64
	// Port is the 127.0.0.1 port to listen on (0: a free one), for a test
	// that needs the peer's address to sort before or after another's.
	Port uint16
	// Now is the clock of HeaderTimeTooNew (default time.Now).
	Now func() time.Time
	// KeepAliveInterval is how often StallKeepAlive sends an empty
	// headers message once stalled (default DefaultKeepAliveInterval).
	KeepAliveInterval time.Duration
}

// withDefaults validates cfg and fills its defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Upstream == nil {
		return cfg, ErrNoUpstream
	}
	if cfg.Params == nil {
		return cfg, ErrNoParams
	}
	if cfg.Scenario == "" {
		cfg.Scenario = Honest
	}
	if !cfg.Scenario.Valid() {
		return cfg, fmt.Errorf("hostile: scenario %q: %w", cfg.Scenario, ErrUnknownScenario)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.ForkHeight <= 0 {
		cfg.ForkHeight = DefaultForkHeight
	}
	if cfg.FloodMessages <= 0 {
		cfg.FloodMessages = DefaultFloodMessages
	}
	if cfg.FloodSize <= 0 {
		cfg.FloodSize = DefaultFloodSize
	}
	cfg.FloodSize = min(cfg.FloodSize, wire.MaxInvPerMsg)
	if cfg.ExtraTxs <= 0 {
		cfg.ExtraTxs = DefaultExtraTxs
	}
	if cfg.OmitRate <= 0 || cfg.OmitRate > 1 {
		cfg.OmitRate = DefaultOmitRate
	}
	if cfg.ProtocolVersion == 0 {
		cfg.ProtocolVersion = wire.ProtocolVersion
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KeepAliveInterval <= 0 {
		cfg.KeepAliveInterval = DefaultKeepAliveInterval
	}
	return cfg, nil
}

// Stats reports what the peer did, summed over its connections.
type Stats struct {
	// Connections accepted and Handshakes completed.
	Connections, Handshakes int
	// Received and Sent count messages by command.
	Received, Sent map[string]int
	// FilterLoads counts filterload messages received.
	FilterLoads int
	// Applied counts the times the scenario's misbehaviour was carried
	// out; Skipped the opportunities where it could not apply (for
	// example a CVE-2012-2459 tree for a power-of-two block), served
	// honestly instead.
	Applied, Skipped int
	// RemoteClosed counts connections the node closed; LocalClosed those
	// the peer closed itself (DisconnectMidBatch, NoBloom, errors, Close).
	RemoteClosed, LocalClosed int
	// Active is the number of connections open now.
	Active int
	// LastError is the last error that ended a connection, if any.
	LastError string
	// Omitted lists the transactions OmitMatchedTx and OmitRandomMatch
	// hid, in order.
	Omitted []chainhash.Hash
}

// Peer is a running hostile peer listening on 127.0.0.1.
type Peer struct {
	server // its mu guards stats and rng too
	cfg    Config
	chain  *chain

	logMu sync.Mutex

	stats Stats
	rng   *rand.Rand
	// filters caches the upstream's compact filters by block hash.
	filters map[chainhash.Hash][]byte
}

// Start listens on 127.0.0.1 on a free port and serves every connection
// with cfg's scenario until Close or until ctx is done.
func Start(ctx context.Context, cfg Config) (*Peer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Peer{
		cfg:   cfg,
		chain: newChain(cfg.Upstream),
		stats: Stats{Received: map[string]int{}, Sent: map[string]int{}},
		rng:   rand.New(rand.NewSource(cfg.Seed)),

		filters: make(map[chainhash.Hash][]byte),
	}
	p.accepted = func() { p.stats.Connections++ }
	p.handle, p.server.logf = p.serve, p.logf
	if err := p.listenOn(ctx, "peer", cfg.Port); err != nil {
		return nil, err
	}
	p.serveAll()
	p.logf("listening on %s, scenario %s", p.Addr(), cfg.Scenario)
	return p, nil
}

// Scenario returns the peer's scenario.
func (p *Peer) Scenario() Scenario { return p.cfg.Scenario }

// Stats returns a snapshot of what the peer did so far.
func (p *Peer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Received = make(map[string]int, len(p.stats.Received))
	for k, v := range p.stats.Received {
		s.Received[k] = v
	}
	s.Omitted = append([]chainhash.Hash(nil), p.stats.Omitted...)
	s.Sent = make(map[string]int, len(p.stats.Sent))
	for k, v := range p.stats.Sent {
		s.Sent[k] = v
	}
	s.Active = len(p.conns)
	return s
}

// serve runs one connection's session and accounts for how it ended.
func (p *Peer) serve(conn net.Conn) {
	s := newSession(p, conn)
	byUs, err := s.run()
	_ = conn.Close()
	p.mu.Lock()
	delete(p.conns, conn)
	if byUs || p.ctx.Err() != nil {
		p.stats.LocalClosed++
	} else {
		p.stats.RemoteClosed++
	}
	if err != nil {
		p.stats.LastError = err.Error()
	}
	p.mu.Unlock()
	p.logf("connection from %s ended (closed by us: %v): %v", conn.RemoteAddr(), byUs, err)
}

// count updates the stats under the lock.
func (p *Peer) count(f func(*Stats)) {
	p.mu.Lock()
	f(&p.stats)
	p.mu.Unlock()
}

// draw runs f with the peer's seeded generator under its lock.
func (p *Peer) draw(f func(r *rand.Rand) (int, bool)) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return f(p.rng)
}

// randBytes returns n seeded random bytes.
func (p *Peer) randBytes(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := make([]byte, n)
	p.rng.Read(b)
	return b
}

// logf writes one log line.
func (p *Peer) logf(format string, args ...any) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintf(p.cfg.Log, "hostile[%s] %s\n", p.cfg.Scenario, fmt.Sprintf(format, args...))
}
