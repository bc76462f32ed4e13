// Package peertext makes text that came from outside the program (a peer's
// reject reason or user agent, a line of a file) safe to print: on a
// terminal, in an error line or in the log. Clean is the one function that
// does it; every such string passes it before it is shown.
package peertext

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FieldMax caps one peer or file string in a log line or on the
// dashboard: a reject reason (Bitcoin Core caps its own at 111 bytes,
// MAX_REJECT_MESSAGE_LENGTH), a user agent (256 bytes, wire.MaxUserAgentLen),
// an error's text.
const FieldMax = 256

// LineMax caps a whole error line on the terminal: an error wraps a few
// fields, each already capped at FieldMax where it came from a peer.
const LineMax = 1024

// suffixMax bounds what Clean writes past limit: the last escape (at most
// 10 bytes) and the truncation mark ("…(+N bytes)", at most 23).
const suffixMax = 33

// Clean returns s printable on one line and at most about limit bytes: a
// control character (C0, DEL, C1: CR, LF, ESC and so every ANSI escape
// and OSC sequence, including OSC 52 clipboard writes), a Unicode format
// or other unprintable character (bidirectional overrides) and each byte
// of invalid UTF-8 are written as Go escapes (\r, \x1b, \u202e, \xff);
// past limit bytes of output the rest is cut and counted ("…(+N bytes)").
// It reads at most limit bytes of s, so a 32 MiB string costs no more
// than a short one. Clean of a cleaned string returns it unchanged.
func Clean(s string, limit int) string {
	if limit <= 0 {
		limit = FieldMax
	}
	if len(s) <= limit+suffixMax && printable(s) {
		return s
	}
	var b strings.Builder
	b.Grow(min(len(s), limit) + suffixMax)
	i := 0
	for i < len(s) && b.Len() < limit {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case r == '\\' || isPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRuneToASCII(r) // '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	if i < len(s) {
		b.WriteString("…(+")
		b.WriteString(strconv.Itoa(len(s) - i))
		b.WriteString(" bytes)")
	}
	return b.String()
}

// printable reports whether every rune of s is valid and printable, so
// Clean leaves it as it is.
func printable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || !isPrint(r) {
			return false
		}
		i += size
	}
	return true
}

// isPrint reports whether r is shown as itself: a letter, mark, number,
// punctuation, symbol or the ASCII space (unicode.IsPrint).
func isPrint(r rune) bool { return unicode.IsPrint(r) }

// CleanAttr returns a with every string it carries passed through Clean
// (limit bytes each): string values, errors' and other values' text, and
// the members of groups. It fits slog.HandlerOptions.ReplaceAttr, so that
// no log line carries a raw peer or file string.
func CleanAttr(a slog.Attr, limit int) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Clean(v.String(), limit))
	case slog.KindAny:
		var s string
		if err, ok := v.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprintf("%+v", v.Any())
		}
		return slog.String(a.Key, Clean(s, limit))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, m := range g {
			out[i] = CleanAttr(m, limit)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
