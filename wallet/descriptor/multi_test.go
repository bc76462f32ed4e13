package descriptor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/stretchr/testify/require"
)

// bip383Vector is one valid BIP383 test vector: a descriptor and the
// scripts it produces (at child indexes 0, 1, 2 when ranged).
type bip383Vector struct {
	desc    string
	scripts []string
}

// bip383Valid are BIP383's valid test vectors, as the BIP prints them.
var bip383Valid = []bip383Vector{
	{"multi(1,L4rK1yDtCWekvXuE6oXD9jCYfFNV2cWRpVuPLBcCU2z8TrisoyY1,5KYZdUEo39z3FPrtuX2QbbwGnNP5zTd7yyr2SC1j299sBCnWjss)",
		[]string{"512103a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd4104a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea23552ae"}},
	{"multi(1,03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd,04a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea235)",
		[]string{"512103a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd4104a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea23552ae"}},
	{"sortedmulti(1,04a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea235,03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)",
		[]string{"512103a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd4104a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea23552ae"}},
	{"sh(multi(2,[00000000/111'/222]xprvA1RpRA33e1JQ7ifknakTFpgNXPmW2YvmhqLQYMmrj4xJXXWYpDPS3xz7iAxn8L39njGVyuoseXzU6rcxFLJ8HFsTjSyQbLYnMpCqE2VbFWc,xprv9uPDJpEQgRQfDcW7BkF7eTya6RPxXeJCqCJGHuCJ4GiRVLzkTXBAJMu2qaMWPrS7AANYqdq6vcBcBUdJCVVFceUvJFjaPdGZ2y9WACViL4L/0))",
		[]string{"a91445a9a622a8b0a1269944be477640eedc447bbd8487"}},
	{"sortedmulti(2,xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL/*,xpub68NZiKmJWnxxS6aaHmn81bvJeTESw724CRDs6HbuccFQN9Ku14VQrADWgqbhhTHBaohPX4CjNLf9fq9MYo6oDaPPLPxSb7gwQN3ih19Zm4Y/0/0/*)",
		[]string{
			"5221025d5fc65ebb8d44a5274b53bac21ff8307fec2334a32df05553459f8b1f7fe1b62102fbd47cc8034098f0e6a94c6aeee8528abf0a2153a5d8e46d325b7284c046784652ae",
			"52210264fd4d1f5dea8ded94c61e9641309349b62f27fbffe807291f664e286bfbe6472103f4ece6dfccfa37b211eb3d0af4d0c61dba9ef698622dc17eecdf764beeb005a652ae",
			"5221022ccabda84c30bad578b13c89eb3b9544ce149787e5b538175b1d1ba259cbb83321024d902e1a2fc7a8755ab5b694c575fce742c48d9ff192e63df5193e4c7afe1f9c52ae"}},
	{"wsh(multi(2,xprv9s21ZrQH143K31xYSDQpPDxsXRTUcvj2iNHm5NUtrGiGG5e2DtALGdso3pGz6ssrdK4PFmM8NSpSBHNqPqm55Qn3LqFtT2emdEXVYsCzC2U/2147483647'/0,xprv9vHkqa6EV4sPZHYqZznhT2NPtPCjKuDKGY38FBWLvgaDx45zo9WQRUT3dKYnjwih2yJD9mkrocEZXo1ex8G81dwSM1fwqWpWkeS3v86pgKt/1/2/*,xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi/10/20/30/40/*'))",
		[]string{
			"0020b92623201f3bb7c3771d45b2ad1d0351ea8fbf8cfe0a0e570264e1075fa1948f",
			"002036a08bbe4923af41cf4316817c93b8d37e2f635dd25cfff06bd50df6ae7ea203",
			"0020a96e7ab4607ca6b261bfe3245ffda9c746b28d3f59e83d34820ec0e2b36c139c"}},
	{"sh(wsh(multi(16," + strings.Join(bip383Keys16, ",") + ")))",
		[]string{"a9147fc63e13dc25e8a95a3cee3d9a714ac3afd96f1e87"}},
	{"wsh(multi(20," + strings.Join(bip383WIF20, ",") + "))",
		[]string{"0020376bd8344b8b6ebe504ff85ef743eaa1aa9272178223bcb6887e9378efb341ac"}},
	{"sh(wsh(multi(20," + strings.Join(bip383WIF20, ",") + ")))",
		[]string{"a914c2c9c510e9d7f92fd6131e94803a8d34a8ef675e87"}},
}

