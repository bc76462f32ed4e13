package wallet

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/wallet/descriptor"
)

// BIP86 "Test vectors": the account-0 extended public key of the test
// mnemonic, m/86'/0'/0', and the master key fingerprint every key origin
// of that mnemonic starts with.
const (
	vectorXpub86          = "xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ"
	vectorFingerprintHex  = "73c5da0a"
	versionTprv           = 0x04358394
	testGapExternal       = DefaultGapExternal
	testGapInternal       = DefaultGapInternal
	regtestCoin           = 1
	descriptorTestNetwork = "regtest"
)

// masterFingerprint returns the BIP32 fingerprint of the test mnemonic's
// master key (hash160 of its public key, first four bytes), in hex.
func masterFingerprint(t testing.TB) string {
	t.Helper()
	master, err := hdkeychain.NewMaster(bip39Seed(t, testMnemonic), &chaincfg.MainNetParams)
	require.NoError(t, err)
	pub, err := master.ECPubKey()
	require.NoError(t, err)
	return hex.EncodeToString(btcutil.Hash160(pub.SerializeCompressed())[:4])
}

// p2tr returns the BIP86 P2TR output script of branch/index.
func (k *testKeys) p2tr(branch, index uint32) []byte {
	k.t.Helper()
	br, err := k.acct.Derive(branch)
	require.NoError(k.t, err)
	child, err := br.Derive(index)
	require.NoError(k.t, err)
	pk, err := child.ECPubKey()
	require.NoError(k.t, err)
	out := txscript.ComputeTaprootKeyNoScript(pk)
	addr, err := btcutil.NewAddressTaproot(schnorr.SerializePubKey(out), k.params)
	require.NoError(k.t, err)
	script, err := txscript.PayToAddrScript(addr)
	require.NoError(k.t, err)
	return script
}

// tpub returns the regtest account key of purpose in the plain tpub
// version descriptors take.
func tpub(t testing.TB, purpose uint32) string {
	return accountXpub(t, purpose, regtestCoin, versionTpub)
}

// originKey returns "[fingerprint/purpose'/coin'/0']key".
func originKey(t testing.TB, purpose, coin uint32, key string) string {
	return fmt.Sprintf("[%s/%dh/%dh/0h]%s", masterFingerprint(t), purpose, coin, key)
}

// addressesOf returns the watched addresses by (kind, branch, index).
func addressesOf(t testing.TB, w *Wallet) map[string]AddressInfo {
	t.Helper()
	infos, err := w.Addresses()
	require.NoError(t, err)
	out := make(map[string]AddressInfo, len(infos))
	for _, a := range infos {
		key := a.Address
		if !a.Imported {
			key = fmt.Sprintf("%s/%d/%d", a.Kind, a.Branch, a.Index)
		}
		out[key] = a
	}
	return out
}

// branchCount counts the watched HD addresses of kind on branch.
func branchCount(t testing.TB, w *Wallet, kind Kind, branch uint32) int {
	t.Helper()
	infos, err := w.Addresses()
	require.NoError(t, err)
	n := 0
	for _, a := range infos {
		if !a.Imported && a.Kind == kind && a.Branch == branch {
			n++
		}
	}
	return n
}

func TestVectorKeysBIP86(t *testing.T) {
	// BIP86: the test helper derives the published account key, and the
	// master fingerprint used in the key origins below is the mnemonic's.
	require.Equal(t, vectorXpub86, accountXpub(t, purposeBIP86, 0, versionXpub))
	require.Equal(t, vectorFingerprintHex, masterFingerprint(t))
}

