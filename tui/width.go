package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// narrow reports whether r is one cell wide in every terminal the
// dashboard draws on: the symbols it uses itself (box drawing, blocks,
// braille, arrows, a few math signs). Anything else goes to
// ansi.StringWidth.
func narrow(r rune) bool {
	switch {
	case r >= 0x20 && r < 0x7f:
		return true
	case r >= 0x2500 && r <= 0x259f: // box drawing, block elements
		return true
	case r >= 0x2800 && r <= 0x28ff: // braille patterns
		return true
	case r == '…' || r == '▶' || r == '∩' || r == '↑' || r == '↓' || r == '•':
		return true
	}
	return false
}

// width returns the cells s takes, skipping SGR/CSI escape sequences; it
// avoids grapheme segmentation for the strings the dashboard draws and
// falls back to ansi.StringWidth for anything else.
func width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			if i+1 >= len(s) || s[i+1] != '[' {
				return ansi.StringWidth(s)
			}
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
			continue
		}
		if c < 0x80 {
			if c < 0x20 || c == 0x7f {
				return ansi.StringWidth(s)
			}
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !narrow(r) {
			return ansi.StringWidth(s)
		}
		n++
		i += size
	}
	return n
}

// plainASCII reports whether s is printable ASCII without escapes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// fit truncates (with "…") or pads s to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		if plainASCII(s) {
			s = s[:w-1] + "…"
		} else {
			s = ansi.Truncate(s, w, "…")
		}
		sw = width(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// sanitize replaces control characters (escape sequences included) with
// spaces: a drawn string must not move the cursor or restyle the screen.
func sanitize(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

// isControl reports C0, DEL and C1 control characters.
func isControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0)
}

// maxLogLen caps a log line; the pane truncates to its width anyway.
const maxLogLen = 1024

// cleanLog sanitizes and caps a log line.
func cleanLog(s string) string {
	if len(s) > maxLogLen {
		s = s[:maxLogLen]
	}
	return sanitize(strings.ToValidUTF8(s, "\uFFFD"))
}
