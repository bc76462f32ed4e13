package session

// bound is one named bound of the package, a row of docs/RELIABILITY.md's
// session bounds table (a doctable.Bound: TestSessionBoundsTable renders the table from bounds).
type bound struct {
	Name     string // the constant, as the code names it
	Value    any    // the constant itself
	Unit     string // what Value counts ("bytes" prints as B, KiB, MiB)
	Protects string // what it bounds, and against what
}

// bounds lists every max* and *Max constant of the package, each once;
// TestSessionBoundsTable checks against the source that none is missing.
var bounds = []bound{
	{"maxUniverseFileBytes", maxUniverseFileBytes, "bytes", "the data dir's `universe.json` (the meter's estimate): a larger one is ignored, the estimate starts over"},
	{"logFieldMax", logFieldMax, "bytes", "each string of a session log line, escaped by peertext.Clean"},
}
