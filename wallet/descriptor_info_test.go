package wallet

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/wallet/descriptor"
)

// ParseDescriptor on top of package descriptor: what the wallet adds is
// the network by name, the decoding of addr() and raw(), the account
// scope and the *InputError of every refusal. The parser's own vectors
// (BIP380-389) are package descriptor's tests.

// Keys of the BIP380 key-expression test vectors.
const (
	bip380Xpub  = "xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL"
	bip380Xprv  = "xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc"
	bip380Xprv2 = "xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U"
	bip380Pub   = "0260b2003c386519fc9eadf2b5cf124dd8eea4c4e68d5e154050a9346ea98ce600"
	bip380Unc   = "04a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea235"
	bip380WIFU  = "5KYZdUEo39z3FPrtuX2QbbwGnNP5zTd7yyr2SC1j299sBCnWjss"
	bip380WIFC  = "L4rK1yDtCWekvXuE6oXD9jCYfFNV2cWRpVuPLBcCU2z8TrisoyY1"
)

func TestDescriptorChecksumCoreExamples(t *testing.T) {
	// Descriptors with checksums printed in Bitcoin Core's documentation
	// (doc/descriptors.md and the scantxoutset help), parsed whole: the
	// checksum is checked and the descriptor accepted, and without it
	// the same checksum is computed.
	tests := []struct {
		network, desc, sum string
	}{
		{"testnet3", "addr(mkmZxiEcEd8ZqjQWVZuC6so5dFMKEFpN2j)", "02wpgw69"},
		{"mainnet", "wpkh([d34db33f/84h/0h/0h]0279be667ef9dcbbac55a06295Ce870b07029Bfcdb2dce28d959f2815b16f81798)", "qwlqgth7"},
		{"mainnet", "raw(76a91411b366edfc0a8b66feebae5c2e25a7b6a5d1cf3188ac)", "fm24fxxy"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			info, err := ParseDescriptor(tc.desc+"#"+tc.sum, tc.network)
			require.NoError(t, err)
			require.Equal(t, tc.sum, info.Checksum)
			require.Equal(t, tc.desc+"#"+tc.sum, info.Descriptor)
			info, err = ParseDescriptor("  "+tc.desc+"\n", tc.network)
			require.NoError(t, err)
			require.Equal(t, tc.sum, info.Checksum)
			require.False(t, info.Ranged)
			require.Len(t, info.Scripts, 1)
		})
	}
}

func TestParseDescriptorInputErrors(t *testing.T) {
	// Every refusal, whichever layer finds it (the checksum, the syntax,
	// a key, the shape, the address or script of addr() and raw(), the
	// network), is an *InputError about the descriptor, of one line.
	const tpub = "tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B"
	tests := []struct {
		desc    string
		wantErr error
	}{
		{"", ErrInvalidDescriptor},
		{"raw(deedbeef)#89f8spxm", ErrDescriptorChecksum},
		{"wpkh(" + bip380Pub + "", ErrInvalidDescriptor},
		{"pkh(" + bip380WIFC + ")", ErrPrivateKey},
		{"wpkh(" + bip380Xprv + "/0/*)", ErrPrivateKey},
		{"wpkh(" + tpub + "/0h/*)", ErrHardenedStep},
		{"wpkh(" + bip380Xpub + "/0/*)", ErrWrongNetwork},
		{"wpkh(" + tpub + "/5/*)", ErrUnsupportedDescriptor},
		{"multi(1," + bip380Pub + ")", ErrUnsupportedDescriptor},
		{"addr(bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4)", ErrWrongNetwork},
		{"addr(notanaddress)", ErrInvalidAddress},
		{"raw(6a)", ErrUnmatchableScript},
	}
	for _, tc := range tests {
		_, err := ParseDescriptor(tc.desc, "regtest")
		require.ErrorIs(t, err, tc.wantErr, tc.desc)
		requireInputError(t, err)
		require.NotContains(t, err.Error(), "\n")
	}
}

func TestParseDescriptorMultipathInfo(t *testing.T) {
	// A wallet-shaped multipath descriptor reports its two single-path
	// descriptors with their checksums, receive first.
	xpub := accountXpub(t, purposeBIP84, 0, versionXpub)
	info, err := ParseDescriptor("wpkh([73c5da0a/84h/0h/0h]"+xpub+"/<0;1>/*)", "mainnet")
	require.NoError(t, err)
	require.True(t, info.Ranged)
	require.Equal(t, "m/84'/0'", info.Scope)
	require.Equal(t, []uint32{0, 1}, info.Branches)
	require.Len(t, info.Expanded, 2)
	for i, br := range []string{"/0/*)", "/1/*)"} {
		body, sum, ok := strings.Cut(info.Expanded[i], "#")
		require.True(t, ok)
		require.True(t, strings.HasSuffix(body, br), body)
		want, err := descriptor.Checksum(body)
		require.NoError(t, err)
		require.Equal(t, want, sum)
	}
}

// requireInputError checks that err is an *InputError about a
// descriptor.
func requireInputError(t *testing.T, err error) {
	t.Helper()
	var ie *InputError
	require.True(t, errors.As(err, &ie), "%v is not an *InputError", err)
	require.Equal(t, "descriptor", ie.What)
}
