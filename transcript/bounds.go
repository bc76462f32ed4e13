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
	{"MaxFileBytes", MaxFileBytes, "bytes", "a transcript that is read (the node's `DATADIR/spv/transcript.jsonl` at every start, `privacy analyze --transcript`): its records are held, so a larger one is refused before it is read, a stream once it passes the bound"},
	{"maxLine", maxLine, "bytes", "one JSON line of a transcript (a 36,000-byte filter is 72,000 hex digits)"},
	{"MaxWire", MaxWire, "bytes", "a record's `wire` size: a BIP324 packet and its decoy; a larger value is a malformed record"},
	{"MaxGetDataCount", MaxGetDataCount, "blocks", "a getdata record's count; a larger value is a malformed record"},
	{"MaxIsolationID", MaxIsolationID, "bytes", "a record's stream isolation id, a SOCKS5 username (RFC 1929)"},
}
