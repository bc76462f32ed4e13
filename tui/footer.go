package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
)

// glossary explains the figures (the help view shows it under the keys);
// the corrected meter's figures are explained when it reports them.
func glossary(x meterExtra) []string {
	combined := "what is left to peers that compare every filter you sent (they collude, or they are one peer seeing reloads)."
	chart := "The chart: the combined expected false positives after each filter sent, on a log scale: it collapses " +
		"when filters with fresh tweaks or sizes pile up."
	perTx := "fp per tx tested: false positives per transaction the watcher tested (a transaction offers several " +
		"elements, so it is higher than per element)."
	if x.ok {
		combined = "what is left to peers that compare every filter you sent (they collude, or they are one peer " +
			"seeing reloads), under the joint model: filters sharing a tweak probe the same bits, so they are not " +
			"independent; the row 'if filters were independent' is the old product of rates, kept as a reference " +
			"(far too small for them)."
		chart = "The chart: the combined expected false positives after each filter sent, on a log scale (dotted: " +
			"the independent-filters reference). The last reload's added elements: what an observer estimates by " +
			"comparing it with the previous filter of the same tweak."
		perTx = "fp per tx tested: false positives per transaction that is not yours, expected (the meter assumes " +
			"a typical number of elements per transaction) and observed by the watcher, in the same unit. The " +
			"observed rate is a sample, shown with its 95 % interval; the expected one may fall on either side: " +
			"few transactions tested early on, transactions with more or fewer elements than assumed, and, under " +
			"flags all, bits the peer's copy of the filter gains from matched outputs (they push observed up)."
	}
	var bip158 []string
	if x.cf {
		bip158 = []string{"Privacy over BIP158. No filter is sent: every client gets the same compact filters, and " +
			"the peers learn which blocks you fetch whole. Scanned: the blocks whose filter was matched here against " +
			"your scripts; fetched: the blocks asked whole, per peer. A fetched block held a wallet payment or is a " +
			"false positive: its filter matched one of your queries by chance (1 in 784,931 per query and block). " +
			"Expected: that chance summed over the scanned blocks without a payment, beside the 95 % (Garwood) " +
			"interval of the mean from the count seen. The addresses those blocks leave you among (the anonymity " +
			"set) need the chain: privacy analyze --btcd-rpc gives them. If BIP37: the filter this wallet would " +
			"load (built here, never sent) and the meter's figures for it alone: its size, false-positive rates, " +
			"the expected false positives among the candidates, precision and entropy; the paragraphs below " +
			"explain those figures."}
	}
	return append(bip158, []string{
		"Privacy. Expected false positives: addresses that are not yours but match your filter, as many as an " +
			"observer expects (the formulas, no scan): your cover, more is better. Latest filter: that filter " +
			"alone. All combined: " + combined + " Candidate addresses: the universe an observer picks from.",
		"Wallet: your addresses on chain (paid at least once): the N the precision counts; the addresses watched " +
			"ahead are in the filter but on no chain, so no observer can find them. Precision: the share of the " +
			"matches that is yours, expected over the chance matches (1.000: an observer knows your wallet). " +
			"Entropy: bits of doubt left about which matches are yours (0: none), expected likewise. " + chart,
		"On path: an observer between you and your peers (ISP, Wi-Fi). Over v1 (plaintext) it reads every " +
			"filter, as the peers; over v2 (BIP324) it sees sizes and times only: the filterload's size gives a " +
			"range of element counts (padding widens it), and each block's merkleblock length shows whether it " +
			"held matches (blocks matched; yours: those that held your transactions).",
		"Timing attack: what a peer learns from when the client acts (the behaviour attack, as privacy " +
			"analyze runs it): a reload that added elements names the last block or relayed transaction that " +
			"peer sent, a block asked again names its first block with a match. Precision: the share of what it " +
			"named that is yours (the client knows); chance: the most a random pick of as many matched items " +
			"gives in 97.5 % of draws. Above chance (an exact test, Holm-corrected over the attack's scores), your " +
			"timing points at your wallet; \"no verdict\" where too few items were named for the test to tell " +
			"(one suspect, a chance range reaching 1.00).",
		"Filter. #N is its number everywhere: the record number (seq) of its filterload in the transcript " +
			"(DATADIR/spv/transcript.jsonl), as the log, privacy analyze and sync --json give it; the transcript's " +
			"getdata records share the sequence, so the numbers of filters skip. Fill: the share of bits set. " +
			"Est. elements (m^): what an observer infers from the fill alone. " +
			"fp per element: the chance one element that is not yours matches (fill^k). " + perTx,
		"Matched txs. wallet: pays or spends a watched address. false pos: matched the filter by chance. seen: a " +
			"transaction judged before (a block fetched again). enter explains one: what matched, its bit positions " +
			"and the chance of such a match.",
	}...)
}

