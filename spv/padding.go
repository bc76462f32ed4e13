package spv

import (
	"fmt"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// FilterPadding is how a filterload sent over v2 is padded, with a BIP324
// decoy packet (the ignore bit set: the peer drops it) written together
// with it, so that an on-path observer, who sees the length of what is
// written at once and not the encrypted lengths inside, learns a size
// class instead of the filter's size. Over v1 nothing is padded: the
// observer reads the filter itself.
type FilterPadding string

// The filterload paddings.
const (
	// PadSteps (the default) pads a filterload to the smallest of
	// PadClasses that holds it and a decoy packet: an observer learns
	// whether the filter's capacity is at most 1,024 elements (about 500
	// addresses' elements at the default rate), at most 4,096, or more.
	PadSteps FilterPadding = "steps"
	// PadMax pads every filterload to the largest one BIP37 allows
	// (MaxFilterLoadWire): the observer learns nothing from its size.
	PadMax FilterPadding = "max"
	// PadNone sends filterloads as they are: the observer reads the
	// filter's byte size, hence its capacity step.
	PadNone FilterPadding = "none"
)

// V2PacketOverhead is what a BIP324 packet adds to its contents: the
// 3-byte encrypted length, the header byte and the 16-byte tag.
const V2PacketOverhead = 3 + 1 + 16

// MaxFilterLoadWire is the v2 packet of the largest filterload: the
// 1-byte message type, a 36,000-byte filter with its 3-byte length,
// nHashFuncs, nTweak and nFlags.
const MaxFilterLoadWire = V2PacketOverhead + 1 + 3 + bip37.MaxFilterSize + 4 + 4 + 1

// PadClasses are PadSteps' burst sizes, in bytes on the wire.
var PadClasses = []int{4096, 16384, MaxFilterLoadWire}

// ParseFilterPadding returns the padding named by s ("" is PadSteps), or
// an error wrapping ErrBadConfig.
func ParseFilterPadding(s string) (FilterPadding, error) {
	switch FilterPadding(s) {
	case "", PadSteps:
		return PadSteps, nil
	case PadMax, PadNone:
		return FilterPadding(s), nil
	}
	return "", fmt.Errorf("%w: filter padding %q: want steps, max or none", ErrBadConfig, s)
}

// messageWire returns the bytes a message whose payload is payload bytes
// long takes on the wire over transport t: the v1 frame's 24-byte header,
// or the v2 packet's framing and 1-byte short message type (every message
// the node sends has one).
func messageWire(t wireTransport, payload int) int {
	if t == transcript.TransportV2 {
		return V2PacketOverhead + 1 + payload
	}
	return wire.MessageHeaderSize + payload
}

// padFilterLoad returns the burst a v2 filterload packet of packet bytes
// is padded to under p, and the contents of the decoy packet that pads
// it (-1: none). A decoy needs V2PacketOverhead bytes itself, so a class
// too close above the packet is passed for the next.
func padFilterLoad(p FilterPadding, packet int) (burst, decoy int) {
	classes := PadClasses
	switch p {
	case PadNone:
		return packet, -1
	case PadMax:
		classes = PadClasses[len(PadClasses)-1:]
	}
	for _, c := range classes {
		switch {
		case c == packet:
			return packet, -1
		case c-packet >= V2PacketOverhead:
			return c, c - packet - V2PacketOverhead
		}
	}
	return packet, -1
}

// filterLoadWire returns the bytes an on-path observer sees for a
// filterload of payload bytes to ps: the padded burst over v2, the frame
// over v1; 0 for a peer without a connection (tests of the manager).
func (n *Node) filterLoadWire(ps *peerState, payload int) int {
	if ps.transport == "" {
		return 0
	}
	w := messageWire(ps.transport, payload)
	if ps.transport == transcript.TransportV2 {
		w, _ = padFilterLoad(n.cfg.FilterPadding, w)
	}
	return w
}

// WirePacket is one write of the node, or one packet of a peer, as an
// on-path observer sees it: its length and time (Config.WireTap). Cmd
// is the message it carried, which the observer does not see over v2: it
// is there to score what the observer makes of the lengths.
type WirePacket struct {
	Time      time.Time
	Peer      string
	Transport string
	// Out marks what the node sent: a write (a message, with its
	// padding decoy packet when it has one; "" Cmd for handshake bytes).
	// Otherwise it is one message received: its v1 frame or v2 packet.
	Out   bool
	Bytes int
	Cmd   string
}

// outboundTap returns the wireConn tap that reports the node's writes to
// Config.WireTap (nil without one).
func (n *Node) outboundTap(addr string, t wireTransport) func(int, string) {
	tap := n.cfg.WireTap
	if tap == nil {
		return nil
	}
	return func(bytes int, cmd string) {
		tap(WirePacket{Time: time.Now(), Peer: addr, Transport: t, Out: true, Bytes: bytes, Cmd: cmd})
	}
}

// onWrite runs on btcd's writer after each message: it sends a
// filterload's padding decoy over v2 and writes the message (and decoy)
// out in one write.
// packet is the message's v2 packet (btcd reports the bytes written).
func (n *Node) onWrite(ps *peerState, p *peer.Peer, packet int, msg wire.Message, err error) {
	if err == nil && ps.transport == transcript.TransportV2 && p.V2Transport != nil {
		if _, ok := msg.(*wire.MsgFilterLoad); ok {
			if _, decoy := padFilterLoad(n.cfg.FilterPadding, packet); decoy >= 0 {
				if _, _, derr := p.V2Transport.V2EncPacket(make([]byte, decoy), nil, true); derr != nil {
					n.log.Warn("filterload padding failed: disconnecting", "peer", ps.addr, "err", derr)
					p.Disconnect()
					return
				}
			}
		}
	}
	if ferr := ps.wc.flush(msg.Command()); ferr != nil {
		p.Disconnect()
	}
}

// onRead reports a received message to Config.WireTap.
func (n *Node) onRead(ps *peerState, bytes int, msg wire.Message, err error) {
	tap := n.cfg.WireTap
	if tap == nil || err != nil || msg == nil {
		return
	}
	if ps.transport == transcript.TransportV2 {
		bytes += V2PacketOverhead // btcd counts the decrypted contents
	}
	tap(WirePacket{Time: time.Now(), Peer: ps.addr, Transport: ps.transport, Bytes: bytes, Cmd: msg.Command()})
}
