package wallet

import (
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
)

// SLIP-132 test vectors (account 0 of the BIP44/49/84 test mnemonic).
const (
	vectorXpub44 = "xpub6BosfCnifzxcFwrSzQiqu2DBVTshkCXacvNsWGYJVVhhawA7d4R5WSWGFNbi8Aw6ZRc1brxMyWMzG3DSSSSoekkudhUd9yLb6qx39T9nMdj"
	vectorYpub49 = "ypub6Ww3ibxVfGzLrAH1PNcjyAWenMTbbAosGNB6VvmSEgytSER9azLDWCxoJwW7Ke7icmizBMXrzBx9979FfaHxHcrArf3zbeJJJUZPf663zsP"
	vectorZpub84 = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	vectorZprv84 = "zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE"
)

func TestVectorKeysDeriveFromMnemonic(t *testing.T) {
	// The test helper's derivation must reproduce the published keys, so
	// the testnet keys it makes below are right too.
	require.Equal(t, vectorXpub44, accountXpub(t, purposeBIP44, 0, versionXpub))
	require.Equal(t, vectorYpub49, accountXpub(t, purposeBIP49, 0, versionYpub))
	require.Equal(t, vectorZpub84, accountXpub(t, purposeBIP84, 0, versionZpub))
}

func TestDerivedAddressesMatchVectors(t *testing.T) {
	tests := []struct {
		name    string
		network string
		xpub    string
		kind    Kind
		receive []string // indexes 0, 1, ...
		change0 string   // empty: not published
	}{
		{"BIP44 mainnet", "mainnet", vectorXpub44, KindP2PKH,
			[]string{"1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", "1Ak8PffB2meyfYnbXZR9EGfLfFZVpzJvQP"},
			"1J3J6EvPrv8q6AC3VCjWV45Uf3nssNMRtH"},
		{"BIP49 mainnet", "mainnet", vectorYpub49, KindP2SHP2WPKH,
			[]string{"37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf", "3LtMnn87fqUeHBUG414p9CWwnoV6E2pNKS"},
			"34K56kSjgUCUSD8GTtuF7c9Zzwokbs6uZ7"},
		{"BIP84 mainnet", "mainnet", vectorZpub84, KindP2WPKH,
			[]string{"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"},
			"bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el"},
		{"BIP44 testnet3", "testnet3", accountXpub(t, purposeBIP44, 1, versionTpub), KindP2PKH,
			[]string{"mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV"}, ""},
		{"BIP49 testnet3", "testnet3", accountXpub(t, purposeBIP49, 1, versionUpub), KindP2SHP2WPKH,
			[]string{"2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2"}, ""},
		{"BIP84 testnet3", "testnet3", accountXpub(t, purposeBIP84, 1, versionVpub), KindP2WPKH,
			[]string{"tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"}, ""},
		{"BIP84 regtest", "regtest", accountXpub(t, purposeBIP84, 1, versionVpub), KindP2WPKH,
			[]string{"bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(t.TempDir(), CreateConfig{Network: tc.network, Xpubs: []string{tc.xpub}})
			require.NoError(t, err)
			defer w.Close()
			addrs, err := w.Addresses()
			require.NoError(t, err)
			require.Len(t, addrs, DefaultGapExternal+DefaultGapInternal)
			byPath := make(map[[2]uint32]AddressInfo)
			for _, a := range addrs {
				require.Equal(t, tc.kind, a.Kind)
				require.False(t, a.Used)
				byPath[[2]uint32{a.Branch, a.Index}] = a
			}
			for i, want := range tc.receive {
				require.Equal(t, want, byPath[[2]uint32{0, uint32(i)}].Address, "receive %d", i)
			}
			if tc.change0 != "" {
				require.Equal(t, tc.change0, byPath[[2]uint32{1, 0}].Address)
			}
		})
	}
}