// footerLines returns the footer: the search prompt while typing one,
// else the help line of the current view.
func (m *Model) footerLines(w int) []string {
	if m.searching {
		rows := "rows"
		if m.tableLen() == 1 {
			rows = "row"
		}
		prompt := "/" + m.query + m.paint(&m.styles.Selected, " ")
		hint := fmt.Sprintf("  %d %s  (txid, address, wallet, fp, height; enter keeps, esc clears)", m.tableLen(), rows)
		return []string{prompt + m.paint(&m.styles.Dim, hint)}
	}
	k := helpLineKey{overlay: m.overlay, w: w}
	if l, ok := m.helpLine[k]; ok {
		return []string{l}
	}
	h := m.help
	h.ShowAll, h.Width = false, 0 // fitted drops keys; help would cut "q quit" off
	l := h.ShortHelpView(m.helpKeys().fitted(w, h.ShortHelpView))
	if len(m.helpLine) >= 64 {
		clear(m.helpLine)
	}
	m.helpLine[k] = l
	return []string{l}
}

// helpLineKey is what the help line depends on: the view and the width
// (the keys never change).
type helpLineKey struct {
	overlay overlay
	w       int
}

// footerHeight returns the footer's height.
func (m *Model) footerHeight() int { return 1 }

// footerView returns the footer's h lines.
func (m *Model) footerView(w, h int) []string {
	lines := m.footerLines(w)
	out := make([]string, h)
	copy(out, lines)
	return out
}

// helpPanel is the help view (?): every key, then what each figure
// means.
type helpPanel struct{}

// title implements panel.
func (helpPanel) title(_ *Model, w int) string {
	return joinFit(w, "", "Help: keys and what the figures mean")
}

// render implements panel.
func (helpPanel) render(m *Model, w, h int) []string {
	lines := m.helpLines(w)
	off := min(m.ovOff, max(len(lines)-h, 0))
	return lines[off:min(off+h, len(lines))]
}

// helpLines returns the help view's lines for width w.
func (m *Model) helpLines(w int) []string {
	out := []string{m.paint(&m.styles.TableHeader, "Keys")}
	out = append(out, m.keyTable(w)...)
	out = append(out, "", m.paint(&m.styles.TableHeader, "What the figures mean"))
	x := m.extra()
	paras := glossary(x)
	if x.ok && x.universeSource != "" {
		paras = append(paras[:len(paras):len(paras)], "The candidate addresses of the privacy figures ("+
			fmtUint(m.st.reading.Candidates)+"): "+x.universeSource+".")
	}
	for i, g := range paras {
		if i > 0 {
			out = append(out, "")
		}
		for _, l := range wrap(g, max(w, 20)) {
			out = append(out, m.paint(&m.styles.Help, l))
		}
	}
	return out
}

// keyTable lays every key out in as many columns as fit w, down then
// across.
func (m *Model) keyTable(w int) []string {
	var cells []string
	keyW, cellW := 0, 0
	var binds []key.Binding
	for _, col := range m.keys.FullHelp() {
		binds = append(binds, col...)
	}
	for _, b := range binds {
		keyW = max(keyW, width(b.Help().Key))
	}
	for _, b := range binds {
		c := m.paint(&m.styles.Help, fit(b.Help().Key, keyW)) + " " + b.Help().Desc
		cellW = max(cellW, width(c))
		cells = append(cells, c)
	}
	cellW += 3
	cols := max(w/cellW, 1)
	rows := (len(cells) + cols - 1) / cols
	out := make([]string, rows)
	for i, c := range cells {
		r := i % rows
		if i/rows < cols-1 {
			c = fit(c, cellW)
		}
		out[r] += c
	}
	return out
}
