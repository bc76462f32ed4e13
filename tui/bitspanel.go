package tui

import (
	"fmt"
	"math/bits"
	"strings"
)

// bitsPanel is the latest filter as a picture: its bit array, one
// braille dot per bit when it fits (a heatmap of fill when it does not),
// with the fill, the element count an observer estimates from it (m^),
// and after a reload to the same peer the bits the new filter sets that
// the previous one did not.
type bitsPanel struct{}

// title implements panel.
func (bitsPanel) title(m *Model, w int) string {
	p := m.st.pic
	if !p.ok {
		return "Filter picture"
	}
	return fmt.Sprintf("Filter #%d as sent to %s", p.seq, p.peer)
}

// render implements panel.
func (bitsPanel) render(m *Model, w, h int) []string {
	return m.bitsLines(w, h)
}

// picGutter is the width of the picture's row labels (the row's first
// bit) and the space after them.
const picGutter = 8

// bitsCache keeps the rendered picture: it changes with a filterload or
// a new size only.
type bitsCache struct {
	gen   uint64
	w, h  int
	lines []string
	valid bool
}

// bitsLines returns the picture for a body of w x h cells, rendered once
// per filterload and size (Update renders it when either changes, so
// View finds it ready).
func (m *Model) bitsLines(w, h int) []string {
	c := m.pics
	if c.valid && c.gen == m.st.filterGen && c.w == w && c.h == h {
		return c.lines
	}
	lines := m.renderBits(w, h)
	*c = bitsCache{gen: m.st.filterGen, w: w, h: h, lines: lines, valid: true}
	return lines
}

// renderBits draws the picture.
func (m *Model) renderBits(w, h int) []string {
	s := m.styles
	p := m.st.pic
	if !p.ok {
		msg := "no filter loaded yet"
		if m.st.haveFilter {
			msg = "the node's filterload event carried no filter record to draw"
		}
		return []string{m.paint(&s.Dim, msg)}
	}
	var out []string
	add := func(style bool, text string) {
		for _, l := range wrap(text, w) {
			if style {
				l = m.label(l)
			}
			out = append(out, l)
		}
	}
	f := m.st.filter
	add(false, fmt.Sprintf("filter #%d sent to %s at height %d (%s): %s bytes = %s bits, %d hash functions, tweak %#08x, flags %s",
		p.seq, p.peer, p.height, f.Reason, fmtInt(int64(p.nBytes)), fmtUint(p.nBits), p.k, p.tweak, p.flags))
	est := "every bit is set: an observer cannot estimate the elements"
	if p.est >= 0 {
		est = fmt.Sprintf("an observer estimates m^ = %.0f elements from that alone (the node inserted %d)", p.est, f.Elements)
	}
	add(false, fmt.Sprintf("fill: %s of %s bits set (%s); %s; an element that is not the wallet's matches with fill^k = %s",
		fmtUint(p.bitsSet), fmtUint(p.nBits), fmtPct(p.fill), est, fmtChance(p.rate)))

	diffRows := 0
	room := h - len(out) - 2 // the picture's caption and the blank line
	if p.havePrev {
		room -= 3
		diffRows = room / 2
	}
	rows := room - diffRows
	if rows < 1 {
		return out
	}
	out = append(out, "")
	pic, caption := m.picture(p.bits, w, rows)
	out = append(out, m.label(fit(caption, w)))
	out = append(out, pic...)
	if !p.havePrev {
		return out
	}
	out = append(out, "")
	switch {
	case !p.comparable:
		add(true, fmt.Sprintf("since filter #%d to the same peer: another size, k or tweak, so the same elements set other bits; no bit-by-bit change to show", p.prevSeq))
	case p.added == 0 && p.cleared == 0:
		add(true, fmt.Sprintf("since filter #%d to the same peer: no bit changed (the same elements, or new ones that only hit set bits)", p.prevSeq))
	default:
		add(true, fmt.Sprintf("changed since filter #%d to the same peer: %s bits newly set (drawn below), %s cleared",
			p.prevSeq, fmtUint(p.added), fmtUint(p.cleared)))
		if diffRows >= 1 {
			d, _ := m.picture(p.diff, w, diffRows)
			out = append(out, d...)
		}
	}
	return out
}

// brailleDot maps bit j of a byte (BIP37 sets bit h&7 of byte h>>3) to
// its braille dot: bits 0-3 down the left column, 4-7 down the right.
var brailleDot = [8]rune{0x01, 0x02, 0x04, 0x40, 0x08, 0x10, 0x20, 0x80}

// brailleByte is the braille cell of each byte value.
var brailleByte = func() (t [256]rune) {
	for v := range t {
		r := rune(0x2800)
		for j := 0; j < 8; j++ {
			if v&(1<<j) != 0 {
				r |= brailleDot[j]
			}
		}
		t[v] = r
	}
	return t
}()

// shades are the heatmap's cells by the fraction of bits set: none, up
// to a quarter, a half, three quarters, more.
var shades = [5]rune{' ', '░', '▒', '▓', '█'}

// shade returns the heatmap cell for set of total bits.
func shade(set, total int) rune {
	switch {
	case set == 0 || total == 0:
		return shades[0]
	case set*4 <= total:
		return shades[1]
	case set*2 <= total:
		return shades[2]
	case set*4 <= total*3:
		return shades[3]
	}
	return shades[4]
}

// picture draws a bit array in at most rows lines of w cells: one braille
// cell per byte (a dot per bit) when that fits, else a heatmap with a
// cell per run of bytes. Each line starts with the number of its first
// bit. It returns the lines and their caption.
func (m *Model) picture(arr []byte, w, rows int) ([]string, string) {
	maxRow := max(w-picGutter, 1)
	n := len(arr)
	if n == 0 || rows <= 0 {
		return nil, "(empty filter: it matches everything)"
	}
	// a block about as wide as tall on screen (a cell is twice as tall as
	// wide): a power of two of bytes per row near sqrt(2n), wider if
	// the rows do not fit
	perRow := 8
	for perRow*perRow < 2*n {
		perRow *= 2
	}
	for perRow < maxRow && (n+perRow-1)/perRow > rows {
		perRow *= 2
	}
	perRow = min(perRow, maxRow)
	perCell := 1
	if (n+perRow-1)/perRow > rows {
		perCell = (n + perRow*rows - 1) / (perRow * rows)
	}
	var caption string
	if perCell == 1 {
		caption = "a dot per bit set, a cell per byte; each row starts at the bit on its left"
	} else {
		caption = fmt.Sprintf("a cell per %d bits, by the share set: ░ to ¼ ▒ to ½ ▓ to ¾ █ more", perCell*8)
	}
	cells := (n + perCell - 1) / perCell
	var out []string
	var b strings.Builder
	for start := 0; start < cells; start += perRow {
		b.Reset()
		b.WriteString(padLeft(fmtInt(int64(start*perCell*8)), picGutter-1))
		b.WriteByte(' ')
		for c := start; c < min(start+perRow, cells); c++ {
			lo, hi := c*perCell, min((c+1)*perCell, n)
			if perCell == 1 {
				b.WriteRune(brailleByte[arr[lo]])
				continue
			}
			set := 0
			for _, v := range arr[lo:hi] {
				set += bits.OnesCount8(v)
			}
			b.WriteRune(shade(set, (hi-lo)*8))
		}
		out = append(out, m.paint(&m.styles.Chart, b.String()))
	}
	return out, caption
}
