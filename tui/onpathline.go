package tui

import (
	"fmt"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// onPathLine is the privacy panel's line for the on-path observer (an
// ISP, a Wi-Fi operator) beside the peers' figures: over v1 it reads
// every filter (its expected false positives are those of the filters it
// read; the help and sync --json give its expected false positives), over
// v2 only sizes (the element range of the last filterload's burst); and
// the blocks it saw carry matches, the wallet's among them.
func onPathLine(m *Model, r privacy.Reading, w int) string {
	k := m.label
	op := r.OnPath
	if op.Loads == 0 {
		return ""
	}
	var what string
	switch {
	case op.Clear > 0:
		what = k(fmt.Sprintf("on path: %d/%d filters read", op.Clear, op.Loads))
		if op.Clear == op.Loads {
			what = k("on path (v1): as the peers")
		}
	default:
		what = k("on path (v2): ")
		if op.MinElements >= 0 {
			what += fmt.Sprint(op.MinElements) + "-" + upToText(op.MaxElements) + k(" elements")
		} else {
			what += k("no element range")
		}
	}
	blocks := fmt.Sprint(op.Blocks) + k(" blocks matched (") + fmt.Sprint(op.WalletBlocks) + k(" yours)")
	return joinFit(w, k(" · "), what, blocks)
}

// upToText prints an element range's top, "any" for no bound.
func upToText(hi int) string {
	if hi >= 1<<31-1 {
		return "any"
	}
	return fmt.Sprint(hi)
}
