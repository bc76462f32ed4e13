package session

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestSessionBoundsTable holds docs/RELIABILITY.md's session bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestSessionBoundsTable(t *testing.T) {
	doctabletest.CoverSource(t, "bounds", doctable.Rows(bounds))
	table, err := doctable.Render("session.", doctable.Rows(bounds))
	require.NoError(t, err)
	doctabletest.Sync(t, "../docs/RELIABILITY.md", doctabletest.Region{
		Name:    "session bounds",
		Command: "go test ./session -run TestSessionBoundsTable -update",
		Table:   table,
	})
}
