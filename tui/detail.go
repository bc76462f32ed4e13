package tui

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/wire"
	"github.com/charmbracelet/lipgloss"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/internal/amount"
)

// maxDetailIO caps the inputs and the outputs the detail view lists.
const maxDetailIO = 200

// detailLabelW is the width of the detail view's field names.
const detailLabelW = 12

// detailPanel is one matched transaction explained: its txid, height and
// confirmations, size, the verdict and why (the watched address or
// outpoint that makes it the wallet's, or for a false positive the
// element that matched, its bit positions in the filter the peer held,
// and the chance of such a match), and every input and output.
type detailPanel struct{}

// title implements panel.
func (detailPanel) title(m *Model, w int) string {
	r := m.detail
	if r == nil {
		return "Transaction"
	}
	t := "Transaction " + shortHash(r.txid) + "  " + verdictTitle(r.verdict)
	n, page := len(m.detailLines(m.detailWidth())), m.detailPage()+1
	if n > page {
		t += fmt.Sprintf("  lines %d-%d of %d", m.ovOff+1, min(m.ovOff+page, n), n)
	}
	return joinFit(w, "", t)
}

// verdictTitle is the verdict in the detail's title.
func verdictTitle(v verdict) string {
	switch v {
	case verdictWallet:
		return "the wallet's"
	case verdictFP:
		return "false positive"
	}
	return "seen before"
}

// whyTitle heads the verdict's explanation.
func whyTitle(v verdict) string {
	switch v {
	case verdictWallet:
		return "Why it is the wallet's"
	case verdictFP:
		return "Why it is a false positive"
	}
	return "Why it came again"
}

// render implements panel: h lines from the detail's scroll offset.
func (detailPanel) render(m *Model, w, h int) []string {
	lines := m.detailLines(w)
	off := min(m.ovOff, max(len(lines)-h, 0))
	return lines[off:min(off+h, len(lines))]
}

// detailWidth is the body width of the detail overlay at the current size.
func (m *Model) detailWidth() int {
	if m.width >= GridWidth {
		return m.width - 2
	}
	return m.width
}

// detailKey is what a rendered detail depends on.
type detailKey struct {
	row       *matchRow
	rev       uint64
	rowsGen   uint64
	walletGen uint64
	tip       int32
	w         int
}

// detailCache keeps the open detail's lines.
type detailCache struct {
	key   detailKey
	valid bool
	lines []string
}

// detailLines returns the open detail's lines for width w, built once per
// change of the row, the other rows (input values), the wallet or the tip
// (Update builds them, View finds them).
func (m *Model) detailLines(w int) []string {
	if m.detail == nil {
		return nil
	}
	k := detailKey{row: m.detail, rev: m.detail.rev, rowsGen: m.st.rowsGen, walletGen: m.walletGen, tip: m.st.blockHeight, w: w}
	c := m.details
	if c.valid && c.key == k {
		return c.lines
	}
	c.key, c.valid = k, true
	c.lines = m.buildDetail(m.detail, w)
	return c.lines
}

// detailBuilder accumulates the detail's lines.
type detailBuilder struct {
	m     *Model
	w     int
	lines []string
}

// kv adds a field: its name in the label column, the value wrapped to the
// rest of the width.
func (b *detailBuilder) kv(name string, value string, style *lipgloss.Style) {
	vw := max(b.w-detailLabelW, 10)
	for i, part := range wrap(value, vw) {
		lead := strings.Repeat(" ", detailLabelW)
		if i == 0 {
			lead = b.m.label(fit(name, detailLabelW))
		}
		if style != nil {
			part = b.m.paint(style, part)
		}
		b.lines = append(b.lines, lead+part)
	}
}

// section adds a blank line and a heading.
func (b *detailBuilder) section(title string) {
	b.lines = append(b.lines, "", b.m.paint(&b.m.styles.TableHeader, title))
}

