package progress

import (
	"strings"
	"testing"
)

func TestCheckMode(t *testing.T) {
	for _, m := range []string{Auto, Bar, Lines, None} {
		if err := CheckMode(m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	if err := CheckMode("fancy"); err == nil || err.Error() != `"fancy": want auto, bar, lines or none` {
		t.Errorf("fancy: %v", err)
	}
}

// TestLines checks the plain lines: at most one per tenth of a stage,
// the end once, a new stage starting over.
func TestLines(t *testing.T) {
	var b strings.Builder
	p := New(&b, Lines)
	for i := 0; i <= 100; i++ {
		p.Report("scan", i, 100)
	}
	p.Report("scan", 100, 100)
	p.Report("link", 0, 0) // no total: nothing
	p.Report("link", 1, 2)
	p.Done()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 12 || lines[0] != "scan: 0/100 (0%)" || lines[1] != "scan: 10/100 (10%)" ||
		lines[10] != "scan: 100/100 (100%)" || lines[11] != "link: 1/2 (50%)" {
		t.Fatalf("lines %q", lines)
	}
}

// TestBar checks the bar: redrawn in place, its line ended by a new stage
// and by Done, and Auto drawing lines on a writer that is no terminal.
func TestBar(t *testing.T) {
	var b strings.Builder
	p := New(&b, Bar)
	p.Report("blocks", 1, 2)
	p.Report("blocks", 2, 2)
	p.Report("groups", 3, 3)
	p.Done()
	p.Done()
	want := "\rblocks   [===============               ]  50% 1/2" +
		"\rblocks   [==============================] 100% 2/2\n" +
		"\rgroups   [==============================] 100% 3/3\n"
	if b.String() != want {
		t.Fatalf("bar\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	New(&b, None).Report("x", 1, 1)
	auto := New(&b, Auto)
	auto.Report("x", 1, 1)
	if b.String() != "x: 1/1 (100%)\n" || IsTerminal(&b) {
		t.Fatalf("none and auto off a terminal: %q", b.String())
	}
}
