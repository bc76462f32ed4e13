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
	doctabletest.Check(t, "session", doctable.Rows(bounds))
}
