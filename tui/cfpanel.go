package tui

import (
	"fmt"
	"sort"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// cfLine is one line of the BIP158 privacy figures with its rank: when
// the panel has fewer lines than the figures, the lowest ranks stay (in
// their order on screen).
type cfLine struct {
	rank int
	text string
}

// cfLines is the privacy panel over BIP158, from the reading's CF (what
// the session computed; nothing is derived here): which blocks the
// peers learn (fetched whole of those scanned), how many held a wallet
// payment and how many were false positives beside BIP158's expectation
// with its interval, the blocks each peer was asked, where the anonymity
// set comes from (it needs the chain), and what BIP37 would show for the
// same wallet (the meter's reading of the filter it would load).
func (m *Model) cfLines(w, h int) []string {
	cf := m.st.reading.CF
	if h <= 2 {
		return m.cfShort(w, h, cf)
	}
	k := m.label
	learn := joinFit(w, "", k("peers learn which blocks: ")+fmtInt(int64(cf.Fetched))+k(" of ")+fmtInt(int64(cf.Scanned))+
		k(" scanned fetched whole")+cfFrom(k, cf),
		k("peers learn ")+fmtInt(int64(cf.Fetched))+k(" of ")+fmtInt(int64(cf.Scanned))+k(" scanned blocks")+cfFrom(k, cf),
		k("peers learn ")+fmtInt(int64(cf.Fetched))+k(" of ")+fmtInt(int64(cf.Scanned))+k(" scanned blocks"))
	fpWord := k(" false positives")
	if cf.FalsePositiveBlocks == 1 {
		fpWord = k(" false positive")
	}
	split := joinFit(w, k(", "), k("delivered: ")+fmtInt(int64(cf.WalletBlocks))+k(" held a wallet payment"),
		fmtInt(int64(cf.FalsePositiveBlocks))+fpWord)
	fp, exp := fmtInt(int64(cf.FalsePositiveBlocks)), formatCount(cf.ExpectedFPBlocks)
	ci := k(" (95 % ") + fmt.Sprintf("[%s, %s]", formatCount(cf.FPBlocksCI.Lo), formatCount(cf.FPBlocksCI.Hi)) + k(")")
	expected := pickFit(w, []string{
		k("false-positive blocks ") + fp + k(", expected ") + exp + k(" at BIP158's rate") + ci + k(" · ") + fmtInt(int64(cf.Queries)) + k(" queries"),
		k("false-positive blocks ") + fp + k(", expected ") + exp + k(" at BIP158's rate") + ci,
		k("false-positive blocks ") + fp + k(", expected ") + exp + ci,
		k("fp blocks ") + fp + k(", expected ") + exp + ci,
	})
	lines := []cfLine{
		{1, learn},
		{4, split},
		{5, expected},
	}
	if pp := m.cfPerPeer(w, cf.PerPeer); pp != "" {
		lines = append(lines, cfLine{7, pp})
	}
	lines = append(lines, cfLine{3, pickFit(w, []string{k("anonymity set: needs the chain (privacy analyze --btcd-rpc)"),
		k("anonymity set: privacy analyze --btcd-rpc")})})
	if a := cf.BIP37; a != nil {
		p, e := cfAltFigures(a)
		b := fmtInt(int64(a.Bytes)) + k(" B")
		pe := k("precision ") + p + k(", entropy ") + e + k(" bits")
		lines = append(lines,
			cfLine{2, pickFit(w, []string{k("if BIP37 (built, never sent): ") + b + k(" filter, ") + pe,
				k("if BIP37: ") + b + k(" filter, ") + pe, k("if BIP37: ") + b + k(", ") + pe})},
			cfLine{5, joinFit(w, k(" · "), k("  expected fp ")+cfAltFP(k, a),
				fmt.Sprint(a.HashFuncs)+k(" hash funcs, ")+fmtInt(int64(a.Elements))+k(" elements"))},
			cfLine{6, joinFit(w, k(", "), k("  fp ")+fmtRate(a.FPRate)+k(" per element"), fmtRate(a.TxFPRate)+k(" per tx"))})
	} else {
		lines = append(lines, cfLine{2, k("if BIP37: the filter could not be built (see the log)")})
	}
	return pickCFLines(lines, h)
}

// pickCFLines keeps the h lines of lowest rank, in their order.
func pickCFLines(lines []cfLine, h int) []string {
	idx := make([]int, len(lines))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return lines[idx[a]].rank < lines[idx[b]].rank })
	if len(idx) > h {
		idx = idx[:h]
	}
	sort.Ints(idx)
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		out = append(out, lines[i].text)
	}
	return out
}

