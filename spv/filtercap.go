package spv

import "math"

// BIP37 caps a filter at 36,000 bytes (bip37.MaxFilterSize). A wallet whose
// capacity needs more at the false-positive target gets the largest filter
// a node accepts, which cannot reach the target: its rate at its capacity
// is higher. The node never hides that: FilterInfo and FilterLoaded carry
// Capped and the rate really reached, the log says it at every such load,
// and the fill-driven reload compares a peer's filter with the rate that
// filter could reach when loaded, not with the target (else a capped
// filter would be reloaded after every block, forever). bip37.Capped is the
// rule.

// reloadThreshold returns the predicted rate of ps's filter above which
// the download peer is reloaded: ReloadFPRatio times the rate the filter
// could reach at its capacity when loaded, or times the target when that
// is lower.
func (m *manager) reloadThreshold(ps *peerState) float64 {
	return m.n.cfg.Tuning.ReloadFPRatio * math.Max(m.n.cfg.FPRate, ps.loadRate)
}
