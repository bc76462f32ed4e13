package spv

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/wire"
)

// Protocol is how the node learns which blocks hold the watcher's
// transactions (Config.Protocol, sync --protocol).
type Protocol string

// The protocols.
const (
	// ProtocolBIP37 (the default, "" too) loads a bloom filter of the
	// watcher's elements into NODE_BLOOM peers and downloads filtered
	// blocks (merkleblock and the matched transactions).
	ProtocolBIP37 Protocol = "bip37"
	// ProtocolBIP158 downloads the compact block filters of BIP157/158
	// from NODE_COMPACT_FILTERS peers, matches the watcher's scripts
	// locally and downloads the matching blocks whole. The peers learn
	// which blocks were asked, never a filter of the wallet; there is
	// no mempool filtering (BIP158 has none), so unconfirmed payments
	// are not seen.
	ProtocolBIP158 Protocol = "bip158"
	// ProtocolAuto accepts peers that serve either: the first ready
	// peer decides the session's protocol (BIP158 when it serves only
	// compact filters, BIP37 when it serves only bloom filters,
	// Config.Prefer when it serves both), and peers that do not serve
	// the chosen one are disconnected.
	ProtocolAuto Protocol = "auto"
)

// ErrPeerNoFilters is the handshake refusal of a peer that does not
// advertise NODE_COMPACT_FILTERS while the node syncs over BIP158.
var ErrPeerNoFilters = errors.New("spv: peer does not serve compact block filters (NODE_COMPACT_FILTERS)")

// ParseProtocol returns the protocol named by s ("" is ProtocolBIP37), or
// an error wrapping ErrBadConfig.
func ParseProtocol(s string) (Protocol, error) {
	switch Protocol(s) {
	case "", ProtocolBIP37:
		return ProtocolBIP37, nil
	case ProtocolBIP158, ProtocolAuto:
		return Protocol(s), nil
	}
	return "", fmt.Errorf("%w: protocol %q (want bip37, bip158 or auto)", ErrBadConfig, s)
}

// servesProtocol reports whether a peer advertising services serves p
// (ProtocolAuto: either).
func servesProtocol(p Protocol, services wire.ServiceFlag) bool {
	bloom := services&wire.SFNodeBloom != 0
	cf := services&wire.SFNodeCF != 0
	switch p {
	case ProtocolBIP158:
		return cf
	case ProtocolAuto:
		return bloom || cf
	}
	return bloom
}

// chooseProtocol is ProtocolAuto's choice for a peer advertising
// services: the protocol it alone serves, prefer when it serves both.
func chooseProtocol(services wire.ServiceFlag, prefer Protocol) Protocol {
	bloom := services&wire.SFNodeBloom != 0
	cf := services&wire.SFNodeCF != 0
	switch {
	case cf && !bloom:
		return ProtocolBIP158
	case bloom && !cf:
		return ProtocolBIP37
	}
	return prefer
}

// checkPeerVersion refuses peers that cannot serve the node's protocol:
// checkVersion over BIP37; over BIP158 a peer without
// NODE_COMPACT_FILTERS; under ProtocolAuto a peer with neither service.
func (n *Node) checkPeerVersion(msg *wire.MsgVersion) error {
	if n.cfg.Protocol == ProtocolBIP37 {
		return checkVersion(msg)
	}
	if uint32(msg.ProtocolVersion) < minPeerProtocol {
		return fmt.Errorf("%w: version %d < %d", ErrPeerTooOld, msg.ProtocolVersion, minPeerProtocol)
	}
	if !servesProtocol(n.cfg.Protocol, msg.Services) {
		if n.cfg.Protocol == ProtocolBIP158 {
			return fmt.Errorf("%w: services %v", ErrPeerNoFilters, msg.Services)
		}
		return fmt.Errorf("%w: services %v (neither NODE_BLOOM nor NODE_COMPACT_FILTERS)", ErrPeerNoBloom, msg.Services)
	}
	return nil
}

// chooseProtocol settles ProtocolAuto's choice at the first ready peer
// (chooseProtocol of its services and Config.Prefer) and reports whether
// ps serves the session's protocol; a peer that does not is disconnected
// without a score. Under a fixed protocol the handshake already refused
// such peers (checkPeerVersion).
func (m *manager) chooseProtocol(ps *peerState) bool {
	cfg := &m.n.cfg
	if cfg.Protocol != ProtocolAuto {
		return true // the handshake refused the peers that do not serve it
	}
	services := ps.p.Services()
	if !m.protocolSet {
		m.protocolSet = true
		if chooseProtocol(services, cfg.Prefer) == ProtocolBIP158 {
			m.cf = newCFSync(m)
		} else if _, err := m.currentFilter(); err != nil {
			m.fail(err)
			return false
		}
		m.n.log.Info("protocol chosen", "protocol", m.protocol(), "peer", ps.addr, "services", services)
	}
	if servesProtocol(m.protocol(), services) {
		return true
	}
	m.n.log.Info("peer does not serve the session's protocol: disconnecting", "addr", ps.addr, "protocol", m.protocol(), "services", services)
	ps.ready = false
	ps.p.Disconnect()
	return false
}

// protocol is the session's protocol (ProtocolAuto until the first ready
// peer settles it).
func (m *manager) protocol() Protocol {
	switch {
	case m.cf != nil:
		return ProtocolBIP158
	case m.n.cfg.Protocol == ProtocolAuto && !m.protocolSet:
		return ProtocolAuto
	}
	return ProtocolBIP37
}