// text adds wrapped text indented by indent cells.
func (b *detailBuilder) text(indent int, s string, style *lipgloss.Style) {
	for _, part := range wrap(s, max(b.w-indent, 10)) {
		if style != nil {
			part = b.m.paint(style, part)
		}
		b.lines = append(b.lines, strings.Repeat(" ", indent)+part)
	}
}

// bullet adds a wrapped bullet point with a hanging indent.
func (b *detailBuilder) bullet(s string, style *lipgloss.Style) {
	for i, part := range wrap(s, max(b.w-4, 10)) {
		lead := "    "
		if i == 0 {
			lead = "  • "
		}
		if style != nil {
			part = b.m.paint(style, part)
		}
		b.lines = append(b.lines, lead+part)
	}
}

// buildDetail renders row r's detail for a body w cells wide.
func (m *Model) buildDetail(r *matchRow, w int) []string {
	b := &detailBuilder{m: m, w: w}
	s := m.styles
	b.kv("txid", r.txid.String(), nil)
	vstyle, vtext := &s.Dim, "seen before: the watcher had already judged it (a block fetched again)"
	switch r.verdict {
	case verdictWallet:
		vstyle, vtext = &s.Wallet, "the wallet's"
	case verdictFP:
		vstyle, vtext = &s.FalsePositive, "false positive: not the wallet's; the peer sent it because one of its elements matched the filter"
	}
	b.kv("verdict", vtext, vstyle)
	b.kv("height", m.heightText(r.height), nil)
	switch r.verdict {
	case verdictWallet:
		b.kv("amount", amount.SignedBTC(r.amount)+" BTC net to the wallet", nil)
	case verdictFP:
		b.kv("amount", "none: it neither pays nor spends the wallet", nil)
	}
	tx := r.tx
	if tx != nil {
		b.kv("size", fmt.Sprintf("%s bytes (vsize %s) · version %d · locktime %d · %d in · %d out",
			fmtInt(int64(tx.SerializeSize())), fmtInt(int64(vsize(tx))), tx.Version, tx.LockTime, len(tx.TxIn), len(tx.TxOut)), nil)
	}
	if r.peer != "" {
		b.kv("served by", r.peer+" through "+m.filterName(r.seq), nil)
	}

	b.section(whyTitle(r.verdict))
	m.explainVerdict(b, r)
	b.section("What matched the filter")
	m.explainMatch(b, r)

	if tx == nil {
		b.section("Inputs and outputs")
		b.text(2, "the node did not pass the transaction itself (a txid the peer announced without sending the tx)", &s.Dim)
		return b.lines
	}
	b.section(fmt.Sprintf("Inputs (%d)", len(tx.TxIn)))
	for i, in := range tx.TxIn {
		if i == maxDetailIO {
			b.text(2, fmt.Sprintf("… and %d more", len(tx.TxIn)-i), &s.Dim)
			break
		}
		m.inputLines(b, r, i, in)
	}
	b.section(fmt.Sprintf("Outputs (%d)", len(tx.TxOut)))
	for i, out := range tx.TxOut {
		if i == maxDetailIO {
			b.text(2, fmt.Sprintf("… and %d more", len(tx.TxOut)-i), &s.Dim)
			break
		}
		m.outputLines(b, r, i, out)
	}
	return b.lines
}

// heightText says where a row's transaction is.
func (m *Model) heightText(h int32) string {
	switch h {
	case heightMempool:
		return "in the mempool (unconfirmed)"
	case heightReorged:
		return "in a block a reorg took off the chain (unconfirmed until mined again)"
	}
	tip := m.st.blockHeight
	if tip >= h {
		c := tip - h + 1
		unit := "confirmations"
		if c == 1 {
			unit = "confirmation"
		}
		return fmt.Sprintf("%d · %s %s", h, fmtInt(int64(c)), unit)
	}
	return fmt.Sprint(h)
}