func TestSimnetKeysUseSimnetVersions(t *testing.T) {
	// Simnet's BIP44 key is btcd's spub; BIP84 follows waddrmgr's use of
	// the mainnet zpub version there.
	spub := accountXpub(t, purposeBIP44, 115, versionSpub)
	require.True(t, strings.HasPrefix(spub, "spub"), spub)
	for _, tc := range []struct {
		key  string
		kind Kind
	}{
		{spub, KindP2PKH},
		{accountXpub(t, purposeBIP84, 115, versionZpub), KindP2WPKH},
	} {
		k, err := parseAccountKey(tc.key, &chaincfg.SimNetParams)
		require.NoError(t, err)
		require.Equal(t, tc.kind, k.kind)
		require.Equal(t, uint32(115), k.scope.Coin)
	}
	_, err := parseAccountKey(vectorXpub44, &chaincfg.SimNetParams)
	require.ErrorIs(t, err, ErrWrongNetwork)
}

func TestParseAccountKeyRejectsBadKeys(t *testing.T) {
	flipped := []byte(vectorZpub84)
	last := len(flipped) - 1
	if flipped[last] == 's' {
		flipped[last] = 't'
	} else {
		flipped[last] = 's'
	}
	tpub := accountXpub(t, purposeBIP44, 1, versionTpub)
	multisig := accountXpub(t, purposeBIP84, 0, 0x02aa7ed3) // Zpub
	unknown := accountXpub(t, purposeBIP84, 0, 0x01020304)
	tests := []struct {
		name    string
		key     string
		params  *chaincfg.Params
		wantErr error
	}{
		{"bad checksum", string(flipped), &chaincfg.MainNetParams, ErrInvalidKey},
		{"garbage", "not-a-key", &chaincfg.MainNetParams, ErrInvalidKey},
		{"empty", "", &chaincfg.MainNetParams, ErrInvalidKey},
		{"truncated", vectorZpub84[:60], &chaincfg.MainNetParams, ErrInvalidKey},
		{"private key", vectorZprv84, &chaincfg.MainNetParams, ErrPrivateKey},
		{"tpub on mainnet", tpub, &chaincfg.MainNetParams, ErrWrongNetwork},
		{"xpub on regtest", vectorXpub44, &chaincfg.RegressionNetParams, ErrWrongNetwork},
		{"zpub on testnet3", vectorZpub84, &chaincfg.TestNet3Params, ErrWrongNetwork},
		{"multisig Zpub", multisig, &chaincfg.MainNetParams, ErrInvalidKey},
		{"unknown version", unknown, &chaincfg.MainNetParams, ErrInvalidKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseAccountKey(tc.key, tc.params)
			require.ErrorIs(t, err, tc.wantErr)
			var ie *InputError
			require.True(t, errors.As(err, &ie), "input error expected, got %T", err)
			require.NotContains(t, err.Error(), vectorZprv84, "an error must not echo a private key")
		})
	}
}

func TestCreateRefusesDuplicateKeys(t *testing.T) {
	_, err := Create(t.TempDir(), CreateConfig{Network: "mainnet", Xpubs: []string{vectorZpub84, vectorZpub84}})
	require.ErrorIs(t, err, ErrDuplicate)

	w, err := Create(t.TempDir(), CreateConfig{Network: "mainnet", Xpubs: []string{vectorZpub84}})
	require.NoError(t, err)
	defer w.Close()
	_, err = w.AddXpub(vectorZpub84)
	require.ErrorIs(t, err, ErrDuplicate)
	// The same key under another purpose is another account.
	info, err := w.AddXpub(accountXpub(t, purposeBIP84, 0, versionXpub))
	require.NoError(t, err)
	require.Equal(t, "m/44'/0'", info.Scope)
	require.Equal(t, KindP2PKH, info.Kind)
	require.Equal(t, uint8(3), info.Depth)
	accts, err := w.Accounts()
	require.NoError(t, err)
	require.Equal(t, []AccountInfo{
		{Scope: "m/44'/0'", Account: 0, ID: "m/44'/0'/0", Path: "m/44'/0'/0'", Name: "watch-0", Kind: KindP2PKH, Depth: 3, Key: accountXpub(t, purposeBIP84, 0, versionXpub)},
		{Scope: "m/84'/0'", Account: 0, ID: "m/84'/0'/0", Path: "m/84'/0'/0'", Name: "watch-0", Kind: KindP2WPKH, Depth: 3, Key: vectorZpub84},
	}, accts)
}
