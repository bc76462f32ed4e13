package descriptor

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
)

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

func TestChecksumBIP380(t *testing.T) {
	// BIP380 "Test Vectors": checksum and character set.
	tests := []struct {
		name    string
		in      string
		wantSum string
		wantErr error
	}{
		{"valid checksum", "raw(deadbeef)#89f8spxm", "89f8spxm", nil},
		{"no checksum", "raw(deadbeef)", "89f8spxm", nil},
		{"missing checksum", "raw(deadbeef)#", "", ErrChecksum},
		{"too long checksum", "raw(deadbeef)#89f8spxmx", "", ErrChecksum},
		{"too short checksum", "raw(deadbeef)#89f8spx", "", ErrChecksum},
		{"error in payload", "raw(deedbeef)#89f8spxm", "", ErrChecksum},
		{"error in checksum", "raw(deedbeef)##9f8spxm", "", ErrChecksum},
		{"invalid characters in payload", "raw(Ü)#00000000", "", ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, sum, err := splitChecksum(tc.in)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantSum, sum)
		})
	}
}

func TestKeyExpressionsBIP380(t *testing.T) {
	// BIP380 "Test Vectors": key expressions, each inside pkh() (which
	// takes every key form) on mainnet. Valid expressions that need a
	// private key are refused by a watch-only wallet: private keys with
	// ErrPrivateKey, hardened steps after an xpub with ErrHardenedStep.
	// One valid ranged expression ends in /5/*, which is not an HD
	// account's branch (ErrUnsupported, see Account).
	valid := []struct {
		name, key string
		wantErr   error
	}{
		{"compressed public key", bip380Pub, nil},
		{"uncompressed public key", bip380Unc, nil},
		{"public key with key origin", "[deadbeef/0h/0h/0h]" + bip380Pub, nil},
		{"key origin with ' as hardened indicator", "[deadbeef/0'/0'/0']" + bip380Pub, nil},
		{"key origin with mixed hardened indicators", "[deadbeef/0'/0h/0']" + bip380Pub, nil},
		{"WIF uncompressed private key", bip380WIFU, ErrPrivateKey},
		{"WIF compressed private key", bip380WIFC, ErrPrivateKey},
		{"extended public key", bip380Xpub, nil},
		{"extended public key with key origin", "[deadbeef/0h/1h/2h]" + bip380Xpub, nil},
		{"extended public key with derivation", "[deadbeef/0h/1h/2h]" + bip380Xpub + "/3/4/5", nil},
		{"extended public key with derivation and children", "[deadbeef/0h/1h/2h]" + bip380Xpub + "/3/4/5/*", ErrUnsupported},
		{"extended public key with hardened derivation and unhardened children", bip380Xpub + "/3h/4h/5h/*", ErrHardenedStep},
		{"extended public key with hardened derivation and children", bip380Xpub + "/3h/4h/5h/*h", ErrHardenedStep},
		{"extended public key with key origin, hardened derivation and children", "[deadbeef/0h/1h/2]" + bip380Xpub + "/3h/4h/5h/*h", ErrHardenedStep},
		{"extended private key", bip380Xprv, ErrPrivateKey},
		{"extended private key with key origin", "[deadbeef/0h/1h/2h]" + bip380Xprv, ErrPrivateKey},
		{"extended private key with derivation", "[deadbeef/0h/1h/2h]" + bip380Xprv + "/3/4/5", ErrPrivateKey},
		{"extended private key with derivation and children", "[deadbeef/0h/1h/2h]" + bip380Xprv + "/3/4/5/*", ErrPrivateKey},
		{"extended private key with hardened derivation and unhardened children", bip380Xprv + "/3h/4h/5h/*", ErrPrivateKey},
		{"extended private key with hardened derivation and children", bip380Xprv + "/3h/4h/5h/*h", ErrPrivateKey},
		{"extended private key with key origin, hardened derivation and children", "[deadbeef/0h/1h/2]" + bip380Xprv + "/3h/4h/5h/*h", ErrPrivateKey},
	}
	for _, tc := range valid {
		t.Run("valid/"+tc.name, func(t *testing.T) {
			_, err := Parse("pkh("+tc.key+")", &chaincfg.MainNetParams)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
		})
	}
	// BIP380's invalid expressions. Those made of a private key are
	// refused as private keys before their other fault is looked at
	// (the key is never parsed further); the out-of-range index is
	// tested again with the public key below.
	invalid := []struct {
		name, key string
		wantErr   error
	}{
		{"children indicator in key origin", "[deadbeef/0h/0h/0h/*]" + bip380Pub, ErrInvalid},
		{"trailing slash in key origin", "[deadbeef/0h/0h/0h/]" + bip380Pub, ErrInvalid},
		{"too short fingerprint", "[deadbef/0h/0h/0h]" + bip380Pub, ErrInvalid},
		{"too long fingerprint", "[deadbeeef/0h/0h/0h]" + bip380Pub, ErrInvalid},
		{"invalid hardened indicators f", "[deadbeef/0f/0f/0f]" + bip380Pub, ErrInvalid},
		{"invalid hardened indicators H", "[deadbeef/0H/0H/0H]" + bip380Pub, ErrInvalid},
		{"invalid hardened indicators -", "[deadbeef/-0/-0/-0]" + bip380Pub, ErrInvalid},
		{"private key with derivation", bip380WIFC + "/0", ErrPrivateKey},
		{"private key with derivation children", bip380WIFC + "/*", ErrPrivateKey},
		{"derivation index out of range", bip380Xprv2 + "/2147483648", ErrPrivateKey},
		{"invalid derivation index", bip380Xprv2 + "/1aa", ErrPrivateKey},
		{"multiple key origins", "[aaaaaaaa][aaaaaaaa]" + bip380Xprv2 + "/2147483647'/0", ErrInvalid},
		{"missing key origin start", "aaaaaaaa]" + bip380Xprv2 + "/2147483647'/0", ErrInvalid},
		{"non hex fingerprint", "[gaaaaaaa]" + bip380Xprv2 + "/2147483647'/0", ErrInvalid},
		{"key origin with no public key", "[deadbeef]", ErrInvalid},
		// Not BIP vectors: the same faults after a public key.
		{"derivation index out of range after an xpub", bip380Xpub + "/2147483648", ErrInvalid},
		{"invalid derivation index after an xpub", bip380Xpub + "/1aa", ErrInvalid},
		{"hex public key with derivation", bip380Pub + "/0", ErrInvalid},
		{"empty step", bip380Xpub + "//0", ErrInvalid},
		{"wildcard not last", bip380Xpub + "/*/0", ErrInvalid},
	}
	for _, tc := range invalid {
		t.Run("invalid/"+tc.name, func(t *testing.T) {
			_, err := Parse("pkh("+tc.key+")", &chaincfg.MainNetParams)
			require.ErrorIs(t, err, tc.wantErr)
		})
	}
}

