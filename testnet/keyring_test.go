package testnet

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/wallet"
)

// TestKeyringMatchesWallet checks that the watch-only wallet accepts the
// keyring's xpubs and derives the same addresses, on regtest and simnet.
func TestKeyringMatchesWallet(t *testing.T) {
	for _, params := range []*chaincfg.Params{&chaincfg.RegressionNetParams, &chaincfg.SimNetParams} {
		t.Run(params.Name, func(t *testing.T) {
			key, err := NewKeyring(DemoSeed, params)
			require.NoError(t, err)
			var xpubs []string
			for _, purpose := range []uint32{PurposeBIP44, PurposeBIP49, PurposeBIP84} {
				x, err := key.Xpub(purpose)
				require.NoError(t, err)
				xpubs = append(xpubs, x)
			}
			taproot, err := key.Xpub(PurposeBIP86)
			require.NoError(t, err)
			if params.Name == "regtest" {
				require.Regexp(t, "^tpub", xpubs[0])
				require.Regexp(t, "^upub", xpubs[1])
				require.Regexp(t, "^vpub", xpubs[2])
				require.Regexp(t, "^tpub", taproot)
			}
			w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{Network: params.Name, Xpubs: xpubs, TaprootXpubs: []string{taproot}})
			require.NoError(t, err)
			defer w.Close()
			infos, err := w.Addresses()
			require.NoError(t, err)
			seen := 0
			for _, info := range infos {
				if info.Imported {
					continue
				}
				var purpose uint32
				switch info.Scope[:5] {
				case "m/44'":
					purpose = PurposeBIP44
				case "m/49'":
					purpose = PurposeBIP49
				case "m/84'":
					purpose = PurposeBIP84
				case "m/86'":
					purpose = PurposeBIP86
				default:
					require.FailNow(t, fmt.Sprintf("unexpected scope %q", info.Scope))
				}
				addr, err := key.Address(purpose, info.Branch, info.Index)
				require.NoError(t, err)
				require.Equal(t, info.Address, addr.EncodeAddress(), "%s", info.Path)
				seen++
			}
			// Each branch: its gap limit and the lookahead reserve.
			require.Equal(t, 4*(wallet.DefaultGapExternal+wallet.DefaultGapInternal+2*wallet.DefaultReserve), seen)
		})
	}
}

func TestKeyringLookupAndErrors(t *testing.T) {
	key, err := NewKeyring(DemoSeed, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	_, err = key.Xpub(85)
	require.ErrorIs(t, err, ErrBadPurpose)
	_, err = key.Address(0, 0, 0)
	require.ErrorIs(t, err, ErrBadPurpose)

	// A fresh keyring finds a script it never handed out by scanning.
	other, err := NewKeyring(DemoSeed, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	script, err := other.PkScript(PurposeBIP49, BranchInternal, 777)
	require.NoError(t, err)
	path, ok := key.Lookup(script)
	require.True(t, ok)
	require.Equal(t, KeyPath{PurposeBIP49, BranchInternal, 777}, path)
	script, err = other.PkScript(PurposeBIP86, BranchExternal, 5)
	require.NoError(t, err)
	path, ok = key.Lookup(script)
	require.True(t, ok)
	require.Equal(t, KeyPath{PurposeBIP86, BranchExternal, 5}, path)
	_, ok = key.Lookup([]byte{0x51})
	require.False(t, ok)

	// Different seeds, different keys.
	third, err := NewKeyring([]byte("another seed, 16+ bytes long"), &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	a, err := third.Address(PurposeBIP84, 0, 0)
	require.NoError(t, err)
	b, err := key.Address(PurposeBIP84, 0, 0)
	require.NoError(t, err)
	require.NotEqual(t, a.String(), b.String())
}
