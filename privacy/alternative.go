package privacy

import (
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// MeasureFilter returns the meter's reading of filter f alone, for a
// wallet of counts c among a universe of candidates (a fresh meter of
// cfg: no earlier filter, no observation).
func MeasureFilter(cfg MeterConfig, f *bip37.Filter, c WalletCounts, candidates uint64, source string) (*FilterAlternative, error) {
	m := NewMeter(cfg)
	m.SetUniverse(candidates, source)
	m.SetWallet(c)
	rec := transcript.Record{Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: "alternative"}
	if err := m.Feed(rec.WithBloom(f)); err != nil {
		return nil, err
	}
	return AlternativeOf(m.Current(), f), nil
}

// AlternativeOf returns the figures of reading rd, the meter's reading
// right after filter f was fed, as a FilterAlternative.
func AlternativeOf(rd Reading, f *bip37.Filter) *FilterAlternative {
	return &FilterAlternative{
		Bytes: f.Size(), HashFuncs: f.HashFuncs(), Elements: rd.Elements + rd.Decoys,
		FPRate: rd.FPRate, TxFPRate: rd.ExpectedTxFPRate,
		Candidates: rd.Candidates, ExpectedFP: rd.ExpectedFP, Precision: rd.SinglePrecision, Entropy: rd.SingleEntropy,
	}
}
