package doctable

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRender(t *testing.T) {
	got, err := Render("pkg.", []Bound{
		{"maxBytes", 16 << 20, "bytes", "a file"},
		{"maxSmall", 1024, "bytes", "a line"},
		{"maxKiB", 64 << 10, "bytes", "a field"},
		{"maxTxs", 100_000, "txs", "a set"},
		{"timeout", 90 * time.Second, "", "a wait"},
		{"interval", 2 * time.Minute, "", "a pause"},
		{"rate", 0.5, "lines a second", "a refill"},
	})
	require.NoError(t, err)
	require.Equal(t, Header+
		"| `pkg.maxBytes` | 16 MiB | a file |\n"+
		"| `pkg.maxSmall` | 1,024 B | a line |\n"+
		"| `pkg.maxKiB` | 64 KiB | a field |\n"+
		"| `pkg.maxTxs` | 100,000 txs | a set |\n"+
		"| `pkg.timeout` | 90 s | a wait |\n"+
		"| `pkg.interval` | 2 min | a pause |\n"+
		"| `pkg.rate` | 0.5 lines a second | a refill |\n", got)

	_, err = Render("", []Bound{{"bad", "text", "", "x"}})
	require.ErrorContains(t, err, "bound bad: value of type string")
}

func TestReplace(t *testing.T) {
	begin, end := Markers("t", "go test ./x -update")
	text := "before\n" + begin + "old\n" + end + "\nafter\n"
	next, old, err := Replace(text, "t", "go test ./x -update", "new\n")
	require.NoError(t, err)
	require.Equal(t, "old\n", old)
	require.Equal(t, "before\n"+begin+"new\n"+end+"\nafter\n", next)

	_, _, err = Replace(text, "other", "go test ./x -update", "new\n")
	require.ErrorContains(t, err, `no region "other"`)
	_, _, err = Replace("before\n"+begin+"old\n", "t", "go test ./x -update", "new\n")
	require.ErrorContains(t, err, "is not closed")
}
