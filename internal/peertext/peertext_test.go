package peertext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestCleanEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain reason", "plain reason"},
		{"a\rb", `a\rb`},
		{"line\nbreak", `line\nbreak`},
		{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
		{"\x1b]52;c;aGk=\x07", `\x1b]52;c;aGk=\a`},
		{"\x9b31m", `\x9b31m`},       // one invalid UTF-8 byte
		{"\u009b31m", `\u009b31m`},   // C1 CSI as a rune
		{"ab\u202ecd", `ab\u202ecd`}, // bidi override
		{"tab\there", `tab\there`},
		{"\x7f", `\x7f`},
		{"\xff\xfe", `\xff\xfe`},
		{"café ₿", "café ₿"},
		{`back\slash`, `back\slash`},
	} {
		require.Equal(t, tc.want, Clean(tc.in, FieldMax), "%q", tc.in)
	}
}

func TestCleanCapsAndIsIdempotent(t *testing.T) {
	big := strings.Repeat("\x00", 32<<20)
	out := Clean(big, FieldMax)
	require.LessOrEqual(t, len(out), FieldMax+suffixMax)
	require.True(t, strings.HasSuffix(out, " bytes)"), out)
	require.Contains(t, out, "…(+")
	for _, s := range []string{big, strings.Repeat("é", 1000), strings.Repeat("\U0001F600\x1b", 300), "short\r", strings.Repeat("a", FieldMax+1000)} {
		c := Clean(s, FieldMax)
		require.True(t, utf8.ValidString(c))
		require.LessOrEqual(t, len(c), FieldMax+suffixMax)
		require.Equal(t, c, Clean(c, FieldMax), "idempotent")
		for _, r := range c {
			require.False(t, r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0), "control %U left", r)
		}
	}
}

func FuzzClean(f *testing.F) {
	f.Add("\x1b]52;c;aGk=\x07", 10)
	f.Add("\xff\r\n", 256)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = 1 + (limit & 0x3ff)
		c := Clean(s, limit)
		require.True(t, utf8.ValidString(c), "Clean(%q, %d) = %q", s, limit, c)
		require.LessOrEqual(t, len(c), limit+suffixMax, "Clean(%q, %d) = %q", s, limit, c)
		for _, r := range c {
			require.GreaterOrEqual(t, r, rune(0x20), "control %U in %q", r, c)
			require.NotEqual(t, rune(0x7f), r, "control %U in %q", r, c)
			require.False(t, r >= 0x80 && r < 0xa0, "control %U in %q", r, c)
		}
		require.Equal(t, c, Clean(c, limit), "not idempotent: %q", c)
	})
}
