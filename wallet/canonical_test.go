package wallet

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
)

// TestCanonicalAddress checks that parseAddress keeps the text
// btcutil's EncodeAddress gives, without encoding again, for every kind
// on every network: random hashes and programs (leading zero bytes
// included, which base58 writes as leading 1s), bech32 ones also given in
// upper case, and addresses with surrounding space.
func TestCanonicalAddress(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	nets := []*chaincfg.Params{&chaincfg.MainNetParams, &chaincfg.TestNet3Params,
		&chaincfg.RegressionNetParams, &chaincfg.SimNetParams, &chaincfg.SigNetParams}
	payload := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		for i := 0; i < rng.Intn(4) && i < n; i++ {
			b[i] = 0
		}
		return b
	}
	for _, params := range nets {
		for range 200 {
			var addrs []btcutil.Address
			a, err := btcutil.NewAddressPubKeyHash(payload(20), params)
			require.NoError(t, err)
			addrs = append(addrs, a)
			s, err := btcutil.NewAddressScriptHashFromHash(payload(20), params)
			require.NoError(t, err)
			addrs = append(addrs, s)
			wpkh, err := btcutil.NewAddressWitnessPubKeyHash(payload(20), params)
			require.NoError(t, err)
			addrs = append(addrs, wpkh)
			wsh, err := btcutil.NewAddressWitnessScriptHash(payload(32), params)
			require.NoError(t, err)
			addrs = append(addrs, wsh)
			tr, err := btcutil.NewAddressTaproot(payload(32), params)
			require.NoError(t, err)
			addrs = append(addrs, tr)
			for _, addr := range addrs {
				want := addr.EncodeAddress()
				inputs := []string{want, " " + want + "\n"}
				switch addr.(type) {
				case *btcutil.AddressWitnessPubKeyHash, *btcutil.AddressWitnessScriptHash, *btcutil.AddressTaproot:
					inputs = append(inputs, strings.ToUpper(want))
				}
				for _, in := range inputs {
					ws, err := parseAddress(in, params)
					require.NoError(t, err, "%q on %s", in, params.Name)
					require.Equal(t, want, ws.address, "%q on %s", in, params.Name)
					dec, err := btcutil.DecodeAddress(strings.TrimSpace(in), params)
					require.NoError(t, err)
					require.Equal(t, dec.EncodeAddress(), ws.address)
				}
			}
		}
	}
}