// filterName names the filter of transcript record seq with its size
// when the dashboard saw it loaded.
func (m *Model) filterName(seq uint64) string {
	meta, ok := m.st.filterMeta[seq]
	if !ok {
		return fmt.Sprintf("filter #%d", seq)
	}
	return fmt.Sprintf("filter #%d (%s bits, k %d, sent at height %d, %s)", seq, fmtUint(meta.nBits), meta.k, meta.height, meta.reason)
}

// prevOut returns the output an outpoint spends when the dashboard knows
// it: from a matched transaction it holds, or the wallet's unspent
// outputs.
func (m *Model) prevOut(op wire.OutPoint) (*wire.TxOut, bool) {
	if r, ok := m.st.byTxid[op.Hash]; ok && r.tx != nil && int(op.Index) < len(r.tx.TxOut) {
		return r.tx.TxOut[op.Index], true
	}
	if u, ok := m.wallet.unspent[op]; ok {
		return &wire.TxOut{Value: int64(u.Amount)}, true
	}
	return nil, false
}

// walletAddr returns the watched address an output script pays and its
// derivation path.
func (m *Model) walletAddr(script []byte) (addr, path string, ok bool) {
	a := outputAddress(script, m.params)
	if a == "" {
		return "", "", false
	}
	path, ok = m.wallet.watched[a]
	return a, path, ok
}

// spendsWallet reports whether an outpoint is one of the wallet's: an
// output to a watched address among the transactions the dashboard holds,
// or a wallet UTXO.
func (m *Model) spendsWallet(op wire.OutPoint) (addr string, ok bool) {
	if u, ok := m.wallet.unspent[op]; ok {
		return u.Address, true
	}
	if out, ok := m.prevOut(op); ok && out.PkScript != nil {
		if a, _, ok := m.walletAddr(out.PkScript); ok {
			return a, true
		}
	}
	return "", false
}

// withPath appends a derivation path in parentheses when there is one.
func withPath(addr, path string) string {
	if path == "" {
		return addr
	}
	return addr + " (" + path + ")"
}

// explainVerdict says which watched address or outpoint makes the
// transaction the wallet's, or that none does.
func (m *Model) explainVerdict(b *detailBuilder, r *matchRow) {
	s := m.styles
	tx := r.tx
	var reasons []string
	if tx != nil && m.haveWallet {
		for i, out := range tx.TxOut {
			if a, path, ok := m.walletAddr(out.PkScript); ok {
				reasons = append(reasons, fmt.Sprintf("output #%d pays your address %s: %s BTC", i, withPath(a, path), amount.BTC(out.Value)))
			}
		}
		for i, in := range tx.TxIn {
			if a, ok := m.spendsWallet(in.PreviousOutPoint); ok {
				what := "your output " + in.PreviousOutPoint.String()
				if a != "" {
					what += " (" + a + ")"
				}
				reasons = append(reasons, fmt.Sprintf("input #%d spends %s", i, what))
			}
		}
	}
	switch {
	case r.verdict == verdictWallet && len(reasons) > 0:
		for _, x := range reasons {
			b.bullet(x, &s.Wallet)
		}
	case r.verdict == verdictWallet:
		// the addresses did not show it (a spend of an output the
		// dashboard never held): the matching element is the wallet's
		if w := r.why; w != nil {
			el := hex.EncodeToString(w.Element)
			if a, ok := m.wallet.elements[el]; ok {
				b.bullet("the element that matched is the wallet's: the filter element of "+a, &s.Wallet)
			} else {
				b.bullet("the watcher found a watched script or outpoint in it: "+matchPlace(w)+" (below)", &s.Wallet)
			}
		} else {
			b.bullet("the watcher found a watched script or outpoint in it (the node did not say which)", &s.Wallet)
		}
	case r.verdict == verdictFP:
		if m.haveWallet {
			b.bullet("no output pays a watched address and no input spends a wallet output: "+
				"it matched by chance, because every bit its element probes happened to be set", &s.FalsePositive)
		} else {
			b.bullet("the watcher found no watched script or outpoint in it: it matched by chance", &s.FalsePositive)
		}
	default:
		b.bullet("the watcher had already judged it when the block came again; see its first verdict above", &s.Dim)
	}
}

