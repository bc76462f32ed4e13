package peertext

// bound is one named bound of the package, a row of docs/RELIABILITY.md's
// internal/peertext bounds table (a doctable.Bound: TestPeertextBoundsTable renders the table from bounds).
type bound struct {
	Name     string // the constant, as the code names it
	Value    any    // the constant itself
	Unit     string // what Value counts ("bytes" prints as B, KiB, MiB)
	Protects string // what it bounds, and against what
}

// bounds lists every max* and *Max constant of the package, each once;
// TestPeertextBoundsTable checks against the source that none is missing.
var bounds = []bound{
	{"FieldMax", FieldMax, "bytes", "one peer or file string in a log line or on the dashboard"},
	{"LineMax", LineMax, "bytes", "a whole error line on the terminal"},
	{"suffixMax", suffixMax, "bytes", "what Clean writes past its limit: the last escape and the truncation mark"},
}