func TestTrDescriptorBIP386(t *testing.T) {
	// BIP386 "Test Vectors". The ranged and the script-tree vectors
	// carry script trees (and private keys), which a key-path-only
	// watch-only wallet refuses.
	d, err := Parse("tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)", &chaincfg.MainNetParams)
	require.NoError(t, err)
	scripts, _ := scriptsOf(t, d, &chaincfg.MainNetParams)
	require.Equal(t, []string{"512077aab6e066f8a7419c5ab714c12c67d25007ed55a43cadcacb4d7a970a093f11"}, scripts)
	require.Equal(t, KindP2TR, d.Kind())

	refused := []struct {
		name, desc string
		wantErr    error
	}{
		{"WIF key (valid, private)", "tr(" + bip380WIFC + ")", ErrPrivateKey},
		{"ranged key with a script tree (valid, private)", "tr(" + bip380Xprv + "/0/*,pk(" + bip380Xprv + "/1/*))", ErrUnsupported},
		{"script tree (valid)", "tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd,pk(669b8afcec803a0d323e9a17f3ea8e68e8abe5a278020a929adbec52421adbd0))", ErrUnsupported},
		{"uncompressed private key", "tr(" + bip380WIFU + ")", ErrPrivateKey},
		{"uncompressed public key", "tr(" + bip380Unc + ")", ErrInvalid},
		{"tr() nested in wsh", "wsh(tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd))", ErrInvalid},
		{"tr() nested in sh", "sh(tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd))", ErrInvalid},
		{"pkh() nested in tr", "tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd, pkh(" + bip380WIFC + "))", ErrUnsupported},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.desc, &chaincfg.MainNetParams)
			require.ErrorIs(t, err, tc.wantErr)
		})
	}
}

