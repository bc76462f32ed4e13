package nodeapi

// bound is one named bound of the package, a row of docs/RELIABILITY.md's
// node API bounds (a doctable.Bound: TestNodeAPIBoundsTable renders the
// table from bounds).
type bound struct {
	Name     string // the constant, as the code names it
	Value    any    // the constant itself
	Unit     string // what Value counts ("bytes" prints as B, KiB, MiB)
	Protects string // what it bounds, and against what
}

// bounds lists every max* constant of the package, each once;
// TestNodeAPIBoundsTable checks against the source that none is missing.
var bounds = []bound{
	{"MaxRequestBytes", MaxRequestBytes, "bytes", "a request body (a full block's weight of tx in hex fits)"},
	{"maxResponseBytes", maxResponseBytes, "bytes", "a response body the client reads"},
	{"maxStreamErrorBytes", maxStreamErrorBytes, "bytes", "what a refused stream request's body puts into its error line"},
	{"maxNodeFileBytes", maxNodeFileBytes, "bytes", "the data dir's `.cookie` and `api.address`, read whole by Dial (`attach`, wallet commands beside a running node)"},
	{"maxSocketPath", maxSocketPath, "bytes", "`--api-listen unix`'s `DATADIR/api.sock` (sun_path): a longer one is refused"},
}
