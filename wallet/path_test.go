package wallet

import (
	"encoding/binary"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
)

// TestAddressPathOfShallowKeys checks the paths printed for account keys
// that do not sit at BIP44 account depth: an Electrum segwit key (depth 1,
// m/0') is the whole path, not the scope its vpub version implies; at
// depth 2 only the last step is known.
func TestAddressPathOfShallowKeys(t *testing.T) {
	master, err := hdkeychain.NewMaster(bip39Seed(t, testMnemonic), &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	vpub := func(k *hdkeychain.ExtendedKey) string {
		pub, err := k.Neuter()
		require.NoError(t, err)
		var v [4]byte
		binary.BigEndian.PutUint32(v[:], uint32(versionVpub))
		pub, err = pub.CloneWithVersion(v[:])
		require.NoError(t, err)
		return pub.String()
	}
	d1, err := master.Derive(hdkeychain.HardenedKeyStart)
	require.NoError(t, err)
	d2, err := d1.Derive(hdkeychain.HardenedKeyStart + 5)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		key  *hdkeychain.ExtendedKey
		want string
	}{
		{"depth 1 (Electrum)", d1, "m/0'/0/0"},
		{"depth 2", d2, "m/?/5'/0/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(t.TempDir(), CreateConfig{Network: "regtest", Xpubs: []string{vpub(tc.key)}})
			require.NoError(t, err)
			defer w.Close()
			addrs, err := w.Addresses()
			require.NoError(t, err)
			require.Equal(t, tc.want, addrs[0].Path)
			info, err := w.Receive(ReceiveOptions{})
			require.NoError(t, err)
			require.Equal(t, tc.want, info.Path)
		})
	}
}
