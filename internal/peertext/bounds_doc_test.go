package peertext

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestPeertextBoundsTable holds docs/RELIABILITY.md's internal/peertext bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestPeertextBoundsTable(t *testing.T) {
	doctabletest.Check(t, "internal/peertext", doctable.Rows(bounds))
}
