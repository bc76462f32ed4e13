package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/progress/ptytest"
)

func TestCheckMode(t *testing.T) {
	for _, m := range []string{Auto, Bar, Lines, None} {
		require.NoError(t, CheckMode(m), "%s", m)
	}
	err := CheckMode("fancy")
	require.Error(t, err, "fancy: %v", err)
	require.Equal(t, `"fancy": want auto, bar, lines or none`, err.Error(), "fancy: %v", err)
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
	require.Len(t, lines, 12, "lines %q", lines)
	require.Equal(t, "scan: 0/100 (0%)", lines[0], "lines %q", lines)
	require.Equal(t, "scan: 10/100 (10%)", lines[1], "lines %q", lines)
	require.Equal(t, "scan: 100/100 (100%)", lines[10], "lines %q", lines)
	require.Equal(t, "link: 1/2 (50%)", lines[11], "lines %q", lines)
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
	require.Equal(t, want, b.String(), "bar\n%q\nwant\n%q", b.String(), want)
	b.Reset()
	New(&b, None).Report("x", 1, 1)
	auto := New(&b, Auto)
	auto.Report("x", 1, 1)
	require.Equal(t, "x: 1/1 (100%)\n", b.String(), "none and auto off a terminal: %q", b.String())
	require.False(t, IsTerminal(&b), "none and auto off a terminal: %q", b.String())
}

// TestIsTerminalAsksTheDriver holds IsTerminal to the terminal driver: a
// pseudo-terminal is one; /dev/null, also a character device, is not,
// nor are a pipe, a file and a buffer.
func TestIsTerminalAsksTheDriver(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	st, err := null.Stat()
	require.NoError(t, err)
	require.NotZero(t, st.Mode()&os.ModeCharDevice, "/dev/null is a character device")
	require.False(t, IsTerminal(null), "/dev/null")

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.False(t, IsTerminal(w), "a pipe")
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	defer f.Close()
	require.False(t, IsTerminal(f), "a file")
	require.False(t, IsTerminal(&bytes.Buffer{}), "a buffer")

	_, slave := ptytest.Open(t)
	require.True(t, IsTerminal(slave), "a pseudo-terminal")
}
