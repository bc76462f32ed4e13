package transcript

// bound is one named bound of the package, a row of docs/RELIABILITY.md's
// transcript bounds table (a doctable.Bound: TestTranscriptBoundsTable renders the table from bounds).
type bound struct {
	Name     string // the constant, as the code names it
	Value    any    // the constant itself
	Unit     string // what Value counts ("bytes" prints as B, KiB, MiB)
	Protects string // what it bounds, and against what
}

// bounds lists every max* and *Max constant of the package, each once;
// TestTranscriptBoundsTable checks against the source that none is missing.
var bounds = []bound{
	{"MaxFileBytes", MaxFileBytes, "bytes", "a transcript read (the node's at every start, `privacy analyze --transcript`): its records are held"},
	{"maxLine", maxLine, "bytes", "one JSON line (a 36,000-byte filter is 72,000 hex digits)"},
	{"MaxWire", MaxWire, "bytes", "a record's `wire` size (a BIP324 packet and its decoy)"},
	{"MaxGetDataCount", MaxGetDataCount, "blocks", "a getdata record's count"},
	{"MaxIsolationID", MaxIsolationID, "bytes", "a record's isolation id (a SOCKS5 username)"},
}
