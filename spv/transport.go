package spv

import (
	"errors"
	"fmt"
	"sync"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
)

// Transport is the P2P transport policy (Config.Transport, sync
// --transport): which of the plaintext v1 transport and BIP324's
// encrypted v2 transport the node speaks, and to whom.
type Transport string

// The transport policies.
const (
	// TransportAuto (the default) tries v2 first with every peer that
	// advertises NODE_P2P_V2 (in an addr message, or in its version
	// message during an earlier connection) and with every explicit
	// peer (Config.Connect), and falls back to v1 when the peer turns
	// out to speak only v1, as Bitcoin Core does: when it hung up, or
	// stayed silent, before sending anything, or answered in v1
	// (its first bytes are the network magic). Peers learned from DNS
	// seeds, whose answers carry no NODE_P2P_V2, are reached over v1
	// and, when their version message advertises NODE_P2P_V2, left
	// before any filter is sent and reached again over v2.
	TransportAuto Transport = "auto"
	// TransportV2 speaks only v2: a peer that speaks only v1 is refused
	// (ErrPeerPlaintext), so no filter ever leaves in plaintext.
	TransportV2 Transport = "v2"
	// TransportV1 speaks only v1 (plaintext), as bloomwatch did before
	// BIP324.
	TransportV1 Transport = "v1"
)

// ErrPeerPlaintext is the refusal of a peer that speaks only the
// plaintext v1 transport while Config.Transport is TransportV2.
var ErrPeerPlaintext = errors.New("spv: peer speaks only the plaintext v1 transport (--transport v2 refuses it)")

// ErrV2Handshake is the error of a v2 handshake that failed after the
// peer sent something other than a v1 message: garbage, a key that
// derives other secrets, a packet that does not decrypt, or silence
// after its key. Such a peer is not retried over v1 (Bitcoin Core's
// rule: only a peer that sent nothing, or v1, gets a v1 connection).
var ErrV2Handshake = errors.New("spv: BIP324 v2 handshake failed")

// ParseTransport returns the policy named by s ("" is TransportAuto), or
// an error wrapping ErrBadConfig.
func ParseTransport(s string) (Transport, error) {
	switch Transport(s) {
	case "", TransportAuto:
		return TransportAuto, nil
	case TransportV2, TransportV1:
		return Transport(s), nil
	}
	return "", fmt.Errorf("%w: transport %q: want auto, v2 or v1", ErrBadConfig, s)
}

// wireTransport is the transport of one connection: transcript.TransportV1
// or transcript.TransportV2.
type wireTransport = string

// transportMemory is what the node learned about its peers' transports,
// by address, for the connection slots (which run concurrently): peers
// that advertised NODE_P2P_V2 and peers whose v2 handshake showed they
// speak only v1 (those are reached over v1 from then on).
type transportMemory struct {
	mu       sync.Mutex
	v2       map[string]bool // advertised NODE_P2P_V2
	v1Only   map[string]bool // a v2 attempt showed it speaks only v1
	explicit map[string]bool // Config.Connect: v2 first under auto
}

// newTransportMemory returns an empty memory knowing the explicit peers.
func newTransportMemory(explicit []string) *transportMemory {
	m := &transportMemory{v2: map[string]bool{}, v1Only: map[string]bool{}, explicit: map[string]bool{}}
	for _, a := range explicit {
		m.explicit[a] = true
	}
	return m
}

// maxTransportMemory bounds each of transportMemory's sets: addresses
// come from untrusted addr messages, a few hundred per seed round. Past
// it an address is simply not remembered (it is reached over v1 first
// and moved to v2 by its version message, or tried over v2 again).
const maxTransportMemory = 4096

// learn records the services an address was advertised with (an addr
// message, a version message).
func (m *transportMemory) learn(addr string, services wire.ServiceFlag) {
	if services&wire.SFNodeP2PV2 == 0 {
		return
	}
	m.mu.Lock()
	if len(m.v2) < maxTransportMemory {
		m.v2[addr] = true
	}
	m.mu.Unlock()
}

// plaintext records that addr answered a v2 attempt as a v1 peer.
func (m *transportMemory) plaintext(addr string) {
	m.mu.Lock()
	if len(m.v1Only) < maxTransportMemory {
		m.v1Only[addr] = true
	}
	m.mu.Unlock()
}

// first returns the transport of the first connection attempt to addr
// under policy t.
func (m *transportMemory) first(t Transport, addr string) wireTransport {
	switch t {
	case TransportV1:
		return transcript.TransportV1
	case TransportV2:
		return transcript.TransportV2
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.v1Only[addr] && (m.explicit[addr] || m.v2[addr]) {
		return transcript.TransportV2
	}
	return transcript.TransportV1
}

// upgradable reports whether a v1 connection to addr whose version
// message advertises NODE_P2P_V2 should be left for a v2 one under
// policy t: auto, and no v2 attempt showed the peer speaks only v1.
func (m *transportMemory) upgradable(t Transport, addr string) bool {
	if t != TransportAuto {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.v1Only[addr]
}