func TestDescriptorAccountVectors(t *testing.T) {
	// Receive 0, receive 1 and change 0 of account 0 of the test
	// mnemonic, from the published vectors of BIP44, BIP49, BIP84 and
	// BIP86, watched through descriptors (multipath, or Bitcoin Core's
	// /0/* and /1/* pair) and, for BIP86, through a taproot xpub.
	type want struct{ receive0, receive1, change0 string }
	vectors := map[uint32]want{
		purposeBIP44: {"1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", "1Ak8PffB2meyfYnbXZR9EGfLfFZVpzJvQP", "1J3J6EvPrv8q6AC3VCjWV45Uf3nssNMRtH"},
		purposeBIP49: {"37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf", "3LtMnn87fqUeHBUG414p9CWwnoV6E2pNKS", "34K56kSjgUCUSD8GTtuF7c9Zzwokbs6uZ7"},
		purposeBIP84: {"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g", "bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el"},
		purposeBIP86: {"bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr", "bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh", "bc1p3qkhfews2uk44qtvauqyr2ttdsw7svhkl9nkm9s9c3x4ax5h60wqwruhk7"},
	}
	funcs := map[uint32]struct {
		open, close string
		kind        Kind
	}{
		purposeBIP44: {"pkh(", ")", KindP2PKH},
		purposeBIP49: {"sh(wpkh(", "))", KindP2SHP2WPKH},
		purposeBIP84: {"wpkh(", ")", KindP2WPKH},
		purposeBIP86: {"tr(", ")", KindP2TR},
	}
	type tcase struct {
		name    string
		purpose uint32
		cfg     func(key string) CreateConfig
	}
	var tests []tcase
	for _, purpose := range []uint32{purposeBIP44, purposeBIP49, purposeBIP84, purposeBIP86} {
		f := funcs[purpose]
		tests = append(tests,
			tcase{fmt.Sprintf("BIP%d multipath", purpose), purpose, func(key string) CreateConfig {
				return CreateConfig{Network: "mainnet", Descriptors: []string{f.open + originKey(t, purpose, 0, key) + "/<0;1>/*" + f.close}}
			}},
			tcase{fmt.Sprintf("BIP%d receive and change pair", purpose), purpose, func(key string) CreateConfig {
				return CreateConfig{Network: "mainnet", Descriptors: []string{
					f.open + originKey(t, purpose, 0, key) + "/0/*" + f.close,
					f.open + originKey(t, purpose, 0, key) + "/1/*" + f.close,
				}}
			}})
	}
	tests = append(tests, tcase{"BIP86 taproot xpub", purposeBIP86, func(key string) CreateConfig {
		return CreateConfig{Network: "mainnet", TaprootXpubs: []string{key}}
	}})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key := accountXpub(t, tc.purpose, 0, versionXpub)
			w, err := Create(t.TempDir(), tc.cfg(key))
			require.NoError(t, err)
			defer w.Close()
			kind := funcs[tc.purpose].kind
			got := addressesOf(t, w)
			v := vectors[tc.purpose]
			for path, addr := range map[string]string{"0/0": v.receive0, "0/1": v.receive1, "1/0": v.change0} {
				a, ok := got[string(kind)+"/"+path]
				require.True(t, ok, "no %s address %s", kind, path)
				require.Equal(t, addr, a.Address, path)
				require.Equal(t, fmt.Sprintf("m/%d'/0'/0'/%s", tc.purpose, path), a.Path)
			}
			require.Equal(t, testGapExternal, branchCount(t, w, kind, 0))
			require.Equal(t, testGapInternal, branchCount(t, w, kind, 1))
			accts, err := w.Accounts()
			require.NoError(t, err)
			require.Len(t, accts, 1, "one account holds both branches")
			require.Equal(t, kind, accts[0].Kind)
			require.Equal(t, fmt.Sprintf("m/%d'/0'", tc.purpose), accts[0].Scope)
			descs, err := w.Descriptors()
			require.NoError(t, err)
			for _, d := range descs {
				require.Equal(t, accts[0].Account, d.Account)
				require.Equal(t, accts[0].Scope, d.Scope)
			}
			if len(descs) > 0 {
				require.Equal(t, descs[0].Checksum, got[string(kind)+"/0/0"].Descriptor)
				require.Equal(t, descs[len(descs)-1].Checksum, got[string(kind)+"/1/0"].Descriptor)
			}
		})
	}
}

func TestTaprootElementIsWitnessProgram(t *testing.T) {
	// The filter element of a P2TR address is its 32-byte witness
	// program, the push a BIP37 server finds in the output script (BIP86
	// vector: output key of m/86'/0'/0'/0/0).
	w, err := Create(t.TempDir(), CreateConfig{Network: "mainnet", TaprootXpubs: []string{vectorXpub86}})
	require.NoError(t, err)
	defer w.Close()
	a := addressesOf(t, w)["p2tr/0/0"]
	require.Equal(t, "a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c", a.Element)
	els, err := w.FilterElements()
	require.NoError(t, err)
	want, _ := hex.DecodeString(a.Element)
	require.Contains(t, els.Data, want)
	require.Len(t, els.Data, testGapExternal+testGapInternal)
}

