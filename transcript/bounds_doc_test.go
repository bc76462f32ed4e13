package transcript

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestTranscriptBoundsTable holds docs/RELIABILITY.md's transcript bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestTranscriptBoundsTable(t *testing.T) {
	doctabletest.Check(t, "transcript", doctable.Rows(bounds))
}
