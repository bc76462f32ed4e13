package spv

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
)

// Choosing the second peers of an omission check. The peers asked about a
// block are drawn afresh for every block from those that can answer (ready,
// with a filter, not lagging, with the block), with a ChaCha8 generator
// seeded from crypto/rand: no peer can predict which blocks it will be
// asked about, nor whether the primary's lie will be seen. Up to
// Tuning.CheckPeers are asked (DefaultCheckPeers: two), each costing one
// more filtered block (the merkleblock and its matched transactions). The
// draw prefers network diversity, as Bitcoin Core's netgroups do for
// outbound connections: first peers whose network group differs from the
// primary's and from those already drawn, then peers outside the
// primary's group, then the rest. A network group is the /16 of an IPv4
// address, the /32 of an IPv6 one, the first character of an onion name
// (Core: its first 4 bits), and the name itself for any other host name
// (reached through a proxy: its address is unknown).
//
// With n peers connected, all eligible, c = min(CheckPeers, n-1) of the
// n-1 others are asked about each block. A transaction the download peer
// hides stays hidden only if every one of them lies too: for k colluding
// peers, the download peer among them, in network groups of their own,
// C(k-1, c) / C(n-1, c) per block (0 when k-1 < c; 2 of 4 with c = 2:
// 0; 3 of 4: 1/3; 3 of 5: 1/6); colluders in the download peer's group
// are asked only after every peer of another group.

// DefaultCheckPeers is the number of second peers asked about each checked
// block when that many are connected (Tuning.CheckPeers).
const DefaultCheckPeers = 2

// MaxCheckPeers is the largest Tuning.CheckPeers.
const MaxCheckPeers = 8

// newCheckRNG returns the generator of the checkers' draw: ChaCha8 seeded
// from the operating system's cryptographic source.
func newCheckRNG() (*rand.Rand, error) {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("seed the omission checks' generator: %w", err)
	}
	return rand.New(rand.NewChaCha8(seed)), nil
}

// netGroup returns the network group of a peer address (host:port, or a
// bare host).
func netGroup(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if ip := net.ParseIP(host); ip != nil {
		if v4 := ip.To4(); v4 != nil {
			return fmt.Sprintf("ipv4 %d.%d", v4[0], v4[1])
		}
		return fmt.Sprintf("ipv6 %x", binary.BigEndian.Uint32(ip.To16()[:4]))
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if name, ok := strings.CutSuffix(host, ".onion"); ok && name != "" {
		return "onion " + name[:1]
	}
	return "name " + host
}

// checkCandidates returns the peers that can answer a check of the block
// at height that ps delivered: ready, with a filter, not lagging, with
// the chain up to height, and not in skip.
func (m *manager) checkCandidates(ps *peerState, height int32, skip map[*peerState]bool) []*peerState {
	var out []*peerState
	for p := range m.peers {
		if p == ps || p.mirror == nil || !p.lagSince.IsZero() || p.lastBlock < height || skip[p] {
			continue
		}
		out = append(out, p)
	}
	return out
}

// pickCheckers draws more second peers for plan p: up to Tuning.CheckPeers
// in all with those already asked, other network groups first (see
// above), and among them peers whose filter holds the watcher's
// outpoints first (holdsOutpoints): only such a peer sends a hidden spend
// of them.
func (m *manager) pickCheckers(p *checkPlan) []*peerState {
	cands := m.checkCandidates(p.primary, p.height, p.asked)
	k := min(m.n.cfg.Tuning.CheckPeers-len(p.asked), len(cands))
	if k <= 0 {
		return nil
	}
	m.checkRNG.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	var holders, others []*peerState
	for _, c := range cands {
		if m.holdsOutpoints(c) {
			holders = append(holders, c)
		} else {
			others = append(others, c)
		}
	}
	primary := netGroup(p.primary.addr)
	taken := map[string]bool{primary: true}
	for a := range p.asked {
		taken[netGroup(a.addr)] = true
	}
	picked := make([]*peerState, 0, k)
	for _, group := range [][]*peerState{holders, others} {
		used := make([]bool, len(group))
		for pass := 0; pass < 3 && len(picked) < k; pass++ {
			for i, c := range group {
				if used[i] || len(picked) == k {
					continue
				}
				g := netGroup(c.addr)
				if (pass == 0 && taken[g]) || (pass == 1 && g == primary) {
					continue
				}
				used[i], taken[g] = true, true
				picked = append(picked, c)
			}
		}
	}
	return picked
}

// sendCheck asks ps about plan p's block. A second peer's filter must hold
// the watcher's outpoints, or it would not send a hidden spend of one:
// pickCheckers prefers peers that do. One that does not (no peer that
// filtered the block that created the coin can answer) is asked anyway,
// for what its filter does hold, and gets the outpoints at the next
// reload point with every peer (reload.go, outpointsLacking), not now: a
// filter sent to it right before a check would follow the wallet's
// payment.
func (m *manager) sendCheck(p *checkPlan, ps *peerState) {
	if p.asked == nil {
		p.asked = make(map[*peerState]bool)
	}
	p.asked[ps] = true
	p.outstanding++
	m.sendBatch(ps, []*blockReq{{hash: p.hash, height: p.height, gen: ps.filterGen, check: &spotCheck{plan: p}}})
}

// holdsOutpoints reports whether ps's server filter holds every outpoint
// the watcher added since it was last found to hold them all (a filter
// only grows): its mirror matches it, or a request in flight to ps is for
// the block that added it (the server inserts it when it filters that
// block; the mirror follows once the answer comes).
func (m *manager) holdsOutpoints(ps *peerState) bool {
	log := m.els.opsLog
	held := len(log) // log[:held] all in the mirror
	for i := ps.opsHeld; i < len(log); i++ {
		e := log[i]
		if _, live := m.els.ops[e.op]; !live || ps.mirror.MatchesOutPoint(&e.op) {
			continue
		}
		if !ps.asking(e.height) {
			return false
		}
		held = min(held, i)
	}
	ps.opsHeld = held
	return true
}

// asking reports whether a filtered-block request for height h is in
// flight to ps (h -1: never).
func (ps *peerState) asking(h int32) bool {
	if h < 0 {
		return false
	}
	if ps.cur != nil && ps.cur.req.height == h {
		return true
	}
	for _, r := range ps.reqs {
		if r.height == h && !r.stale {
			return true
		}
	}
	return false
}

// opsLogged returns how many outpoints the element set's log holds (a
// filter built now holds them all).
func (s *elementSet) opsLogged() int { return len(s.opsLog) }
