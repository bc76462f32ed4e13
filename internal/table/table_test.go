package table

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1.5: "1.5", 0.000123456: "0.0001235", 123456789: "1.235e+08", 2.0 / 3: "0.6667"} {
		got := Num(v)
		require.Equal(t, want, got, "Num(%v) = %q, want %q", v, got, want)
	}
}

func TestTruncate(t *testing.T) {
	got := Truncate("short", 10)
	require.Equal(t, "short", got, "got %q", got)
	got = Truncate("héllo wörld, longer", 10)
	require.Equal(t, "héllo w...", got, "got %q", got)
}

func TestNew(t *testing.T) {
	var b strings.Builder
	w := New(&b)
	_, _ = w.Write([]byte("a\tbb\tc\nlonger\tx\ty\n"))
	require.NoError(t, w.Flush())
	want := "a       bb  c\nlonger  x   y\n"
	require.Equal(t, want, b.String(), "got %q, want %q", b.String(), want)
}