func TestBIP86InternalKeys(t *testing.T) {
	// BIP86 "Test vectors": internal key -> output key -> scriptPubKey
	// and address of m/86'/0'/0'/0/0, /0/1 and /1/0, through tr() with
	// the x-only internal key (BIP386).
	tests := []struct{ internal, script, address string }{
		{"cc8a4bc64d897bddc5fbc2f670f7a8ba0b386779106cf1223c6fc5d7cd6fc115",
			"5120a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c",
			"bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr"},
		{"83dfe85a3151d2517290da461fe2815591ef69f2b18a2ce63f01697a8b313145",
			"5120a82f29944d65b86ae6b5e5cc75e294ead6c59391a1edc5e016e3498c67fc7bbb",
			"bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh"},
		{"399f1b2f4393f29a18c937859c5dd8a77350103157eb880f02e8c08214277cef",
			"5120882d74e5d0572d5a816cef0041a96b6c1de832f6f9676d9605c44d5e9a97d3dc",
			"bc1p3qkhfews2uk44qtvauqyr2ttdsw7svhkl9nkm9s9c3x4ax5h60wqwruhk7"},
	}
	for _, tc := range tests {
		d, err := Parse("tr("+tc.internal+")", &chaincfg.MainNetParams)
		require.NoError(t, err)
		scripts, addresses := scriptsOf(t, d, &chaincfg.MainNetParams)
		require.Equal(t, []string{tc.script}, scripts)
		require.Equal(t, []string{tc.address}, addresses)
	}
}

