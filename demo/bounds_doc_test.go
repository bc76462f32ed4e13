package demo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/boundedread"
	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestDemoBoundsTable holds docs/RELIABILITY.md's table of the demo's
// bounds to bounds, and bounds to the source (every max* constant of the
// package, each once); -update rewrites the table.
func TestDemoBoundsTable(t *testing.T) {
	doctabletest.Check(t, "demo", bounds)
}

// TestRunningDirRefusesOversizedRecord gives RunningDir a record above
// maxRunningFileBytes: refused unread, naming the file and the bound; a
// record of one path is read back.
func TestRunningDirRefusesOversizedRecord(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	_, err := RunningDir()
	require.ErrorIs(t, err, ErrNotRunning)

	unmark, err := MarkRunning(filepath.Join(home, "d"))
	require.NoError(t, err)
	dir, err := RunningDir()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, "d"), dir)

	path := filepath.Join(home, ".bloomwatch", RunningFile)
	require.NoError(t, os.Truncate(path, maxRunningFileBytes+1))
	_, err = RunningDir()
	require.ErrorIs(t, err, boundedread.ErrTooLarge)
	require.ErrorContains(t, err, "above demo.maxRunningFileBytes")
	unmark()
	_, err = os.Stat(path)
	require.NoError(t, err, "an oversized record is not the demo's and stays")
}

// bounds lists every max* constant of the package, each once;
// TestDemoBoundsTable checks against the source that none is missing.
var bounds = []doctable.Bound{
	{Name: "MaxMine", Value: MaxMine, Unit: "blocks", Protects: "one `demo mine N` request to the running demo's faucet"},
	{Name: "maxRunningFileBytes", Value: maxRunningFileBytes, Unit: "bytes", Protects: "`~/.bloomwatch/demo.running`, the running demo's data dir that `demo pay`/`demo mine` read whole"},
}
