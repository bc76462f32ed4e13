package tui

import (
	"fmt"

	"github.com/bloomwatch/bloomwatch/internal/amount"
)

// walletPanel shows the watch-only wallet as its last change left it: balances,
// unspent outputs, addresses used and the filter elements it watches.
type walletPanel struct{}

// title implements panel.
func (walletPanel) title(*Model, int) string { return "Wallet" }

// render implements panel: two lines when given two, else one.
func (walletPanel) render(m *Model, w, h int) []string {
	s := m.styles
	k := m.label
	switch {
	case m.haveWallet:
	case m.walletErr != nil:
		return []string{m.paint(&s.Bad, "wallet: "+m.walletErr.Error())}
	case m.cfg.Wallet == nil:
		return []string{m.paint(&s.Dim, "no wallet")}
	default:
		return []string{m.paint(&s.Dim, "reading wallet…")}
	}
	wl := m.wallet
	conf := k("confirmed ") + amount.BTC(int64(wl.balance.Confirmed))
	unconf := k("unconfirmed ") + amount.BTC(int64(wl.balance.Unconfirmed))
	immature := ""
	if wl.balance.Immature != 0 {
		immature = k("immature ") + amount.BTC(int64(wl.balance.Immature))
	}
	utxos := k("utxos ") + fmt.Sprint(wl.utxos)
	used := k("addresses used ") + fmt.Sprintf("%d/%d", wl.used, wl.addresses)
	if h < 2 {
		return []string{joinFit(w, "  ", conf, unconf, utxos, used, immature)}
	}
	l2 := joinFit(w, "  ", utxos, used, k("elements ")+fmt.Sprint(wl.stats.Elements),
		k("blocks ")+fmt.Sprint(wl.stats.BlocksApplied))
	if m.walletErr != nil {
		l2 = m.paint(&s.Bad, "wallet: "+m.walletErr.Error())
	}
	return []string{joinFit(w, "  ", conf, unconf, immature), l2}
}
