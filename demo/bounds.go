package demo

// bound is one named bound of the package, a row of docs/RELIABILITY.md's
// demo bounds (a doctable.Bound: TestDemoBoundsTable renders the table
// from bounds).
type bound struct {
	Name     string // the constant, as the code names it
	Value    any    // the constant itself
	Unit     string // what Value counts ("bytes" prints as B, KiB, MiB)
	Protects string // what it bounds, and against what
}

// bounds lists every max* constant of the package, each once;
// TestDemoBoundsTable checks against the source that none is missing.
var bounds = []bound{
	{"MaxMine", MaxMine, "blocks", "one `demo mine N` request to the running demo's faucet"},
	{"maxRunningFileBytes", maxRunningFileBytes, "bytes", "`~/.bloomwatch/demo.running`, the running demo's data dir that `demo pay`/`demo mine` read whole"},
}
