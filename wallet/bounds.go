package wallet

// bound is one named bound of the package, a row of docs/RELIABILITY.md's
// wallet bounds table (a doctable.Bound: TestWalletBoundsTable renders the table from bounds).
type bound struct {
	Name     string // the constant, as the code names it
	Value    any    // the constant itself
	Unit     string // what Value counts ("bytes" prints as B, KiB, MiB)
	Protects string // what it bounds, and against what
}

// bounds lists every max* and *Max constant of the package, each once;
// TestWalletBoundsTable checks against the source that none is missing.
var bounds = []bound{
	// What a relaying peer can make the wallet hold (budget.go).
	{"MaxPendingTxSize", MaxPendingTxSize, "bytes", "an unconfirmed tx without witness (no standard tx is larger): refused, its relayer scored"},
	{"MaxPendingTxElements", MaxPendingTxElements, "elements", "the filter elements one unconfirmed tx adds (outputs to the wallet, guarded inputs): refused, its relayer scored"},
	{"MaxPendingTxs", MaxPendingTxs, "txs", "the unconfirmed txs kept: the next refused, unscored, until a confirmation or expiry makes room"},
	{"MaxPendingBytes", MaxPendingBytes, "bytes", "the same, in bytes without witnesses"},
	{"MaxPendingElements", MaxPendingElements, "elements", "the same, in filter elements"},
	{"maxMempoolFalsePositives", maxMempoolFalsePositives, "txids", "unconfirmed false positives remembered (in memory) to count each once"},
	// Local input.
	{"MaxAddressLine", MaxAddressLine, "bytes", "a line of `wallet add --addresses-file`"},
	{"MaxAddressListBytes", MaxAddressListBytes, "bytes", "a whole `--addresses-file` (streamed): past it nothing is imported"},
	{"MaxBirthday", MaxBirthday, "blocks", "`wallet create --birthday` (950 years of blocks): beyond the chain every sync would scan nothing"},
	{"MaxGap", MaxGap, "addresses", "`--gap-external`, `--gap-internal`: each watched address is a filter element"},
	{"MaxReserve", MaxReserve, "addresses", "the lookahead reserve of derived, unused addresses"},
	{"MaxFeeRate", MaxFeeRate, "sat/vB", "`wallet psbt --fee-rate`"},
	{"maxFalsePositiveList", maxFalsePositiveList, "txs", "FalsePositives without a limit"},
	{"maxShownInput", maxShownInput, "bytes", "how much of a bad input an error message repeats"},
}