// bip383Keys16 are the 16 public keys of BIP383's sh(wsh(multi(16,...)))
// vector (and of its invalid sh(multi(16,...))).
var bip383Keys16 = []string{
	"03669b8afcec803a0d323e9a17f3ea8e68e8abe5a278020a929adbec52421adbd0", "0260b2003c386519fc9eadf2b5cf124dd8eea4c4e68d5e154050a9346ea98ce600",
	"0362a74e399c39ed5593852a30147f2959b56bb827dfa3e60e464b02ccf87dc5e8", "0261345b53de74a4d721ef877c255429961b7e43714171ac06168d7e08c542a8b8",
	"02da72e8b46901a65d4374fe6315538d8f368557dda3a1dcf9ea903f3afe7314c8", "0318c82dd0b53fd3a932d16e0ba9e278fcc937c582d5781be626ff16e201f72286",
	"0297ccef1ef99f9d73dec9ad37476ddb232f1238aff877af19e72ba04493361009", "02e502cfd5c3f972fe9a3e2a18827820638f96b6f347e54d63deb839011fd5765d",
	"03e687710f0e3ebe81c1037074da939d409c0025f17eb86adb9427d28f0f7ae0e9", "02c04d3a5274952acdbc76987f3184b346a483d43be40874624b29e3692c1df5af",
	"02ed06e0f418b5b43a7ec01d1d7d27290fa15f75771cb69b642a51471c29c84acd", "036d46073cbb9ffee90473f3da429abc8de7f8751199da44485682a989a4bebb24",
	"02f5d1ff7c9029a80a4e36b9a5497027ef7f3e73384a4a94fbfe7c4e9164eec8bc", "02e41deffd1b7cce11cde209a781adcffdabd1b91c0ba0375857a2bfd9302419f3",
	"02d76625f7956a7fc505ab02556c23ee72d832f1bac391bcd2d3abce5710a13d06", "0399eb0a5487515802dc14544cf10b3666623762fbed2ec38a3975716e2c29c232",
}

// bip383WIF20 are the 20 private keys of BIP383's 20-key vectors.
var bip383WIF20 = []string{
	"KzoAz5CanayRKex3fSLQ2BwJpN7U52gZvxMyk78nDMHuqrUxuSJy", "KwGNz6YCCQtYvFzMtrC6D3tKTKdBBboMrLTsjr2NYVBwapCkn7Mr",
	"KxogYhiNfwxuswvXV66eFyKcCpm7dZ7TqHVqujHAVUjJxyivxQ9X", "L2BUNduTSyZwZjwNHynQTF14mv2uz2NRq5n5sYWTb4FkkmqgEE9f",
	"L1okJGHGn1kFjdXHKxXjwVVtmCMR2JA5QsbKCSpSb7ReQjezKeoD", "KxDCNSST75HFPaW5QKpzHtAyaCQC7p9Vo3FYfi2u4dXD1vgMiboK",
	"L5edQjFtnkcf5UWURn6UuuoFrabgDQUHdheKCziwN42aLwS3KizU", "KzF8UWFcEC7BYTq8Go1xVimMkDmyNYVmXV5PV7RuDicvAocoPB8i",
	"L3nHUboKG2w4VSJ5jYZ5CBM97oeK6YuKvfZxrefdShECcjEYKMWZ", "KyjHo36dWkYhimKmVVmQTq3gERv3pnqA4xFCpvUgbGDJad7eS8WE",
	"KwsfyHKRUTZPQtysN7M3tZ4GXTnuov5XRgjdF2XCG8faAPmFruRF", "KzCUbGhN9LJhdeFfL9zQgTJMjqxdBKEekRGZX24hXdgCNCijkkap",
	"KzgpMBwwsDLwkaC5UrmBgCYaBD2WgZ7PBoGYXR8KT7gCA9UTN5a3", "KyBXTPy4T7YG4q9tcAM3LkvfRpD1ybHMvcJ2ehaWXaSqeGUxEdkP",
	"KzJDe9iwJRPtKP2F2AoN6zBgzS7uiuAwhWCfGdNeYJ3PC1HNJ8M8", "L1xbHrxynrqLKkoYc4qtoQPx6uy5qYXR5ZDYVYBSRmCV5piU3JG9",
	"KzRedjSwMggebB3VufhbzpYJnvHfHe9kPJSjCU5QpJdAW3NSZxYS", "Kyjtp5858xL7JfeV4PNRCKy2t6XvgqNNepArGY9F9F1SSPqNEMs3",
	"L2D4RLHPiHBidkHS8ftx11jJk1hGFELvxh8LoxNQheaGT58dKenW", "KyLPZdwY4td98bKkXqEXTEBX3vwEYTQo1yyLjX2jKXA63GBpmSjv",
}