func TestDescriptorShapes(t *testing.T) {
	key84 := tpub(t, purposeBIP84)
	keys := newTestKeys(t, purposeBIP84, regtestCoin, &chaincfg.RegressionNetParams)

	t.Run("receive only, then change", func(t *testing.T) {
		w, err := Create(t.TempDir(), CreateConfig{Network: descriptorTestNetwork, Descriptors: []string{"wpkh(" + key84 + "/0/*)"}})
		require.NoError(t, err)
		defer w.Close()
		require.Equal(t, testGapExternal, branchCount(t, w, KindP2WPKH, 0))
		require.Zero(t, branchCount(t, w, KindP2WPKH, 1), "a /0/* descriptor watches no change address")
		info, err := w.AddDescriptor("wpkh(" + key84 + "/1/*)")
		require.NoError(t, err)
		require.Equal(t, []uint32{1}, info.Branches)
		require.False(t, info.Rescan)
		require.Equal(t, testGapInternal, branchCount(t, w, KindP2WPKH, 1))
		accts, err := w.Accounts()
		require.NoError(t, err)
		require.Len(t, accts, 1)
		// Both branches are watched now: the multipath form and the
		// xpub of the same account add nothing.
		_, err = w.AddDescriptor("wpkh(" + key84 + "/<0;1>/*)")
		require.ErrorIs(t, err, ErrDuplicate)
		requireInputError(t, err)
		_, err = w.AddXpub(accountXpub(t, purposeBIP84, regtestCoin, versionVpub))
		require.ErrorIs(t, err, ErrDuplicate)
		descs, err := w.Descriptors()
		require.NoError(t, err)
		require.Len(t, descs, 2)
		got := addressesOf(t, w)
		require.Equal(t, descs[0].Checksum, got["p2wpkh/0/0"].Descriptor)
		require.Equal(t, descs[1].Checksum, got["p2wpkh/1/0"].Descriptor)
	})

	t.Run("receive only, then multipath", func(t *testing.T) {
		// The multipath descriptor adds the change branch; the receive
		// branch stays the first descriptor's.
		w, err := Create(t.TempDir(), CreateConfig{Network: descriptorTestNetwork, Descriptors: []string{
			"wpkh(" + key84 + "/0/*)", "wpkh(" + key84 + "/<0;1>/*)"}})
		require.NoError(t, err)
		defer w.Close()
		descs, err := w.Descriptors()
		require.NoError(t, err)
		require.Len(t, descs, 2)
		require.Equal(t, descs[0].Account, descs[1].Account)
		got := addressesOf(t, w)
		require.Equal(t, descs[0].Checksum, got["p2wpkh/0/0"].Descriptor)
		require.Equal(t, descs[1].Checksum, got["p2wpkh/1/0"].Descriptor)
		require.Equal(t, testGapInternal, branchCount(t, w, KindP2WPKH, 1))
	})

	t.Run("steps before the branch", func(t *testing.T) {
		// wpkh(K/7/<0;1>/*): the account key is K/7.
		w, err := Create(t.TempDir(), CreateConfig{Network: descriptorTestNetwork, Descriptors: []string{"wpkh(" + key84 + "/7/<0;1>/*)"}})
		require.NoError(t, err)
		defer w.Close()
		k7, err := keys.acct.Derive(7)
		require.NoError(t, err)
		sub := &testKeys{t: t, acct: k7, params: keys.params}
		got := addressesOf(t, w)
		for _, br := range []uint32{0, 1} {
			a := got[fmt.Sprintf("p2wpkh/%d/0", br)]
			s, err := hex.DecodeString(a.Element)
			require.NoError(t, err)
			require.Equal(t, sub.p2wpkh(br, 0)[2:], s)
		}
	})

	t.Run("non-ranged", func(t *testing.T) {
		pub := "03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd"
		descs := []string{
			"wpkh(" + key84 + "/0/5)",
			"wpkh(" + key84 + "/<0;1>/7)",
			"pkh(" + bip380Unc + ")",
			"tr(" + pub + ")",
			"addr(" + p2wshAddress(t) + ")",
			"raw(a914aa6b2f9b6d6f5d4fd0d7e3d5d4e0e1a1b2c3d4e587)",
		}
		w, err := Create(t.TempDir(), CreateConfig{Network: descriptorTestNetwork, Descriptors: descs})
		require.NoError(t, err)
		defer w.Close()
		got, err := w.Descriptors()
		require.NoError(t, err)
		require.Len(t, got, len(descs))
		wantScripts := [][]byte{keys.p2wpkh(0, 5), keys.p2wpkh(0, 7), keys.p2wpkh(1, 7)}
		require.Equal(t, []string{hex.EncodeToString(wantScripts[0])}, got[0].Scripts)
		require.Equal(t, []string{hex.EncodeToString(wantScripts[1]), hex.EncodeToString(wantScripts[2])}, got[1].Scripts)
		require.Len(t, got[1].Expanded, 2)
		require.Equal(t, KindP2PKH, got[2].Kind)
		require.Equal(t, KindP2TR, got[3].Kind)
		require.Equal(t, KindP2WSH, got[4].Kind)
		require.Equal(t, KindP2SH, got[5].Kind)
		infos, err := w.Addresses()
		require.NoError(t, err)
		require.Len(t, infos, 7)
		owner := map[string]string{}
		for _, a := range infos {
			require.True(t, a.Imported)
			owner[a.Address] = a.Descriptor
		}
		for _, d := range got {
			for _, addr := range d.Addresses {
				require.Equal(t, d.Checksum, owner[addr])
			}
		}
		_, err = w.AddAddress(got[0].Addresses[0])
		require.ErrorIs(t, err, ErrDuplicate)
	})
}

