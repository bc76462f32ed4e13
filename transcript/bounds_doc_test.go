package transcript

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestTranscriptBoundsTable holds docs/RELIABILITY.md's transcript bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestTranscriptBoundsTable(t *testing.T) {
	doctabletest.CoverSource(t, "bounds", doctable.Rows(bounds))
	table, err := doctable.Render("transcript.", doctable.Rows(bounds))
	require.NoError(t, err)
	doctabletest.Sync(t, "../docs/RELIABILITY.md", doctabletest.Region{
		Name:    "transcript bounds",
		Command: "go test ./transcript -run TestTranscriptBoundsTable -update",
		Table:   table,
	})
}