// publicAt rewrites every key expression of a vector's descriptor as the
// hex public key it stands for at child index: a WIF key becomes its
// public key, an extended key is derived (privately through hardened
// steps and a hardened wildcard) down to its child. The wallet takes
// public keys only, so this is how the vectors written with private keys
// reach its script construction; the vectors of extended public keys are
// also run as given (TestMultiBIP383Ranged).
func publicAt(t *testing.T, desc string, index uint32) string {
	t.Helper()
	var out strings.Builder
	tok := func(s string) string {
		if s == "" || strings.Contains("0123456789", s[:1]) && len(s) <= 2 {
			return s // a threshold
		}
		key := s
		if strings.HasPrefix(key, "[") {
			key = key[strings.IndexByte(key, ']')+1:]
		}
		parts := strings.Split(key, "/")
		if isHex(parts[0]) {
			return parts[0]
		}
		if wif, err := btcutil.DecodeWIF(parts[0]); err == nil {
			return hex.EncodeToString(wif.SerializePubKey())
		}
		ext, err := hdkeychain.NewKeyFromString(parts[0])
		require.NoError(t, err, s)
		for _, st := range parts[1:] {
			hard := strings.HasSuffix(st, "'") || strings.HasSuffix(st, "h")
			st = strings.TrimRight(st, "'h")
			var c uint32
			if st == "*" {
				c = index
			} else {
				v, err := strconv.ParseUint(st, 10, 32)
				require.NoError(t, err, s)
				c = uint32(v)
			}
			if hard {
				c += hdkeychain.HardenedKeyStart
			}
			ext, err = ext.Derive(c)
			require.NoError(t, err, s)
		}
		pub, err := ext.ECPubKey()
		require.NoError(t, err)
		return hex.EncodeToString(pub.SerializeCompressed())
	}
	last := 0
	for i := 0; i < len(desc); i++ {
		if c := desc[i]; c == '(' || c == ')' || c == ',' {
			if c == '(' {
				out.WriteString(desc[last:i]) // a function name
			} else {
				out.WriteString(tok(desc[last:i]))
			}
			out.WriteByte(c)
			last = i + 1
		}
	}
	out.WriteString(tok(desc[last:]))
	return out.String()
}

