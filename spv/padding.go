package spv

import (
	"time"

	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/peer"
	"github.com/btcsuite/btcd/wire"
)

// filterLoadWire returns the bytes an on-path observer sees for a
// filterload of payload bytes to ps: the padded burst over v2, the frame
// over v1; 0 for a peer without a connection (tests of the manager).
func (n *Node) filterLoadWire(ps *peerState, payload int) int {
	if ps.transport == "" {
		return 0
	}
	v2 := ps.transport == transcript.TransportV2
	w := filterpolicy.MessageWire(v2, payload)
	if v2 {
		w, _ = filterpolicy.PadFilterLoad(n.cfg.FilterPadding, w)
	}
	return w
}

// wirePacket is one write of the node, or one packet of a peer, as an
// on-path observer sees it: its length and time (Config.wireTap). Cmd
// is the message it carried, which the observer does not see over v2: it
// is there to score what the observer makes of the lengths.
type wirePacket struct {
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
// Config.wireTap (nil without one).
func (n *Node) outboundTap(addr string, t wireTransport) func(int, string) {
	tap := n.cfg.wireTap
	if tap == nil {
		return nil
	}
	return func(bytes int, cmd string) {
		tap(wirePacket{Time: time.Now(), Peer: addr, Transport: t, Out: true, Bytes: bytes, Cmd: cmd})
	}
}

// onWrite runs on btcd's writer after each message: it sends a
// filterload's padding decoy over v2 and writes the message (and decoy)
// out in one write.
// packet is the message's v2 packet (btcd reports the bytes written).
func (n *Node) onWrite(ps *peerState, p *peer.Peer, packet int, msg wire.Message, err error) {
	if err == nil && ps.transport == transcript.TransportV2 && p.V2Transport != nil {
		if _, ok := msg.(*wire.MsgFilterLoad); ok {
			if _, decoy := filterpolicy.PadFilterLoad(n.cfg.FilterPadding, packet); decoy >= 0 {
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

// onRead reports a received message to Config.wireTap.
func (n *Node) onRead(ps *peerState, bytes int, msg wire.Message, err error) {
	tap := n.cfg.wireTap
	if tap == nil || err != nil || msg == nil {
		return
	}
	if ps.transport == transcript.TransportV2 {
		bytes += filterpolicy.V2PacketOverhead // btcd counts the decrypted contents
	}
	tap(wirePacket{Time: time.Now(), Peer: ps.addr, Transport: ps.transport, Bytes: bytes, Cmd: msg.Command()})
}
