package wallet

import (
	"errors"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/wallet/internal/secret"
	"github.com/stretchr/testify/require"
)

// TestPrivateKeyShape: private keys, valid or mistyped, are recognized;
// addresses, extended public keys and hex keys are not.
func TestPrivateKeyShape(t *testing.T) {
	secrets := []string{
		bip380WIFC, bip380WIFU, bip380Xprv, vectorZprv84,
		bip380WIFC[:10] + "1" + bip380WIFC[11:], // mistyped: bad checksum
		vectorZprv84[:50] + "1" + vectorZprv84[51:],
		" " + bip380WIFC + "\n",
	}
	for _, s := range secrets {
		require.NotEqual(t, "", secret.Shape(s), "%.12s... not recognized as a private key", s)
		bad := errors.New("bad")
		err := inputErr("address", s, bad)
		require.ErrorIs(t, err, bad, "%.12s...: %v", s, err)
		require.Contains(t, err.Error(), "private key", "%.12s...: %v", s, err)
		require.NotContains(t, err.Error(), strings.TrimSpace(s)[:8], "%.12s...: %v", s, err)
		err = inputErr("descriptor", "wpkh("+s+"/0/*)", bad)
		require.NotContains(t, err.Error(), strings.TrimSpace(s)[:8], "descriptor holding %.12s...: %v", s, err)
		require.Contains(t, err.Error(), "private key", "descriptor holding %.12s...: %v", s, err)
	}
	public := []string{
		"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
		"mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
		"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", bip380Xpub, vectorZpub84,
		"03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd", "", "notanaddress",
	}
	for _, s := range public {
		k := secret.Shape(s)
		require.Equal(t, "", k, "%q taken for %s", s, k)
	}
}
