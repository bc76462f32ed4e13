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
	{"MaxRequestBytes", MaxRequestBytes, "bytes", "a request body the server reads (a transaction of a full block's weight in hex fits)"},
	{"maxResponseBytes", maxResponseBytes, "bytes", "a response body the client reads"},
	{"maxStreamErrorBytes", maxStreamErrorBytes, "bytes", "what a refused stream request's body puts into its error line"},
	{"maxNodeFileBytes", maxNodeFileBytes, "bytes", "the data dir's `.cookie` and `api.address` that Dial (`bloomwatch attach`, the wallet commands beside a running node) reads whole: a larger one is refused before it is read"},
	{"maxSocketPath", maxSocketPath, "bytes", "the socket path of `--api-listen unix` (`DATADIR/api.sock`; sockaddr_un's sun_path on every platform): a longer one is refused at start"},
}
