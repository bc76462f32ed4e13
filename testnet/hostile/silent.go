package hostile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// SilentConfig configures a SilentPeer.
type SilentConfig struct {
	// Params are the chain parameters (required): the network magic.
	Params *chaincfg.Params
	// Height is the start height the version message announces: above
	// the node's tip, the peer plays one in initial block download (or
	// lagging); at it, a peer with nothing new that never answers an
	// up-to-date getheaders.
	Height int32
	// Log receives one line per connection and handshake (nil: discard).
	Log io.Writer
}

// SilentStats reports what a SilentPeer did, summed over its connections.
type SilentStats struct {
	// Connections accepted and Handshakes completed.
	Connections, Handshakes int
	// Received counts the messages received by command.
	Received map[string]int
	// Active is the number of connections open now.
	Active int
}

// SilentPeer is a BIP37 peer on 127.0.0.1 that serves nothing: it
// announces SilentConfig.Height and NODE_NETWORK|NODE_BLOOM|NODE_WITNESS
// in its version message, answers pings, takes filterload, and never
// answers getheaders (no headers message, empty or not), as bcoin and btcd
// do while their chain is not synced and old Core did in initial block
// download. Every filtered block or transaction asked for gets notfound
// (it has none); mempool gets nothing. It keeps connections open until the
// node closes them or Close. A node must never call itself synced on the
// word of a SilentPeer that announces more than the node's tip.
type SilentPeer struct {
	server // its mu guards stats too
	cfg    SilentConfig
	stats  SilentStats
}

// StartSilent listens on 127.0.0.1 on a free port and serves every
// connection until Close or until ctx is done.
func StartSilent(ctx context.Context, cfg SilentConfig) (*SilentPeer, error) {
	if cfg.Params == nil {
		return nil, ErrNoParams
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	p := &SilentPeer{cfg: cfg, stats: SilentStats{Received: map[string]int{}}}
	p.accepted = func() { p.stats.Connections++ }
	p.handle, p.server.logf = p.serve, p.logf
	if err := p.listen(ctx, "silent peer"); err != nil {
		return nil, err
	}
	p.serveAll()
	p.logf("listening on %s, announcing height %d", p.Addr(), cfg.Height)
	return p, nil
}

// Stats returns a snapshot of what the peer did so far.
func (p *SilentPeer) Stats() SilentStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Received = make(map[string]int, len(p.stats.Received))
	for k, v := range p.stats.Received {
		s.Received[k] = v
	}
	s.Active = len(p.conns)
	return s
}

// serve runs one connection: the handshake, then one message at a time
// until the connection ends.
func (p *SilentPeer) serve(conn net.Conn) {
	err := p.session(conn)
	_ = conn.Close()
	p.mu.Lock()
	delete(p.conns, conn)
	p.mu.Unlock()
	p.logf("connection from %s ended: %v", conn.RemoteAddr(), err)
}

// session performs the handshake and answers pings and getdata.
func (p *SilentPeer) session(conn net.Conn) error {
	pver := uint32(wire.ProtocolVersion)
	read := func() (wire.Message, error) {
		for {
			_, msg, _, err := wire.ReadMessageWithEncodingN(conn, pver, p.cfg.Params.Net, wire.LatestEncoding)
			if errors.Is(err, wire.ErrUnknownMessage) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read: %w", err)
			}
			p.mu.Lock()
			p.stats.Received[msg.Command()]++
			p.mu.Unlock()
			return msg, nil
		}
	}
	write := func(msg wire.Message) error {
		_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := wire.WriteMessageWithEncodingN(conn, msg, pver, p.cfg.Params.Net, wire.LatestEncoding); err != nil {
			return fmt.Errorf("write %s: %w", msg.Command(), err)
		}
		return nil
	}

	_ = conn.SetReadDeadline(time.Now().Add(handshakeTimeout))
	msg, err := read()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	ver, ok := msg.(*wire.MsgVersion)
	if !ok {
		return fmt.Errorf("%w: first message %s, want version", ErrHandshake, msg.Command())
	}
	_ = conn.SetReadDeadline(time.Time{})
	pver = min(pver, uint32(ver.ProtocolVersion))
	local, _ := conn.LocalAddr().(*net.TCPAddr)
	remote, _ := conn.RemoteAddr().(*net.TCPAddr)
	if local == nil || remote == nil {
		return fmt.Errorf("%w: not a TCP connection", ErrHandshake)
	}
	services := wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness
	out := wire.NewMsgVersion(wire.NewNetAddress(local, services), wire.NewNetAddress(remote, ver.Services),
		rand.Uint64(), p.cfg.Height)
	out.Services = services
	if err := out.AddUserAgent(userAgentName, "0.1", "silent"); err != nil {
		return fmt.Errorf("%w: user agent: %w", ErrHandshake, err)
	}
	if err := write(out); err != nil {
		return err
	}
	if pver >= wire.AddrV2Version {
		if err := write(wire.NewMsgSendAddrV2()); err != nil {
			return err
		}
	}
	if err := write(wire.NewMsgVerAck()); err != nil {
		return err
	}
	p.mu.Lock()
	p.stats.Handshakes++
	p.mu.Unlock()
	p.logf("handshake with %s (%s), announced height %d", remote, ver.UserAgent, p.cfg.Height)

	for {
		msg, err := read()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *wire.MsgPing:
			if err := write(wire.NewMsgPong(m.Nonce)); err != nil {
				return err
			}
		case *wire.MsgGetData:
			nf := wire.NewMsgNotFound()
			for _, iv := range m.InvList {
				_ = nf.AddInvVect(iv)
			}
			if err := write(nf); err != nil {
				return err
			}
		}
	}
}

// logf writes one log line.
func (p *SilentPeer) logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.cfg.Log, "hostile[silent] %s\n", fmt.Sprintf(format, args...))
}
