package peertext

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestPeertextBoundsTable holds docs/RELIABILITY.md's internal/peertext bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestPeertextBoundsTable(t *testing.T) {
	doctabletest.CoverSource(t, "bounds", doctable.Rows(bounds))
	table, err := doctable.Render("peertext.", doctable.Rows(bounds))
	require.NoError(t, err)
	doctabletest.Sync(t, "../../docs/RELIABILITY.md", doctabletest.Region{
		Name:    "internal/peertext bounds",
		Command: "go test ./internal/peertext -run TestPeertextBoundsTable -update",
		Table:   table,
	})
}
