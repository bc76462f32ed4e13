package wallet

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
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

// TestDepthOneKeyNamesItsMaster checks that a PSBT of a depth-1 key's
// wallet names the master (the key's parent, whose fingerprint the key
// carries) and the full path, as Electrum's parser reads them.
func TestDepthOneKeyNamesItsMaster(t *testing.T) {
	master, err := hdkeychain.NewMaster(bip39Seed(t, testMnemonic), &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	d1, err := master.Derive(hdkeychain.HardenedKeyStart)
	require.NoError(t, err)
	pub, err := d1.Neuter()
	require.NoError(t, err)
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], uint32(versionVpub))
	pub, err = pub.CloneWithVersion(v[:])
	require.NoError(t, err)
	w, err := Create(t.TempDir(), CreateConfig{Network: "regtest", Xpubs: []string{pub.String()}})
	require.NoError(t, err)
	defer w.Close()
	info, err := w.Receive(ReceiveOptions{})
	require.NoError(t, err)
	ws, err := parseAddress(info.Address, w.net.params)
	require.NoError(t, err)
	f := &txFactory{}
	mustApply(t, w, newTestChain(f, 400).add(f.tx(nil, output{ws.pkScript, 500_000})).filtered())
	res, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{addressOf(t, foreignScript(3)), 100_000}}, FeeRate: 2})
	require.NoError(t, err)
	mpub, err := master.ECPubKey()
	require.NoError(t, err)
	want := hex.EncodeToString(btcutil.Hash160(mpub.SerializeCompressed())[:4])
	ins, _ := electrumDeserialize(t, res.Base64)
	require.Len(t, ins, 1)
	for key, fp := range ins[0] {
		require.Equal(t, [2]string{want, "m/0'/0/0"}, fp, "key %s", key)
	}
}
