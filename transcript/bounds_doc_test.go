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
	doctabletest.Check(t, "transcript", bounds)
}

// bounds lists every max* and *Max constant of the package, each once;
// TestTranscriptBoundsTable checks against the source that none is missing.
var bounds = []doctable.Bound{
	{Name: "MaxFileBytes", Value: MaxFileBytes, Unit: "bytes", Protects: "a transcript read (the node's at every start, `privacy analyze --transcript`): its records are held"},
	{Name: "maxLine", Value: maxLine, Unit: "bytes", Protects: "one JSON line (a 36,000-byte filter is 72,000 hex digits)"},
	{Name: "MaxWire", Value: MaxWire, Unit: "bytes", Protects: "a record's `wire` size (a BIP324 packet and its decoy)"},
	{Name: "MaxGetDataCount", Value: MaxGetDataCount, Unit: "blocks", Protects: "a getdata record's count"},
	{Name: "MaxIsolationID", Value: MaxIsolationID, Unit: "bytes", Protects: "a record's isolation id (a SOCKS5 username)"},
}
