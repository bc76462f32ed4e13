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
	{"MaxPendingTxSize", MaxPendingTxSize, "bytes", "an unconfirmed transaction without its witness (no standard transaction is larger): a larger one is refused and its relayer scored"},
	{"MaxPendingTxElements", MaxPendingTxElements, "elements", "the filter elements one unconfirmed transaction adds (outputs paying the wallet, inputs it guards): a larger one is refused and its relayer scored"},
	{"MaxPendingTxs", MaxPendingTxs, "txs", "the unconfirmed wallet transactions kept: the next is refused, unscored, until a confirmation or expiry makes room"},
	{"MaxPendingBytes", MaxPendingBytes, "bytes", "the unconfirmed wallet transactions kept, in all, without witnesses"},
	{"MaxPendingElements", MaxPendingElements, "elements", "the filter elements the unconfirmed wallet transactions add in all"},
	{"maxMempoolFalsePositives", maxMempoolFalsePositives, "txids", "the unconfirmed false positives remembered (in memory only) to count each once; the set starts afresh when full"},
	// Local input.
	{"MaxAddressLine", MaxAddressLine, "bytes", "a line of `wallet add --addresses-file` (a file or standard input)"},
	{"MaxAddressListBytes", MaxAddressListBytes, "bytes", "a whole `--addresses-file`, streamed: past it nothing is imported"},
	{"MaxBirthday", MaxBirthday, "blocks", "`wallet create --birthday` (950 years of mainnet blocks): a birthday beyond the chain would make every sync scan nothing"},
	{"MaxGap", MaxGap, "addresses", "a configured gap limit (`--gap-external`, `--gap-internal`): every watched address is a filter element"},
	{"MaxReserve", MaxReserve, "addresses", "the lookahead reserve of derived, unused addresses"},
	{"MaxFeeRate", MaxFeeRate, "sat/vB", "`wallet psbt --fee-rate`: a higher rate is refused as no one's intent"},
	{"maxFalsePositiveList", maxFalsePositiveList, "txs", "FalsePositives when the caller passes no limit"},
	{"maxShownInput", maxShownInput, "bytes", "how much of a bad input an error message repeats"},
}
