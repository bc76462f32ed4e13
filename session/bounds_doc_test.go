package session

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestSessionBoundsTable holds docs/RELIABILITY.md's session bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestSessionBoundsTable(t *testing.T) {
	doctabletest.Check(t, "session", bounds)
}

// bounds lists every max* and *Max constant of the package, each once;
// TestSessionBoundsTable checks against the source that none is missing.
var bounds = []doctable.Bound{
	{Name: "maxUniverseFileBytes", Value: maxUniverseFileBytes, Unit: "bytes", Protects: "the data dir's `universe.json` (the meter's estimate): a larger one is ignored, the estimate starts over"},
	{Name: "logFieldMax", Value: logFieldMax, Unit: "bytes", Protects: "each string of a session log line, escaped by peertext.Clean"},
}
