package tui

import (
	"fmt"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// onPathLine is the privacy panel's line for the on-path observer (an
// ISP, a Wi-Fi operator) beside the peers' figures: over v1 it reads
// every filter (its expected false positives are those of the filters it
// read), over v2 only sizes (the element range of the last filterload's
// burst); and the blocks it saw carry matches, the wallet's among them.
func onPathLine(m *Model, r privacy.Reading, w int) string {
	k := m.label
	op := r.OnPath
	if op.Loads == 0 {
		return ""
	}
	var what string
	switch {
	case op.Clear > 0:
		what = k(fmt.Sprintf("on path: read %d/%d filters (v1), ", op.Clear, op.Loads)) +
			formatCount(op.ExpectedFP) + k(" fp left")
		if op.Clear == op.Loads {
			what = k("on path (v1): reads as the peers")
		}
	default:
		what = k("on path (v2): sizes only, ")
		if op.MinElements >= 0 {
			what += fmt.Sprint(op.MinElements) + "-" + upToText(op.MaxElements) + k(" elements")
		} else {
			what += k("no element range")
		}
	}
	blocks := k("matched blocks ") + fmt.Sprint(op.Blocks) + k(" (") + fmt.Sprint(op.WalletBlocks) + k(" wallet)")
	return joinFit(w, k(" · "), what, blocks)
}

// upToText prints an element range's top, "any" for no bound.
func upToText(hi int) string {
	if hi >= 1<<31-1 {
		return "any"
	}
	return fmt.Sprint(hi)
}
