package wallet

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestWalletBoundsTable holds docs/RELIABILITY.md's wallet bounds table to bounds, and bounds
// to the source (every max* and *Max constant of the package, each once);
// -update rewrites the table.
func TestWalletBoundsTable(t *testing.T) {
	doctabletest.Check(t, "wallet", bounds)
}

// bounds lists every max* and *Max constant of the package, each once;
// TestWalletBoundsTable checks against the source that none is missing.
var bounds = []doctable.Bound{
	// What a relaying peer can make the wallet hold (budget.go).
	{Name: "MaxPendingTxSize", Value: MaxPendingTxSize, Unit: "bytes", Protects: "an unconfirmed tx without witness (no standard tx is larger): refused, its relayer scored"},
	{Name: "MaxPendingTxElements", Value: MaxPendingTxElements, Unit: "elements", Protects: "the filter elements one unconfirmed tx adds (outputs to the wallet, guarded inputs): refused, its relayer scored"},
	{Name: "MaxPendingTxs", Value: MaxPendingTxs, Unit: "txs", Protects: "the unconfirmed txs kept: the next refused, unscored, until a confirmation or expiry makes room"},
	{Name: "MaxPendingBytes", Value: MaxPendingBytes, Unit: "bytes", Protects: "the same, in bytes without witnesses"},
	{Name: "MaxPendingElements", Value: MaxPendingElements, Unit: "elements", Protects: "the same, in filter elements"},
	{Name: "maxMempoolFalsePositives", Value: maxMempoolFalsePositives, Unit: "txids", Protects: "unconfirmed false positives remembered (in memory) to count each once"},
	// Local input.
	{Name: "MaxAddressLine", Value: MaxAddressLine, Unit: "bytes", Protects: "a line of `wallet add --addresses-file`"},
	{Name: "MaxAddressListBytes", Value: MaxAddressListBytes, Unit: "bytes", Protects: "a whole `--addresses-file` (streamed): past it nothing is imported"},
	{Name: "MaxBirthday", Value: MaxBirthday, Unit: "blocks", Protects: "`wallet create --birthday` (950 years of blocks): beyond the chain every sync would scan nothing"},
	{Name: "MaxGap", Value: MaxGap, Unit: "addresses", Protects: "`--gap-external`, `--gap-internal`: each watched address is a filter element"},
	{Name: "MaxReserve", Value: MaxReserve, Unit: "addresses", Protects: "the lookahead reserve of derived, unused addresses"},
	{Name: "MaxFeeRate", Value: MaxFeeRate, Unit: "sat/vB", Protects: "`wallet psbt --fee-rate`"},
	{Name: "maxFalsePositiveList", Value: maxFalsePositiveList, Unit: "txs", Protects: "FalsePositives without a limit"},
	{Name: "maxShownInput", Value: maxShownInput, Unit: "bytes", Protects: "how much of a bad input an error message repeats"},
}
