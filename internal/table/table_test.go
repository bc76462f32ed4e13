package table

import (
	"strings"
	"testing"
)

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1.5: "1.5", 0.000123456: "0.0001235", 123456789: "1.235e+08", 2.0 / 3: "0.6667"} {
		if got := Num(v); got != want {
			t.Errorf("Num(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("short", 10); got != "short" {
		t.Errorf("got %q", got)
	}
	if got := Truncate("héllo wörld, longer", 10); got != "héllo w..." {
		t.Errorf("got %q", got)
	}
}

func TestNew(t *testing.T) {
	var b strings.Builder
	w := New(&b)
	_, _ = w.Write([]byte("a\tbb\tc\nlonger\tx\ty\n"))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "a       bb  c\nlonger  x   y\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}