func TestDescriptorRefusals(t *testing.T) {
	key84 := tpub(t, purposeBIP84)
	priv, err := accountPriv(t, purposeBIP84, regtestCoin).CloneWithVersion(binary.BigEndian.AppendUint32(nil, versionTprv))
	require.NoError(t, err)
	tprv := priv.String()
	good := "wpkh(" + key84 + "/<0;1>/*)"
	goodSum, err := descriptor.Checksum(good)
	require.NoError(t, err)
	badSum := "qqqqqqqq"
	if goodSum == badSum {
		badSum = "pppppppp"
	}
	tests := []struct {
		name, desc string
		wantErr    error
	}{
		{"wrong checksum", good + "#" + badSum, ErrDescriptorChecksum},
		{"checksum of 7 characters", good + "#" + goodSum[:7], ErrDescriptorChecksum},
		{"checksum with a character outside bech32", good + "#" + goodSum[:7] + "b", ErrDescriptorChecksum},
		{"tprv", "wpkh(" + tprv + "/<0;1>/*)", ErrPrivateKey},
		{"xprv", "wpkh(" + bip380Xprv + ")", ErrPrivateKey},
		{"WIF", "wpkh(" + bip380WIFC + ")", ErrPrivateKey},
		{"bare multi()", "multi(1," + bip380Pub + ")", ErrUnsupportedDescriptor},
		{"bare sortedmulti()", "sortedmulti(1," + bip380Pub + ")", ErrUnsupportedDescriptor},
		{"wsh(pkh())", "wsh(pkh(" + bip380Pub + "))", ErrUnsupportedDescriptor},
		{"wsh(wpkh())", "wsh(wpkh(" + bip380Pub + "))", ErrInvalidDescriptor},
		{"multi() threshold 0", "wsh(multi(0," + bip380Pub + "))", ErrInvalidDescriptor},
		{"multi() threshold above the keys", "wsh(multi(2," + bip380Pub + "))", ErrInvalidDescriptor},
		{"multi() threshold not a number", "wsh(multi(a," + bip380Pub + "))", ErrInvalidDescriptor},
		{"multi() without keys", "wsh(multi(1))", ErrInvalidDescriptor},
		{"uncompressed key in wsh(multi())", "wsh(multi(1," + bip380Unc + "))", ErrInvalidDescriptor},
		{"21 keys in wsh(multi())", "wsh(multi(1" + strings.Repeat(","+bip380Pub, 21) + "))", ErrInvalidDescriptor},
		{"16 keys in sh(multi())", "sh(multi(1" + strings.Repeat(","+bip380Pub, 16) + "))", ErrInvalidDescriptor},
		{"sh(multi()) redeem script above 520 bytes", "sh(multi(1" + strings.Repeat(","+bip380Unc, 8) + "))", ErrInvalidDescriptor},
		{"private key in multi()", "wsh(multi(1," + bip380Pub + "," + tprv + "/0/*))", ErrPrivateKey},
		{"hardened step in multi()", "wsh(multi(1," + key84 + "/0h/*))", ErrHardenedStep},
		{"multisig branches differ", "wsh(multi(1," + key84 + "/0/*," + key84 + "/1/*))", ErrUnsupportedDescriptor},
		{"multisig wildcard alone", "wsh(multi(1," + key84 + "/*))", ErrUnsupportedDescriptor},
		{"multisig multipath before the branch", "wsh(multi(1," + key84 + "/<0;1>/0/*))", ErrUnsupportedDescriptor},
		{"combo()", "combo(" + bip380Pub + ")", ErrUnsupportedDescriptor},
		{"pk()", "pk(" + bip380Pub + ")", ErrUnsupportedDescriptor},
		{"sh(pkh())", "sh(pkh(" + bip380Pub + "))", ErrUnsupportedDescriptor},
		{"rawtr()", "rawtr(" + bip380Pub + ")", ErrUnsupportedDescriptor},
		{"tr() with a script tree", "tr(" + key84 + "/0/*,pk(" + bip380Pub + "))", ErrUnsupportedDescriptor},
		{"tr() with a braced script tree", "tr(" + key84 + "/0/*,{pk(" + bip380Pub + "),pk(" + bip380Pub + ")})", ErrUnsupportedDescriptor},
		{"unknown function", "foo(" + bip380Pub + ")", ErrInvalidDescriptor},
		{"hardened step after a tpub", "wpkh(" + key84 + "/0h/*)", ErrHardenedStep},
		{"hardened step written with '", "wpkh(" + key84 + "/0'/*)", ErrHardenedStep},
		{"hardened multipath step", "wpkh(" + key84 + "/<0h;1h>/*)", ErrHardenedStep},
		{"hardened wildcard", "wpkh(" + key84 + "/0/*h)", ErrHardenedStep},
		{"mainnet xpub on regtest", "wpkh(" + accountXpub(t, purposeBIP84, 0, versionXpub) + "/0/*)", ErrWrongNetwork},
		{"mainnet address on regtest", "addr(bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu)", ErrWrongNetwork},
		{"SLIP-132 vpub in a descriptor", "wpkh(" + accountXpub(t, purposeBIP84, regtestCoin, versionVpub) + "/0/*)", ErrInvalidKey},
		{"bad extended key checksum", "wpkh(" + corruptLast(key84) + "/0/*)", ErrInvalidKey},
		{"not a key", "wpkh(hello)", ErrInvalidKey},
		{"uncompressed key in wpkh()", "wpkh(" + bip380Unc + ")", ErrInvalidDescriptor},
		{"x-only key in wpkh()", "wpkh(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)", ErrInvalidDescriptor},
		{"uncompressed key in tr()", "tr(" + bip380Unc + ")", ErrInvalidDescriptor},
		{"hex key not on the curve", "wpkh(02" + strings.Repeat("00", 32) + ")", ErrInvalidKey},
		{"wildcard alone", "wpkh(" + key84 + "/*)", ErrUnsupportedDescriptor},
		{"branch step 2", "wpkh(" + key84 + "/2/*)", ErrUnsupportedDescriptor},
		{"multipath change first", "wpkh(" + key84 + "/<1;0>/*)", ErrUnsupportedDescriptor},
		{"three-way multipath", "wpkh(" + key84 + "/<0;1;2>/*)", ErrUnsupportedDescriptor},
		{"multipath before the branch", "wpkh(" + key84 + "/<0;1>/0/*)", ErrUnsupportedDescriptor},
		{"unmatchable raw script", "raw(51)", ErrUnmatchableScript},
		{"odd hex in raw()", "raw(0)", ErrInvalidDescriptor},
		{"empty", "", ErrInvalidDescriptor},
		{"checksum only", "#" + goodSum, ErrInvalidDescriptor},
		{"unclosed", "wpkh(" + key84 + "/0/*", ErrInvalidDescriptor},
		{"trailing text", good + "x", ErrInvalidDescriptor},
		{"upper-case function", "WPKH(" + key84 + "/0/*)", ErrInvalidDescriptor},
		{"no key", "wpkh()", ErrInvalidDescriptor},
		{"two keys", "wpkh(" + bip380Pub + "," + bip380Pub + ")", ErrInvalidDescriptor},
		{"character outside the descriptor set", "wpkh(é)", ErrInvalidDescriptor},
	}
	w, err := Create(t.TempDir(), CreateConfig{Network: descriptorTestNetwork, Xpubs: []string{accountXpub(t, purposeBIP44, regtestCoin, versionTpub)}})
	require.NoError(t, err)
	defer w.Close()
	before, err := w.Addresses()
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDescriptor(tc.desc, descriptorTestNetwork)
			require.ErrorIs(t, err, tc.wantErr)
			requireInputError(t, err)
			if tc.wantErr == ErrPrivateKey {
				require.NotContains(t, err.Error(), tc.desc[5:20], "a private key is not repeated")
			}

			dir := filepath.Join(t.TempDir(), "w")
			_, err = Create(dir, CreateConfig{Network: descriptorTestNetwork, Descriptors: []string{tc.desc}})
			require.ErrorIs(t, err, tc.wantErr)
			require.False(t, Exists(dir))
			require.NoDirExists(t, dir, "a refused creation writes nothing")

			_, err = w.AddDescriptor(tc.desc)
			require.ErrorIs(t, err, tc.wantErr)
			after, err := w.Addresses()
			require.NoError(t, err)
			require.Equal(t, before, after)
			descs, err := w.Descriptors()
			require.NoError(t, err)
			require.Empty(t, descs)
		})
	}
	_, err = ParseDescriptor(good, "moonnet")
	require.ErrorIs(t, err, ErrUnknownNetwork)
}

