package tui

import (
	"fmt"
	"strings"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
)

// peersPanel is the peer table: address, transport (v2: BIP324,
// encrypted; v1: plaintext, which an on-path observer reads, shown as a
// warning), services, height, ping, ban score and user agent; * marks the
// download peer.
type peersPanel struct{}

// title implements panel: the peer count, the rows the panel has no room
// for ("+1 more": the download peer is always the first row), and the
// blocks that went without an omission check for want of a second peer.
func (peersPanel) title(m *Model, w int) string {
	t := fmt.Sprintf("Peers %d", len(m.st.peerList))
	if hidden := len(m.st.peerList) - m.layout().rows[PanelPeers]; hidden > 0 {
		t += fmt.Sprintf("  +%d more (tab, ↓)", hidden)
	}
	if m.st.unchecked > 0 {
		t += fmt.Sprintf(" · %d blocks unchecked", m.st.unchecked)
	}
	return t
}

// render implements panel: the header and h-1 peers from the panel's
// offset (the frame cuts the user agent to its width).
func (peersPanel) render(m *Model, _, h int) []string {
	s := m.styles
	n := h - 1
	row := func(mark, addr, tr, svc, height, ping, ban, agent string) string {
		return mark + " " + fit(addr, 21) + " " + tr + " " + fit(svc, 6) + " " + padLeft(height, 7) + " " +
			padLeft(ping, 7) + " " + padLeft(ban, 4) + " " + agent
	}
	out := []string{m.paint(&s.TableHeader, row(" ", "address", "tr", "svc", "height", "ping", "ban", "agent"))}
	peers := m.st.peerList
	off := min(m.offset[PanelPeers], max(len(peers)-n, 0))
	for i := off; i < len(peers) && i < off+n; i++ {
		p := peers[i]
		mark := " "
		if p.Download {
			mark = m.paint(&s.Wallet, "*")
		}
		ban := padLeft(fmt.Sprint(p.BanScore), 4)
		if p.BanScore > 0 {
			ban = m.paint(&s.Bad, ban)
		}
		tr := fit(p.Transport, 2)
		if p.Transport == transcript.TransportV1 {
			tr = m.paint(&s.FalsePositive, tr)
		}
		out = append(out, row(mark, p.Addr, tr, services(p.Services), fmt.Sprint(max(p.LastBlock, p.StartHeight)),
			fmt.Sprintf("%dms", p.PingTime.Milliseconds()), ban, p.UserAgent))
	}
	if len(peers) == 0 {
		out = append(out, m.paint(&s.Dim, "no peers"))
	}
	return out
}

// services abbreviates a peer's service flags: N network, B bloom, W
// witness, L network-limited, C compact filters, 2 BIP324 v2 transport.
func services(f wire.ServiceFlag) string {
	var b strings.Builder
	for _, x := range []struct {
		flag wire.ServiceFlag
		c    byte
	}{{wire.SFNodeNetwork, 'N'}, {wire.SFNodeBloom, 'B'}, {wire.SFNodeWitness, 'W'},
		{wire.SFNodeNetworkLimited, 'L'}, {wire.SFNodeCF, 'C'}, {wire.SFNodeP2PV2, '2'}} {
		if f&x.flag != 0 {
			b.WriteByte(x.c)
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}