// cfShort is the BIP158 figures in two lines (one when h is 1): the
// blocks the peers learn with the false positives beside their
// expectation, then BIP37's price for the same wallet and where the
// anonymity set comes from.
func (m *Model) cfShort(w, h int, cf *privacy.CFReading) []string {
	k := m.label
	r, s := fmtInt(int64(cf.Fetched)), fmtInt(int64(cf.Scanned))
	fp, exp := fmtInt(int64(cf.FalsePositiveBlocks)), formatCount(cf.ExpectedFPBlocks)
	ci := fmt.Sprintf("[%s, %s]", formatCount(cf.FPBlocksCI.Lo), formatCount(cf.FPBlocksCI.Hi))
	l1 := []string{
		k("BIP158 peers learn which blocks: ") + r + k(" of ") + s + k(" scanned · ") + fp + k(" fp, expected ") + exp + k(" (95 % ") + ci + k(")"),
		k("peers learn ") + r + k(" of ") + s + k(" scanned blocks · ") + fp + k(" fp, exp. ") + exp + k(" (95 % ") + ci + k(")"),
		k("peers learn ") + r + k(" of ") + s + k(" blocks · ") + fp + k(" fp, exp. ") + exp + k(" (95 % ") + ci + k(")"),
		k("peers learn ") + r + k(" of ") + s + k(" blocks · ") + fp + k(" fp, exp. ") + exp,
		k("peers learn ") + r + k(" of ") + s + k(" blocks"),
	}
	if h < 2 {
		return []string{pickFit(w, l1)}
	}
	set := k("set: privacy analyze --btcd-rpc")
	var l2 []string
	if a := cf.BIP37; a != nil {
		p, e := cfAltFigures(a)
		l2 = []string{
			k("if BIP37: filter ") + fmtInt(int64(a.Bytes)) + k(" B, precision ") + p + k(", entropy ") + e + k(" bits · anonymity ") + set,
			k("if BIP37: ") + fmtInt(int64(a.Bytes)) + k(" B, precision ") + p + k(", entropy ") + e + k(" bits · ") + set,
			k("if BIP37: ") + fmtInt(int64(a.Bytes)) + k(" B, prec. ") + p + k(", ") + e + k(" bits · ") + set,
			k("if BIP37: ") + fmtInt(int64(a.Bytes)) + k(" B, prec. ") + p + k(" · ") + set,
			k("anonymity ") + set,
		}
	} else {
		l2 = []string{k("if BIP37: no filter built · anonymity ") + set, k("anonymity ") + set}
	}
	return []string{pickFit(w, l1), pickFit(w, l2)}
}

// pickFit returns the first of vs that fits w cells, else the last cut
// to w.
func pickFit(w int, vs []string) string {
	for _, v := range vs {
		if width(v) <= w {
			return v
		}
	}
	return fit(vs[len(vs)-1], w)
}

// cfFrom says where the scanned filters start (the birthday the peers
// see), or nothing before the first filter asked.
func cfFrom(k func(string) string, cf *privacy.CFReading) string {
	if cf.FiltersFrom < 0 {
		return ""
	}
	return k(" (from height ") + fmt.Sprint(cf.FiltersFrom) + k(")")
}

// cfPerPeer is the blocks each peer was asked, as many peers as fit w,
// with "+N more" for the others; empty before the first block asked.
func (m *Model) cfPerPeer(w int, pp []privacy.PeerBlocks) string {
	k := m.label
	if len(pp) == 0 {
		return ""
	}
	out := k("per peer: ")
	for i, p := range pp {
		part := p.Peer + " " + fmtInt(int64(p.Blocks))
		if i > 0 {
			part = k(" · ") + part
		}
		more := ""
		if rest := len(pp) - i - 1; rest > 0 {
			more = k(fmt.Sprintf(" +%d more", rest))
		}
		if width(out)+width(part)+width(more) > w {
			return fit(out+k(fmt.Sprintf("+%d more", len(pp)-i)), w)
		}
		out += part
	}
	return out
}

// cfAltFigures formats the BIP37 alternative's precision and entropy,
// "--" when the candidates are not known (the figures then say nothing).
func cfAltFigures(a *privacy.FilterAlternative) (precision, entropy string) {
	if a.Candidates == 0 {
		return "--", "--"
	}
	return fmt.Sprintf("%.3f", a.Precision), fmt.Sprintf("%.1f", a.Entropy)
}

// cfAltFP is the alternative's expected false positives among its
// candidates, or that the candidates are not known.
func cfAltFP(k func(string) string, a *privacy.FilterAlternative) string {
	if a.Candidates == 0 {
		return k("-- (candidate count not known)")
	}
	return formatCount(a.ExpectedFP) + k(" of ") + fmtUint(a.Candidates) + k(" candidates")
}
