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
	doctabletest.Check(t, "internal/peertext", bounds)
}

// bounds lists every max* and *Max constant of the package, each once;
// TestPeertextBoundsTable checks against the source that none is missing.
var bounds = []doctable.Bound{
	{Name: "FieldMax", Value: FieldMax, Unit: "bytes", Protects: "one peer or file string in a log line or on the dashboard"},
	{Name: "LineMax", Value: LineMax, Unit: "bytes", Protects: "a whole error line on the terminal"},
	{Name: "suffixMax", Value: suffixMax, Unit: "bytes", Protects: "what Clean writes past its limit: the last escape and the truncation mark"},
}
