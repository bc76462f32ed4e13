package tui

import (
	"fmt"

	"github.com/bloomwatch/bloomwatch/internal/amount"
)

// matchedPanel is the table of transactions peers sent because they
// matched the filter: txid, height, the wallet's net amount,
// confirmations and the verdict (the wallet's, a false positive, or seen
// before). The cursor row opens the detail view (enter); / narrows the
// rows, s and S sort them.
type matchedPanel struct{}

// title implements panel: the counts, then as room allows the cursor
// position, the search and the order.
func (matchedPanel) title(m *Model, w int) string {
	t := fmt.Sprintf("Matched txs  wallet %d  false positives %d", m.st.nOwn, m.st.nFP)
	hidden := " (hidden)"
	if width(t)+30 > w {
		t, hidden = fmt.Sprintf("Matched  wallet %d  fp %d", m.st.nOwn, m.st.nFP), " hidden"
	}
	if m.hideFP {
		t += hidden
	}
	var pos, order, query string
	if n := m.tableLen(); n > 0 {
		pos = fmt.Sprintf("[%d/%d]", m.cursor+1, n)
	}
	if m.query != "" {
		query = "/" + m.query
	}
	if m.sortBy != sortArrival || m.sortAsc {
		order = "by " + m.sortBy.String() + " " + dirArrow(m.sortAsc)
	}
	return joinFit(w, "  ", t, pos, query, order)
}

// dirArrow is ↑ for ascending, ↓ for descending.
func dirArrow(asc bool) string {
	if asc {
		return "↑"
	}
	return "↓"
}

// Matched table column widths.
const (
	colHeight  = 8
	colAmount  = 14
	colConf    = 6
	colVerdict = 10
	colTxidMax = 64
)

// render implements panel: the header and h-1 rows from the scroll
// offset, the cursor row highlighted while the panel has the focus.
func (matchedPanel) render(m *Model, w, h int) []string {
	s := m.styles
	n := h - 1
	txW := min(max(w-colHeight-colAmount-colConf-colVerdict-4, 8), colTxidMax)
	row := func(tx, h, amt, conf, verdict string) string {
		return fit(tx, txW) + " " + padLeft(h, colHeight) + " " + padLeft(amt, colAmount) + " " +
			padLeft(conf, colConf) + " " + verdict
	}
	out := []string{m.paint(&s.TableHeader, row("txid", "height", "amount", "conf", "verdict"))}
	total := m.tableLen()
	off := min(m.offset[PanelMatched], max(total-n, 0))
	tip := m.st.blockHeight
	showCursor := m.focus == PanelMatched && m.overlay == overlayNone
	for i := off; i < total && i < off+n; i++ {
		r := m.tableRow(i)
		h, conf := fmt.Sprint(r.height), "0"
		switch r.height {
		case heightMempool:
			h = "mempool"
		case heightReorged:
			h = "reorged"
		}
		if r.height >= 0 && tip >= r.height {
			conf = fmt.Sprint(tip - r.height + 1)
		}
		word, amt, style := "seen", "-", &s.Dim
		switch r.verdict {
		case verdictWallet:
			word, amt, style = "wallet", amount.SignedBTC(r.amount), &s.Wallet
		case verdictFP:
			word, style = "false pos", &s.FalsePositive
		}
		if showCursor && i == m.cursor {
			out = append(out, m.paint(&s.Selected, fit(row(r.txid.String(), h, amt, conf, word), w)))
			continue
		}
		out = append(out, row(r.txid.String(), h, amt, conf, m.paint(style, word)))
	}
	switch {
	case total == 0 && m.query != "":
		out = append(out, m.paint(&s.Dim, "no matched transaction matches /"+m.query+" (esc clears)"))
	case total == 0:
		out = append(out, m.paint(&s.Dim, "no matched transactions yet"))
	}
	return out
}