func TestMultiBIP383Vectors(t *testing.T) {
	params := &chaincfg.MainNetParams
	for _, v := range bip383Valid {
		name := v.desc
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			for i, want := range v.scripts {
				pub := publicAt(t, v.desc, uint32(i))
				d, err := ParseAny(pub, params)
				require.NoError(t, err, pub)
				require.False(t, d.Ranged())
				scripts, _ := scriptsOf(t, d, params)
				require.Equal(t, []string{want}, scripts, "index %d", i)
				if d.Kind() != KindMultisig {
					// What the wallet watches takes it too, and
					// the checksum it prints parses again.
					d, err := Parse(pub, params)
					require.NoError(t, err)
					scripts, addresses := scriptsOf(t, d, params)
					require.Equal(t, []string{want}, scripts)
					again, err := Parse(d.String(), params)
					require.NoError(t, err)
					require.Equal(t, d, again)
					scriptsAgain, addressesAgain := scriptsOf(t, again, params)
					require.Equal(t, scripts, scriptsAgain)
					require.Equal(t, addresses, addressesAgain)
				}
			}
			// As written, the wallet refuses it when it holds private
			// keys or is bare, with one line, and takes it otherwise.
			bare, err := ParseAny(publicAt(t, v.desc, 0), params)
			require.NoError(t, err)
			_, err = Parse(v.desc, params)
			if bare.Kind() == KindMultisig || publicAt(t, v.desc, 0) != v.desc {
				require.Error(t, err, v.desc)
				require.NotContains(t, err.Error(), "\n")
				requireSentinel(t, err)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

func TestMultiBIP383Ranged(t *testing.T) {
	// The one ranged vector of extended public keys, run as given: the
	// wallet's own derivation at indexes 0, 1, 2.
	params := &chaincfg.MainNetParams
	v := bip383Valid[4]
	d, err := ParseAny(v.desc, params)
	require.NoError(t, err)
	require.True(t, d.Ranged())
	for i, want := range v.scripts {
		ws, err := d.ScriptAt(0, uint32(i), params)
		require.NoError(t, err)
		require.Equal(t, want, hex.EncodeToString(ws.PkScript))
	}
	// Its keys end in /* and /0/0/*: not a wallet's branch shape.
	_, err = Parse(v.desc, params)
	require.ErrorIs(t, err, ErrUnsupported)
}

func TestMultiBIP383Invalid(t *testing.T) {
	// BIP383's invalid vectors, as written and with public keys.
	invalid := []string{
		"sh(multi(16," + strings.Join(bip383Keys16, ",") + "))",
		"multi(a,03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd,04a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea235)",
		"multi(0,03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd,04a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea235)",
		"multi(3,L4rK1yDtCWekvXuE6oXD9jCYfFNV2cWRpVuPLBcCU2z8TrisoyY1,5KYZdUEo39z3FPrtuX2QbbwGnNP5zTd7yyr2SC1j299sBCnWjss)",
	}
	for _, desc := range invalid {
		for _, form := range []string{desc, publicAt(t, desc, 0)} {
			_, err := ParseAny(form, &chaincfg.MainNetParams)
			require.Error(t, err, form)
			requireSentinel(t, err)
			if form != desc || !strings.Contains(desc, "L4rK") {
				require.ErrorIs(t, err, ErrInvalid, form)
			}
			_, err = Parse(form, &chaincfg.MainNetParams)
			require.Error(t, err)
		}
	}
}

func TestMultiMatchesTxscript(t *testing.T) {
	// A ranged 2-of-3 wsh(sortedmulti()) and sh(multi()) of tpubs,
	// derived by the wallet, equal btcd's txscript.MultiSigScript of the
	// keys derived here, wrapped as BIP141/BIP16 say, for both branches
	// of a multipath descriptor.
	params := &chaincfg.RegressionNetParams
	var xpubs []string
	var accts []*hdkeychain.ExtendedKey
	for i := range 3 {
		seed := sha256.Sum256([]byte(fmt.Sprintf("cosigner %d", i)))
		m, err := hdkeychain.NewMaster(seed[:], params)
		require.NoError(t, err)
		k := m
		for _, c := range []uint32{48, 1, 0, 2} {
			k, err = k.Derive(hdkeychain.HardenedKeyStart + c)
			require.NoError(t, err)
		}
		pub, err := k.Neuter()
		require.NoError(t, err)
		accts = append(accts, pub)
		xpubs = append(xpubs, pub.String()+"/<0;1>/*")
	}
	for _, tc := range []struct {
		desc   string
		sorted bool
		wrap   func(ms []byte) btcutil.Address
	}{
		{"wsh(sortedmulti(2," + strings.Join(xpubs, ",") + "))", true, func(ms []byte) btcutil.Address {
			sum := sha256.Sum256(ms)
			a, err := btcutil.NewAddressWitnessScriptHash(sum[:], params)
			require.NoError(t, err)
			return a
		}},
		{"sh(multi(2," + strings.Join(xpubs, ",") + "))", false, func(ms []byte) btcutil.Address {
			a, err := btcutil.NewAddressScriptHash(ms, params)
			require.NoError(t, err)
			return a
		}},
		{"sh(wsh(sortedmulti(2," + strings.Join(xpubs, ",") + ")))", true, func(ms []byte) btcutil.Address {
			sum := sha256.Sum256(ms)
			w, err := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(sum[:]).Script()
			require.NoError(t, err)
			a, err := btcutil.NewAddressScriptHash(w, params)
			require.NoError(t, err)
			return a
		}},
	} {
		d, err := Parse(tc.desc, params)
		require.NoError(t, err, tc.desc)
		branches, paths, err := d.Branches()
		require.NoError(t, err)
		require.Equal(t, []uint32{0, 1}, branches)
		for _, br := range branches {
			for i := uint32(0); i < 5; i++ {
				var keys []*btcutil.AddressPubKey
				for _, a := range accts {
					c, err := a.Derive(br)
					require.NoError(t, err)
					c, err = c.Derive(i)
					require.NoError(t, err)
					pub, err := c.ECPubKey()
					require.NoError(t, err)
					ap, err := btcutil.NewAddressPubKey(pub.SerializeCompressed(), params)
					require.NoError(t, err)
					keys = append(keys, ap)
				}
				if tc.sorted {
					sort.Slice(keys, func(x, y int) bool {
						return bytes.Compare(keys[x].ScriptAddress(), keys[y].ScriptAddress()) < 0
					})
				}
				ms, err := txscript.MultiSigScript(keys, 2)
				require.NoError(t, err)
				want := tc.wrap(ms)
				set, err := d.ScriptAt(paths[br], i, params)
				require.NoError(t, err)
				require.Equal(t, want.EncodeAddress(), set.Address, "%s %d/%d", tc.desc, br, i)
				require.Equal(t, want.ScriptAddress(), set.Element, "the filter element is the script hash")
			}
		}
	}
}

// requireSentinel checks that err wraps one of the package's sentinel
// errors, as every refusal does.
func requireSentinel(t *testing.T, err error) {
	t.Helper()
	for _, e := range []error{ErrInvalid, ErrChecksum, ErrUnsupported, ErrHardenedStep, ErrPrivateKey, ErrInvalidKey, ErrWrongNetwork} {
		if errors.Is(err, e) {
			return
		}
	}
	require.FailNow(t, fmt.Sprintf("%v wraps none of the sentinel errors", err))
}