func TestMultipathBIP389(t *testing.T) {
	// BIP389 "Test Vectors": each valid multipath descriptor and the
	// descriptors it expands into (a text transformation, checked here
	// on every vector whatever its function).
	const (
		x1 = "xpub68NZiKmJWnxxS6aaHmn81bvJeTESw724CRDs6HbuccFQN9Ku14VQrADWgqbhhTHBaohPX4CjNLf9fq9MYo6oDaPPLPxSb7gwQN3ih19Zm4Y"
		x2 = "xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U"
		x3 = "xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH"
		x4 = "xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL"
		x5 = "xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB"
		x6 = "xpub661MyMwAqRbcGDZQUKLqmWodYLcoBQnQH33yYkkF3jjxeLvY8qr2wWGEWkiKFaaQfJCoi3HeEq3Dc5DptfbCyjD38fNhSqtKc1UHaP4ba3t"
		x7 = "xpub661MyMwAqRbcF3yVrV2KyYetLMYA5mCbv4BhrKwUrFE9LZM6JRR1AEt8Jq4V4C8LwtTke6YEEdCZqgXp85YRk2j74EfJKhe3QybQ9kcUjs4"
		p1 = "xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc"
		p2 = "xprv9uPDJpEQgRQfDcW7BkF7eTya6RPxXeJCqCJGHuCJ4GiRVLzkTXBAJMu2qaMWPrS7AANYqdq6vcBcBUdJCVVFceUvJFjaPdGZ2y9WACViL4L"
		p3 = "xprv9s21ZrQH143K3jUwNHoqQNrtzJnJmx4Yup8NkNLdVQCymYbPbJXnPhwkfTfxZfptcs3rLAPUXS39oDLgrNKQGwbGsEmJJ8BU3RzQuvShEG4"
	)
	valid := []struct {
		in   string
		want []string
	}{
		{"pk(" + x1 + "/<0;1>)", []string{"pk(" + x1 + "/0)", "pk(" + x1 + "/1)"}},
		{"pkh(" + x2 + "/<2147483647h;0>/0)", []string{"pkh(" + x2 + "/2147483647h/0)", "pkh(" + x2 + "/0/0)"}},
		// The BIP's text of this vector lacks the closing parenthesis
		// of wpkh(); it is restored here.
		{"wpkh([ffffffff/13h]" + x3 + "/<1;3>/2/*)", []string{"wpkh([ffffffff/13h]" + x3 + "/1/2/*)", "wpkh([ffffffff/13h]" + x3 + "/3/2/*)"}},
		{"multi(2," + x4 + "/<1;2>/*," + x1 + "/<3;4>/0/*)", []string{
			"multi(2," + x4 + "/1/*," + x1 + "/3/0/*)",
			"multi(2," + x4 + "/2/*," + x1 + "/4/0/*)"}},
		{"pkh(" + x5 + "/<0;1;2>)", []string{"pkh(" + x5 + "/0)", "pkh(" + x5 + "/1)", "pkh(" + x5 + "/2)"}},
		{"sh(multi(2," + x4 + "/<1;2;3>/0/*," + x1 + "/0/*," + x6 + "/0/0/<3;4;5>/*))", []string{
			"sh(multi(2," + x4 + "/1/0/*," + x1 + "/0/*," + x6 + "/0/0/3/*))",
			"sh(multi(2," + x4 + "/2/0/*," + x1 + "/0/*," + x6 + "/0/0/4/*))",
			"sh(multi(2," + x4 + "/3/0/*," + x1 + "/0/*," + x6 + "/0/0/5/*))"}},
	}
	for _, tc := range valid {
		got, err := expandMultipath(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got)
	}
	invalid := []struct{ name, in string }{
		{"multiple multipath specifiers", "pkh(" + x2 + "/<0;1>/<2;3>)"},
		{"multipath specifier in origin", "pkh([deadbeef/<0;1>]" + x5 + "/0)"},
		{"mismatched lengths (tr)", "tr(" + x7 + "/<6;7;8;9>/*,{pk(" + x4 + "/<1;2;3>/0/*),pk(" + x6 + "/0/0/<3;4;5>/*)})"},
		{"mismatched lengths (sh(multi))", "sh(multi(2," + p1 + "/<1;2;3>/0/*," + p2 + "/0/*," + p3 + "/0/0/<3;4>/*))"},
		{"empty multipath specifier", "wpkh(" + x5 + "/<>/*)"},
		{"missing multipath start", "wpkh(" + x5 + "/0>/*)"},
		{"missing multipath end", "wpkh(" + x5 + "/<0/*)"},
		{"missing index in multipath specifier", "wpkh(" + x5 + "/<0;>/*)"},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			_, err := expandMultipath(tc.in)
			require.ErrorIs(t, err, ErrInvalid)
			// The whole parser refuses them too (the first one for
			// its private key, which is looked at after the syntax).
			_, err = Parse(tc.in, &chaincfg.MainNetParams)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
}

func TestExpandMultipath(t *testing.T) {
	// A wallet-shaped multipath descriptor expands to its two single-path
	// descriptors with their checksums, receive first, and covers both
	// branches of its account.
	const xpub = "xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V"
	d, err := Parse("wpkh([73c5da0a/84h/0h/0h]"+xpub+"/<0;1>/*)", &chaincfg.MainNetParams)
	require.NoError(t, err)
	require.True(t, d.Ranged())
	branches, paths, err := d.Branches()
	require.NoError(t, err)
	require.Equal(t, []uint32{0, 1}, branches)
	require.Equal(t, []int{0, 1}, paths)
	acct, err := d.Account()
	require.NoError(t, err)
	require.Equal(t, "m/84'/0'/0'", acct.Path)
	require.Equal(t, uint32(0x73c5da0a), acct.Fingerprint)
	body, _, _ := strings.Cut(d.String(), "#")
	expanded, err := Expand(body)
	require.NoError(t, err)
	require.Len(t, expanded, 2)
	for i, br := range []string{"/0/*)", "/1/*)"} {
		body, sum, ok := strings.Cut(expanded[i], "#")
		require.True(t, ok)
		require.True(t, strings.HasSuffix(body, br), body)
		want, err := Checksum(body)
		require.NoError(t, err)
		require.Equal(t, want, sum)
	}
}

// scriptsOf returns the scripts (hex) and addresses of a non-ranged
// descriptor.
func scriptsOf(t *testing.T, d *Descriptor, params *chaincfg.Params) (scripts, addresses []string) {
	t.Helper()
	ss, err := d.Scripts(params)
	require.NoError(t, err)
	for _, s := range ss {
		scripts = append(scripts, hex.EncodeToString(s.PkScript))
		addresses = append(addresses, s.Address)
	}
	return scripts, addresses
}
