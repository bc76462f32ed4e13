package privacy_test

import (
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/btcutil"
)

// A wallet of 20 addresses loads a filter (1 % target rate) on one peer,
// then, after a restart, a filter with a fresh tweak on another. The meter
// reads each record as it is sent: against a million candidate addresses
// either filter alone hides the wallet among thousands of false
// positives, but two colluding peers that intersect both filters keep
// about 60, and a quarter of what they suspect is the wallet.
func ExampleMeter() {
	var wallet [][]byte
	for i := range 20 {
		wallet = append(wallet, btcutil.Hash160([]byte{'w', byte(i)}))
	}
	filterload := func(seq uint64, peer string, tweak uint32) transcript.Record {
		f, err := bip37.NewFilter(uint32(len(wallet)), 0.01, tweak, bip37.UpdateNone)
		if err != nil {
			panic(err)
		}
		for _, e := range wallet {
			f.Add(e)
		}
		return transcript.Record{
			Seq: seq, Peer: peer, Height: 100, Kind: transcript.KindFilterLoad, Filter: f.Serialize(),
		}
	}

	m := privacy.NewMeter(privacy.MeterConfig{})
	m.SetCandidates(1_000_000) // addresses on chain so far
	// The client knows its wallet: all 20 addresses have been paid.
	m.SetWallet(privacy.WalletCounts{OnChain: len(wallet), Watched: len(wallet), Elements: len(wallet)})
	for _, r := range []transcript.Record{
		filterload(0, "127.0.0.1:18444", 1),
		filterload(1, "127.0.0.1:18445", 2), // restart: fresh tweak
	} {
		rd, err := m.Observe(r)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %s: %d filter(s), latest alone %.0f false positives, all intersected %.0f (precision %.3f)\n",
			rd.Kind, rd.Peer, rd.Filters, rd.ExpectedFP, rd.IntersectionFP, rd.Precision)
	}
	// Output:
	// filterload 127.0.0.1:18444: 1 filter(s), latest alone 8425 false positives, all intersected 8425 (precision 0.002)
	// filterload 127.0.0.1:18445: 2 filter(s), latest alone 7278 false positives, all intersected 61 (precision 0.248)
}