// matchPlace says where in the transaction an element matched.
func matchPlace(w *bip37.Match) string {
	switch w.Kind {
	case bip37.MatchTxid:
		return "the transaction id itself"
	case bip37.MatchOutput:
		return fmt.Sprintf("a data push of output #%d's script (%d bytes)", w.Index, len(w.Element))
	case bip37.MatchOutPoint:
		if op, ok := elementOutPoint(w.Element); ok {
			return fmt.Sprintf("the outpoint %s that input #%d spends", op, w.Index)
		}
		return fmt.Sprintf("the outpoint input #%d spends", w.Index)
	case bip37.MatchInputScript:
		return fmt.Sprintf("a data push of input #%d's scriptSig (%d bytes)", w.Index, len(w.Element))
	case bip37.MatchAll:
		return "everything: the filter is empty, which matches every transaction"
	}
	return string(w.Kind)
}

// explainMatch says what element matched which filter, its bit positions
// and how likely such a match is for an element that is not the
// wallet's.
func (m *Model) explainMatch(b *detailBuilder, r *matchRow) {
	s := m.styles
	w := r.why
	if w == nil {
		b.text(2, "the node did not say what matched (it explains the transactions of blocks it filtered itself; "+
			"this one came before the dashboard or from a block fetched again)", &s.Dim)
		return
	}
	b.kv("  element", matchPlace(w), nil)
	if w.Kind == bip37.MatchOutput && r.tx != nil && w.Index >= 0 && w.Index < len(r.tx.TxOut) {
		script := r.tx.TxOut[w.Index].PkScript
		desc := scriptType(script)
		if a := outputAddress(script, m.params); a != "" {
			desc += " paying " + a
		}
		b.kv("  script", desc, nil)
	}
	if len(w.Element) > 0 {
		b.kv("  bytes", hex.EncodeToString(w.Element), nil)
	}
	k := len(w.Bits)
	if k == 0 {
		return
	}
	pos := make([]string, k)
	for i, p := range w.Bits {
		pos[i] = strconv.FormatUint(uint64(p), 10)
	}
	filter := fmt.Sprintf("filter #%d", r.seq)
	if meta, ok := m.st.filterMeta[r.seq]; ok {
		filter += " (" + fmtUint(meta.nBits) + " bits)"
	}
	b.kv("  bits", fmt.Sprintf("its %d hash functions probe bits %s of %s, which %s held: all set",
		k, strings.Join(pos, ", "), filter, orUnknown(r.peer, "the peer")), nil)
	f := r.fpRate
	if f <= 0 {
		return
	}
	fill := math.Pow(f, 1/float64(k))
	b.kv("  chance", fmt.Sprintf("%s of that filter's bits were set, so an element that is not the wallet's "+
		"finds its %d bits set with probability %.3f^%d = %s", fmtPct(fill), k, fill, k, fmtChance(f)), nil)
	if r.tx != nil {
		n := elementsOffered(r.tx)
		p := fmtChance(chanceAny(f, n))
		text := fmt.Sprintf("this transaction offers %d elements (txid, output pushes, outpoints, scriptSig pushes): "+
			"one matches by chance with probability %s", n, p)
		if r.verdict == verdictWallet {
			text = fmt.Sprintf("a transaction like this one (%d elements: txid, output pushes, outpoints, scriptSig pushes) "+
				"that is not the wallet's matches with probability %s: that is the cover it gets", n, p)
		}
		b.kv("", text, nil)
	}
}

// fmtChance formats a probability for a reader: a percentage and, below
// one half, "about 1 in n".
func fmtChance(p float64) string {
	var s string
	switch {
	case p >= 0.1:
		s = fmt.Sprintf("%.0f%%", p*100)
	case p >= 0.001:
		s = fmt.Sprintf("%.1f%%", p*100)
	default:
		s = fmtRate(p)
	}
	if p > 0 && p < 0.5 {
		s += " (about 1 in " + fmtInt(int64(math.Round(1/p))) + ")"
	}
	return s
}

