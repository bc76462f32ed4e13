package tui

import (
	"slices"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/chaincfg"
)

// sortMode is the matched table's order.
type sortMode uint8

// The orders s cycles through; S reverses the direction.
const (
	// sortArrival is the order the node reported them (newest first).
	sortArrival sortMode = iota
	// sortHeight orders by block height (mempool above every block,
	// reorged rows below).
	sortHeight
	// sortAmount orders by the wallet's net amount; rows without one
	// (false positives, seen) always come last.
	sortAmount
	numSorts
)

// String names the order.
func (s sortMode) String() string {
	switch s {
	case sortHeight:
		return "height"
	case sortAmount:
		return "amount"
	}
	return "arrival"
}

// tableKey is what the derived table depends on.
type tableKey struct {
	gen    uint64
	hideFP bool
	query  string
	sort   sortMode
	asc    bool
}

// tableView is the matched table in display order when a search or a
// sort is active (list), rebuilt in Update when its key changes; without
// either the table reads the ring directly.
type tableView struct {
	valid bool
	key   tableKey
	list  []*matchRow
}

// tableKeyNow returns the key of the table the model should show.
func (m *Model) tableKeyNow() tableKey {
	k := tableKey{hideFP: m.hideFP, query: m.query, sort: m.sortBy, asc: m.sortAsc}
	if m.derived() {
		k.gen = m.st.rowsGen
	}
	return k
}

// derived reports whether the table needs a list (a search or a sort
// other than arrival).
func (m *Model) derived() bool {
	return m.query != "" || m.sortBy != sortArrival
}

// table returns the current table, rebuilding it if its key changed
// (Update calls it after every change, so View finds it built).
func (m *Model) table() *tableView {
	t := m.tbl
	k := m.tableKeyNow()
	if t.valid && t.key == k {
		return t
	}
	t.valid, t.key = true, k
	t.list = t.list[:0]
	if !m.derived() {
		t.list = nil
		return t
	}
	src := m.matchedView()
	terms := strings.Fields(strings.ToLower(m.query))
	for i := 0; i < src.len(); i++ {
		r := src.last(i)
		if m.rowMatches(r, terms) {
			t.list = append(t.list, r)
		}
	}
	if m.sortBy != sortArrival {
		cmp := rowCompare(m.sortBy)
		slices.SortStableFunc(t.list, cmp)
	}
	if m.sortAsc {
		end := len(t.list)
		if m.sortBy == sortAmount {
			// rows without an amount stay last
			end = 0
			for end < len(t.list) && t.list[end].verdict == verdictWallet {
				end++
			}
		}
		slices.Reverse(t.list[:end])
	}
	return t
}

// rowCompare orders rows descending by mode, newest first on ties (table
// reverses the list for ascending, keeping rows without an amount last).
func rowCompare(mode sortMode) func(a, b *matchRow) int {
	return func(a, b *matchRow) int {
		var x, y int64
		switch mode {
		case sortHeight:
			x, y = heightKey(a.height), heightKey(b.height)
		case sortAmount:
			x, y = amountKey(a), amountKey(b)
		}
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		case a.n > b.n:
			return -1
		case a.n < b.n:
			return 1
		}
		return 0
	}
}

// heightKey sorts mempool rows above every block and reorged rows below.
func heightKey(h int32) int64 {
	switch h {
	case heightMempool:
		return 1 << 40
	case heightReorged:
		return -1
	}
	return int64(h)
}

// amountKey sorts the wallet's rows by amount and every other row below.
func amountKey(r *matchRow) int64 {
	if r.verdict != verdictWallet {
		return -1 << 62
	}
	return r.amount
}

// tableLen returns the number of rows the table shows.
func (m *Model) tableLen() int {
	t := m.table()
	if t.list == nil {
		return m.matchedView().len()
	}
	return len(t.list)
}

// tableRow returns the i-th row the table shows (0 at the top).
func (m *Model) tableRow(i int) *matchRow {
	t := m.table()
	if t.list != nil {
		return t.list[i]
	}
	v := m.matchedView()
	if m.sortAsc {
		return v.at(i)
	}
	return v.last(i)
}

// selected returns the row under the cursor, or nil.
func (m *Model) selected() *matchRow {
	n := m.tableLen()
	if n == 0 {
		return nil
	}
	return m.tableRow(min(max(m.cursor, 0), n-1))
}

// indexOf returns r's index in the table, or -1.
func (m *Model) indexOf(r *matchRow) int {
	n := m.tableLen()
	for i := 0; i < n; i++ {
		if m.tableRow(i) == r {
			return i
		}
	}
	return -1
}

// keepSelection moves the cursor (and the scroll with it) to where sel
// went after the table changed; a cursor on the first row follows the
// newest row instead.
func (m *Model) keepSelection(sel *matchRow, following bool) {
	if !following && sel != nil {
		if i := m.indexOf(sel); i >= 0 {
			d := i - m.cursor
			m.cursor = i
			m.offset[PanelMatched] += d
		}
	}
	m.clampCursor()
}

// clampCursor keeps the cursor inside the table and on screen.
func (m *Model) clampCursor() {
	n := m.tableLen()
	vis := max(m.layout().rows[PanelMatched], 1)
	m.cursor = min(max(m.cursor, 0), max(n-1, 0))
	off := m.offset[PanelMatched]
	if m.cursor < off {
		off = m.cursor
	}
	if m.cursor >= off+vis {
		off = m.cursor - vis + 1
	}
	m.offset[PanelMatched] = min(max(off, 0), max(n-vis, 0))
}

// rowMatches reports whether every search term matches the row (see
// termMatches).
func (m *Model) rowMatches(r *matchRow, terms []string) bool {
	for _, t := range terms {
		if !m.termMatches(r, t) {
			return false
		}
	}
	return true
}

// termMatches reports whether one lower-case term matches the row. A
// keyword (wallet, fp, false, positive, seen, mempool, reorged) matches
// the verdict or the place only; any other term is a substring of the
// txid, an output address, the peer or the height.
func (m *Model) termMatches(r *matchRow, t string) bool {
	switch t {
	case "wallet":
		return r.verdict == verdictWallet
	case "fp", "false", "positive", "false-positive":
		return r.verdict == verdictFP
	case "seen":
		return r.verdict == verdictSeen
	case "mempool":
		return r.height == heightMempool
	case "reorged":
		return r.height == heightReorged
	}
	if r.height >= 0 {
		var buf [12]byte
		if strings.Contains(string(strconv.AppendInt(buf[:0], int64(r.height), 10)), t) {
			return true
		}
	}
	return strings.Contains(r.haystack(m.params), t)
}

// haystack returns the row's search text, built once: the txid, the
// output addresses (for the network's params, when known) and the peer,
// in lower case.
func (r *matchRow) haystack(params *chaincfg.Params) string {
	if r.hay != "" {
		return r.hay
	}
	var b strings.Builder
	b.WriteString(r.txid.String())
	if r.tx != nil && params != nil {
		for i, out := range r.tx.TxOut {
			if i >= maxSearchOutputs {
				break
			}
			if a := outputAddress(out.PkScript, params); a != "" {
				b.WriteByte(' ')
				b.WriteString(strings.ToLower(a))
			}
		}
	}
	if r.peer != "" {
		b.WriteByte(' ')
		b.WriteString(strings.ToLower(r.peer))
	}
	r.hay = b.String()
	return r.hay
}

// maxSearchOutputs caps the outputs a row's search text names.
const maxSearchOutputs = 16
