package wallet

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestWalletBoundsTable holds docs/RELIABILITY.md's wallet bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestWalletBoundsTable(t *testing.T) {
	doctabletest.CoverSource(t, "bounds", doctable.Rows(bounds))
	table, err := doctable.Render("wallet.", doctable.Rows(bounds))
	require.NoError(t, err)
	doctabletest.Sync(t, "../docs/RELIABILITY.md", doctabletest.Region{
		Name:    "wallet bounds",
		Command: "go test ./wallet -run TestWalletBoundsTable -update",
		Table:   table,
	})
}