func TestCreateWithDuplicateDescriptorsWritesNothing(t *testing.T) {
	key84 := tpub(t, purposeBIP84)
	tests := []struct {
		name string
		cfg  CreateConfig
	}{
		{"same descriptor twice", CreateConfig{Descriptors: []string{"wpkh(" + key84 + "/0/*)", "wpkh(" + key84 + "/0/*)"}}},
		{"multipath then a branch of it", CreateConfig{Descriptors: []string{"wpkh(" + key84 + "/<0;1>/*)", "wpkh(" + key84 + "/1/*)"}}},
		{"xpub then its descriptor", CreateConfig{Xpubs: []string{accountXpub(t, purposeBIP84, regtestCoin, versionVpub)},
			Descriptors: []string{"wpkh(" + key84 + "/<0;1>/*)"}}},
		{"taproot xpub then its descriptor", CreateConfig{TaprootXpubs: []string{tpub(t, purposeBIP86)},
			Descriptors: []string{"tr(" + tpub(t, purposeBIP86) + "/0/*)"}}},
		{"address then addr()", CreateConfig{Addresses: []string{p2wshAddress(t)},
			Descriptors: []string{"addr(" + p2wshAddress(t) + ")"}}},
		{"non-ranged twice", CreateConfig{Descriptors: []string{"wpkh(" + key84 + "/0/3)", "wpkh(" + key84 + "/0/3)"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			tc.cfg.Network = descriptorTestNetwork
			_, err := Create(dir, tc.cfg)
			require.ErrorIs(t, err, ErrDuplicate)
			require.NoDirExists(t, dir)
		})
	}
}

func TestTaprootXpubRefusesSLIP132(t *testing.T) {
	_, err := Create(t.TempDir(), CreateConfig{Network: descriptorTestNetwork,
		TaprootXpubs: []string{accountXpub(t, purposeBIP84, regtestCoin, versionVpub)}})
	require.ErrorIs(t, err, ErrInvalidKey)
	w, err := Create(t.TempDir(), CreateConfig{Network: "mainnet"})
	require.NoError(t, err)
	defer w.Close()
	_, err = w.AddTaprootXpub(vectorZpub84)
	require.ErrorIs(t, err, ErrInvalidKey)
	_, err = w.AddTaprootXpub(vectorZprv84)
	require.ErrorIs(t, err, ErrPrivateKey)
	info, err := w.AddTaprootXpub(vectorXpub86)
	require.NoError(t, err)
	require.Equal(t, KindP2TR, info.Kind)
	require.Equal(t, "m/86'/0'", info.Scope)
}

// p2wshAddress returns a regtest P2WSH address nobody in the tests pays.
func p2wshAddress(t testing.TB) string {
	t.Helper()
	h := sha256.Sum256([]byte("bloomwatch descriptor test"))
	a, err := btcutil.NewAddressWitnessScriptHash(h[:], &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	return a.EncodeAddress()
}

// corruptLast changes the last character of a base58 string.
func corruptLast(s string) string {
	c := byte('2')
	if s[len(s)-1] == c {
		c = '3'
	}
	return s[:len(s)-1] + string(c)
}

// descWallet is a regtest wallet watching tr() and wpkh() multipath
// descriptors of the test mnemonic.
func descWallet(t *testing.T, dir string) (*Wallet, []string) {
	t.Helper()
	descs := []string{
		"tr(" + originKey(t, purposeBIP86, regtestCoin, tpub(t, purposeBIP86)) + "/<0;1>/*)",
		"wpkh(" + originKey(t, purposeBIP84, regtestCoin, tpub(t, purposeBIP84)) + "/<0;1>/*)",
	}
	w, err := Create(dir, CreateConfig{Network: descriptorTestNetwork, Descriptors: descs})
	require.NoError(t, err)
	return w, descs
}

func TestDescriptorWalletSyncsGrowsAndRollsBack(t *testing.T) {
	dir := t.TempDir()
	w, descs := descWallet(t, dir)
	defer func() { _ = w.Close() }()
	k86 := newTestKeys(t, purposeBIP86, regtestCoin, &chaincfg.RegressionNetParams)
	k84 := newTestKeys(t, purposeBIP84, regtestCoin, &chaincfg.RegressionNetParams)
	f := &txFactory{}
	chain := newTestChain(f, 100)

	// Block 100: pays the last watched taproot receive address and the
	// last watched P2WPKH change address: both branches grow by a gap
	// (through index + gap; no reserve).
	payTR := f.tx(nil, output{k86.p2tr(extBranch, testGapExternal-1), 50_000}, output{foreignScript(1), 1_000})
	payWPKH := f.tx(nil, output{k84.p2wpkh(intBranch, testGapInternal-1), 20_000})
	b1 := chain.add(payTR, payWPKH)
	res := mustApply(t, w, b1.filtered())
	require.True(t, res.Delta.Added())
	require.Len(t, res.Delta.Data, testGapExternal+testGapInternal, "both branches grew by a gap")
	require.ElementsMatch(t, res.Relevant, []chainhash.Hash{payTR.TxHash(), payWPKH.TxHash()})
	require.Equal(t, testGapExternal-1+testGapExternal+1, branchCount(t, w, KindP2TR, 0))
	require.Equal(t, testGapInternal, branchCount(t, w, KindP2TR, 1))
	require.Equal(t, testGapExternal, branchCount(t, w, KindP2WPKH, 0))
	require.Equal(t, testGapInternal-1+testGapInternal+1, branchCount(t, w, KindP2WPKH, 1))
	els, err := w.FilterElements()
	require.NoError(t, err)
	require.Contains(t, els.OutPoints, op(payTR, 0))

	// Block 101: spends the P2TR output (matched by its outpoint: the
	// witness is never read) to a foreign script with change to the
	// first taproot change address.
	spend := f.tx([]wire.OutPoint{op(payTR, 0)}, output{foreignScript(2), 30_000}, output{k86.p2tr(intBranch, 0), 19_000})
	b2 := chain.add(spend)
	res = mustApply(t, w, b2.filtered())
	require.Contains(t, res.Relevant, spend.TxHash())
	require.Equal(t, int64(19_000-50_000), res.Amounts[spend.TxHash()])
	require.Equal(t, btcutil.Amount(20_000+19_000), mustBalance(t, w).Confirmed)
	els, err = w.FilterElements()
	require.NoError(t, err)
	require.NotContains(t, els.OutPoints, op(payTR, 0))
	require.Contains(t, els.OutPoints, op(spend, 1))
	used := addressesOf(t, w)
	require.True(t, used[fmt.Sprintf("p2tr/0/%d", testGapExternal-1)].Used)
	require.True(t, used["p2tr/1/0"].Used)
	require.True(t, used[fmt.Sprintf("p2wpkh/1/%d", testGapInternal-1)].Used)
	require.NoError(t, w.Flush())

	// Reopen: descriptors, derived addresses and balance persist.
	beforeAddrs, err := w.Addresses()
	require.NoError(t, err)
	beforeDescs, err := w.Descriptors()
	require.NoError(t, err)
	require.Len(t, beforeDescs, 2)
	for i, d := range beforeDescs {
		body, _, _ := cutChecksum(d.Descriptor)
		require.Equal(t, descs[i], body)
		require.Equal(t, []uint32{0, 1}, d.Branches)
	}
	require.NoError(t, w.Close())
	w, err = Open(dir)
	require.NoError(t, err)
	afterAddrs, err := w.Addresses()
	require.NoError(t, err)
	require.Equal(t, beforeAddrs, afterAddrs)
	afterDescs, err := w.Descriptors()
	require.NoError(t, err)
	require.Equal(t, beforeDescs, afterDescs)
	require.Equal(t, btcutil.Amount(39_000), mustBalance(t, w).Confirmed)

	// Rollback of the spend's block: the spend goes back to the
	// unconfirmed set, the taproot outpoint stays watched.
	_, err = w.Rollback(b1.height)
	require.NoError(t, err)
	txs, err := w.Txs()
	require.NoError(t, err)
	heights := map[string]int32{}
	for _, s := range txs {
		heights[s.Txid.String()] = s.Height
	}
	require.Equal(t, int32(-1), heights[spend.TxHash().String()])
	require.Equal(t, b1.height, heights[payTR.TxHash().String()])
	els, err = w.FilterElements()
	require.NoError(t, err)
	require.Contains(t, els.OutPoints, op(payTR, 0))
	require.NoError(t, w.Close())
}

func TestAddDescriptorRescansSyncedWallet(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 10)
	mustApply(t, w, chain.add(f.tx(nil, output{keys.p2wpkh(extBranch, 0), 5_000})).filtered())
	info, err := w.AddDescriptor("tr(" + tpub(t, purposeBIP86) + "/<0;1>/*)")
	require.NoError(t, err)
	require.True(t, info.Rescan)
	sp, err := w.SyncedTo()
	require.NoError(t, err)
	require.Equal(t, int32(-1), sp.Height)
	descs, err := w.Descriptors()
	require.NoError(t, err)
	require.Len(t, descs, 1)
	require.Equal(t, info.Descriptor, descs[0].Descriptor)
	require.Equal(t, info.Checksum, descs[0].Checksum)
}

func TestDescriptorRecordRoundTrip(t *testing.T) {
	recs := []*descriptorRecord{
		{desc: "tr(x/<0;1>/*)#abcdefgh", kind: KindP2TR, ranged: true, account: 3, branches: []uint32{0, 1}, path: "m/86'/1'/0'"},
		{desc: "raw(0014aa)#abcdefgh", kind: KindP2WPKH, scripts: [][]byte{{0x00, 0x14}, {0x51}}},
	}
	for _, r := range recs {
		r.scope.Purpose, r.scope.Coin = 86, 1
		b := r.encode()
		got, err := decodeDescriptorRecord(b)
		require.NoError(t, err)
		if !r.ranged {
			got.scope = r.scope
		}
		require.Equal(t, r, got)
		for n := range len(b) {
			_, err := decodeDescriptorRecord(b[:n])
			require.ErrorIs(t, err, ErrCorrupt, "truncated at %d", n)
		}
		_, err = decodeDescriptorRecord(append(b, 0))
		require.ErrorIs(t, err, ErrCorrupt)
	}
}