// orUnknown returns s, or alt when s is empty.
func orUnknown(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// inputLines adds one input: the outpoint it spends, its value when
// known, whose it is, and whether it matched.
func (m *Model) inputLines(b *detailBuilder, r *matchRow, i int, in *wire.TxIn) {
	s := m.styles
	head := fmt.Sprintf("  #%-3d", i)
	matched := ""
	if w := r.why; w != nil && w.Index == i && (w.Kind == bip37.MatchOutPoint || w.Kind == bip37.MatchInputScript) {
		matched = m.paint(&s.FalsePositive, "← matched the filter")
	}
	if isCoinbaseIn(in) {
		m.ioLines(b, head+" coinbase (new coins)", []string{matched})
		return
	}
	var notes []string
	value := "value unknown"
	if out, ok := m.prevOut(in.PreviousOutPoint); ok {
		value = amount.BTC(out.Value)
	}
	notes = append(notes, value)
	if a, ok := m.spendsWallet(in.PreviousOutPoint); ok {
		what := "your output"
		if a != "" {
			what += " " + a
		}
		notes = append(notes, m.paint(&s.Wallet, what))
	}
	if matched != "" {
		notes = append(notes, matched)
	}
	m.ioLines(b, head+" "+in.PreviousOutPoint.String(), notes)
}

// outputLines adds one output: script type, address, value, whose it is
// and whether it matched.
func (m *Model) outputLines(b *detailBuilder, r *matchRow, i int, out *wire.TxOut) {
	s := m.styles
	head := fmt.Sprintf("  #%-3d %-9s", i, scriptType(out.PkScript))
	addr := outputAddress(out.PkScript, m.params)
	if addr == "" {
		addr = "(no address)"
	}
	notes := []string{amount.BTC(out.Value)}
	if a, path, ok := m.walletAddr(out.PkScript); ok && a != "" {
		notes = append(notes, m.paint(&s.Wallet, "yours"+strings.TrimSuffix(" "+path, " ")))
	}
	if w := r.why; w != nil && w.Index == i && w.Kind == bip37.MatchOutput {
		notes = append(notes, m.paint(&s.FalsePositive, "← matched the filter"))
	}
	m.ioLines(b, head+" "+addr, notes)
}

// ioLines adds an input or output on one line when it fits, else its
// notes on a second line.
func (m *Model) ioLines(b *detailBuilder, head string, notes []string) {
	tail := strings.TrimSpace(strings.Join(notes, "  "))
	if tail == "" {
		b.lines = append(b.lines, head)
		return
	}
	if width(head)+2+width(tail) <= b.w {
		b.lines = append(b.lines, head+"  "+tail)
		return
	}
	b.lines = append(b.lines, head)
	indent := strings.Repeat(" ", 7)
	if width(tail)+7 <= b.w {
		b.lines = append(b.lines, indent+tail)
		return
	}
	for _, n := range notes {
		b.lines = append(b.lines, indent+n)
	}
}

// wrap breaks plain text into lines of at most w cells at spaces (a word
// longer than w, a hex string, is cut into w-cell pieces).
func wrap(s string, w int) []string {
	if w <= 0 || width(s) <= w {
		return []string{s}
	}
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		for width(word) > w {
			if line != "" {
				out = append(out, line)
				line = ""
			}
			cut := cutCells(word, w)
			out = append(out, word[:cut])
			word = word[cut:]
		}
		switch {
		case line == "":
			line = word
		case width(line)+1+width(word) <= w:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// cutCells returns the byte length of the longest prefix of s at most w
// cells wide (s holds no escape sequences).
func cutCells(s string, w int) int {
	n := 0
	for i, r := range s {
		if n == w {
			return i
		}
		_ = r
		n++
	}
	return len(s)
}
