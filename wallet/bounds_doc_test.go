package wallet

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestWalletBoundsTable holds docs/RELIABILITY.md's wallet bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestWalletBoundsTable(t *testing.T) {
	doctabletest.Check(t, "wallet", doctable.Rows(bounds))
}
