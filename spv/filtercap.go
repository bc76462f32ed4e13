package spv

import (
	"math"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// BIP37 caps a filter at 36,000 bytes (bip37.MaxFilterSize). A wallet whose
// capacity needs more at the false-positive target gets the largest filter
// a node accepts, which cannot reach the target: its rate at its capacity
// is higher. The node never hides that: FilterInfo and FilterLoaded carry
// Capped and the rate really reached, the log says it at every such load,
// and the fill-driven reload compares a peer's filter with the rate that
// filter could reach when loaded, not with the target (else a capped
// filter would be reloaded after every block, forever).

// ln2Squared is (ln 2)^2, BIP37's sizing constant.
const ln2Squared = math.Ln2 * math.Ln2

// filterCapped reports whether a filter for capacity elements at fpRate
// would exceed bip37.MaxFilterSize (and so is built at the cap).
func filterCapped(capacity uint32, fpRate float64) bool {
	return -float64(capacity)*math.Log(fpRate)/ln2Squared > bip37.MaxFilterSize*8
}

// reloadThreshold returns the predicted rate of ps's filter above which
// the download peer is reloaded: ReloadFPRatio times the rate the filter
// could reach at its capacity when loaded, or times the target when that
// is lower.
func (m *manager) reloadThreshold(ps *peerState) float64 {
	return m.n.cfg.ReloadFPRatio * math.Max(m.n.cfg.FPRate, ps.loadRate)
}
