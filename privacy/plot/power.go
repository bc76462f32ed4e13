package plot

import (
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Powers of ten on the axes are printed as a paper prints them, 10 with
// a raised exponent (10⁵, 2.5×10⁻⁴), not as 1e5: the tick labels carry
// them as "10^5" and powerText draws the exponent raised and smaller.
// The fonts have no superscript minus or zero, so the exponent is drawn,
// not looked up as a superscript character.

// Exponent geometry, as shares of the base font.
const (
	expScale = 0.7
	expRaise = 0.45
)

// powerLabel turns a label in e notation (1e5, 2.5e-4) into the form
// powerText draws (10^5, 2.5×10^-4); other labels are returned as they
// are.
func powerLabel(s string) string {
	i := strings.IndexByte(s, 'e')
	if i < 0 {
		return s
	}
	m, e := s[:i], s[i+1:]
	if m == "1" {
		return "10^" + e
	}
	if m == "-1" {
		return "-10^" + e
	}
	return m + "×10^" + e
}

// powerLabels rewrites every label of ticks with powerLabel.
func powerLabels(ticks []gplot.Tick) []gplot.Tick {
	for i := range ticks {
		ticks[i].Label = powerLabel(ticks[i].Label)
	}
	return ticks
}

// powerText is a text handler that draws "B^E" as B with E raised and
// smaller; any other text, and text turned at an angle, as text.Plain.
type powerText struct {
	text.Plain
}

// newPowerText returns the handler over the default fonts.
func newPowerText() powerText {
	return powerText{Plain: text.Plain{Fonts: font.DefaultCache}}
}

// split returns the base and exponent of "B^E" (ok false without one).
func split(txt string) (base, exp string, ok bool) {
	i := strings.IndexByte(txt, '^')
	if i < 0 || strings.Contains(txt, "\n") {
		return txt, "", false
	}
	return txt[:i], txt[i+1:], true
}

// expFont is the exponent's font.
func expFont(fnt font.Font) font.Font {
	fnt.Size = vg.Length(expScale) * fnt.Size
	return fnt
}

// Box implements text.Handler.
func (h powerText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	base, exp, ok := split(txt)
	if !ok {
		return h.Plain.Box(txt, fnt)
	}
	bw, bh, bd := h.Plain.Box(base, fnt)
	ew, eh, _ := h.Plain.Box(exp, expFont(fnt))
	return bw + ew, max(bh, vg.Length(expRaise)*bh+eh), bd
}

// Draw implements text.Handler.
func (h powerText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	base, exp, ok := split(txt)
	if !ok || sty.Rotation != 0 {
		h.Plain.Draw(c, strings.Replace(txt, "^", "", 1), sty, pt)
		return
	}
	w, _, _ := h.Box(txt, sty.Font)
	bw, _, _ := h.Plain.Box(base, sty.Font)
	left := pt.X + vg.Length(sty.XAlign)*w
	bs := sty
	bs.XAlign, bs.Handler = text.XLeft, h.Plain
	h.Plain.Draw(c, base, bs, vg.Point{X: left, Y: pt.Y})
	es := bs
	es.Font = expFont(sty.Font)
	// text.Plain puts a one-line text's baseline at y + H*YAlign - A + S
	// (H its height, A its ascent, S its size): place the exponent's
	// baseline expRaise of the base's ascent above the base's.
	baseline := func(st text.Style, txt string) vg.Length {
		return st.Height(txt)*vg.Length(st.YAlign) - h.Plain.Extents(st.Font).Ascent + st.Font.Size
	}
	ascent := h.Plain.Extents(sty.Font).Ascent
	y := pt.Y + baseline(bs, base) + vg.Length(expRaise)*ascent - baseline(es, exp)
	h.Plain.Draw(c, exp, es, vg.Point{X: left + bw, Y: y})
}
