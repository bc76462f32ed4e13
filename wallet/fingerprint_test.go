package wallet

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// Test vectors written by implementations outside this project: the
// PSBT BIP174's updater must create (its derivations name the master key
// d90c6a4f), and BIP371's valid "P2TR key only input with internal key and
// its derivation path" (master key 772b2da7).
const (
	bip174Updater = "cHNidP8BAJoCAAAAAljoeiG1ba8MI76OcHBFbDNvfLqlyHV5JPVFiHuyq911AAAAAAD/////g40EJ9DsZQpoqka7CwmK6kQiwHGyyng1Kgd5WdB86h0BAAAAAP////8CcKrwCAAAAAAWABTYXCtx0AYLCcmIauuBXlCZHdoSTQDh9QUAAAAAFgAUAK6pouXw+HaliN9VRuh0LR2HAI8AAAAAAAEAuwIAAAABqtc5MQGL0l+ErkALaISL4J23BurCrBgpi6vucatlb4sAAAAASEcwRAIgWPb8fGoz4bMVSNSByCbAFb0wE1qtQs1neQ2rZtKtJDsCIEoc7SYExnNbY5PltBaR3XiwDwxZQvufdRhW+qk4FX26Af7///8CgPD6AgAAAAAXqRQPuUY0IWlrgsgzryQceMF9295JNIfQ8gonAQAAABepFCnKdPigj4GZlCgYXJe12FLkBj9hh2UAAAABBEdSIQKVg785rgpgl0etGZrd1jT6YQhVnWxc05tMIYPxq5bgfyEC2rYf9JoU22p9ArDNH7t4/EsYMStbTlTa5Nui+/71NtdSriIGApWDvzmuCmCXR60Zmt3WNPphCFWdbFzTm0whg/GrluB/ENkMak8AAACAAAAAgAAAAIAiBgLath/0mhTban0CsM0fu3j8SxgxK1tOVNrk26L7/vU21xDZDGpPAAAAgAAAAIABAACAAAEBIADC6wsAAAAAF6kUt/X69A49QKWkWbHbNTXyty+pIeiHAQQiACCMI1MXN0O1ld+0oHtyuo5C43l9p06H/n2ddJfjsgKJAwEFR1IhAwidwQx6xttU+RMpr2FzM9s4jOrQwjH3IzedG5kDCwLcIQI63ZBPPW3PWd25BrDe4jUpt/+57VDl6GFRkmhgIh8Oc1KuIgYCOt2QTz1tz1nduQaw3uI1Kbf/ue1Q5ehhUZJoYCIfDnMQ2QxqTwAAAIAAAACAAwAAgCIGAwidwQx6xttU+RMpr2FzM9s4jOrQwjH3IzedG5kDCwLcENkMak8AAACAAAAAgAIAAIAAIgIDqaTDf1mW06ol26xrVwrwZQOUSSlCRgs1R1Ptnuylh3EQ2QxqTwAAAIAAAACABAAAgAAiAgJ/Y5l1fS7/VaE2rQLGhLGDi2VW5fG2s0KCqUtrUAUQlhDZDGpPAAAAgAAAAIAFAACAAA=="
	bip371KeyPath = "cHNidP8BAFICAAAAASd0Srq/MCf+DWzyOpbu4u+xiO9SMBlUWFiD5ptmJLJCAAAAAAD/////AUjmBSoBAAAAFgAUdo4e60z0IIZgM/gKzv8PlyB0SWkAAAAAAAEBKwDyBSoBAAAAIlEgWiws9bUs8x+DrS6Npj/wMYPs2PYJx1EK6KSOA5EKB1chFv40kGTJjW4qhT+jybEr2LMEoZwZXGDvp+4jkwRtP6IyGQB3Ky2nVgAAgAEAAIAAAACAAQAAAAAAAAABFyD+NJBkyY1uKoU/o8mxK9izBKGcGVxg76fuI5MEbT+iMgAiAgNrdyptt02HU8mKgnlY3mx4qzMSEJ830+AwRIQkLs5z2Bh3Ky2nVAAAgAEAAIAAAACAAAAAAAAAAAAA"
)

// psbtRecord returns the key-value record of the given type and key data
// in a serialized PSBT (BIP174: <keylen><keytype><keydata><valuelen>
// <value>, every length below 0xfd here), or nil.
func psbtRecord(raw []byte, keyType byte, keyData []byte) []byte {
	key := append([]byte{byte(1 + len(keyData)), keyType}, keyData...)
	i := bytes.Index(raw, key)
	if i < 0 || i+len(key) >= len(raw) {
		return nil
	}
	end := i + len(key) + 1 + int(raw[i+len(key)])
	if end > len(raw) {
		return nil
	}
	return raw[i:end]
}

// withKeyType returns record with its key type replaced (an output's
// derivation record read as an input's: the value format is the same).
func withKeyType(record []byte, keyType byte) []byte {
	out := append([]byte(nil), record...)
	out[1] = keyType
	return out
}

// sweepVector creates a wallet watching desc, pays script, which the
// vector says desc's key controls, and returns the serialized PSBT that
// sweeps it.
func sweepVector(t *testing.T, desc string, script []byte) []byte {
	t.Helper()
	w, err := Create(t.TempDir(), CreateConfig{Network: "regtest", Descriptors: []string{desc}})
	require.NoError(t, err)
	defer w.Close()
	f := &txFactory{}
	chain := newTestChain(f, 700)
	mustApply(t, w, chain.add(f.tx(nil, output{script, 1_000_000})).filtered())
	require.Equal(t, btcutil.Amount(1_000_000), mustBalance(t, w).Confirmed, "%s watches the vector's script %x", desc, script)
	res, err := w.CreatePSBT(PSBTRequest{SweepTo: addressOf(t, foreignScript(7)), FeeRate: 2})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, res.Packet.Serialize(&buf))
	return buf.Bytes()
}

// TestPSBTFingerprintsMatchBIPVectors builds PSBTs for the keys of
// BIP174's and BIP371's test vectors, given as descriptors with the key
// origins the vectors name, and requires each derivation record the wallet
// writes to be byte for byte the record the vector holds for that key: the
// fingerprint as the first four bytes of HASH160 of the master public
// key, in order, then the path.
func TestPSBTFingerprintsMatchBIPVectors(t *testing.T) {
	decode := func(b64 string) ([]byte, *psbt.Packet) {
		raw, err := base64.StdEncoding.DecodeString(b64)
		require.NoError(t, err)
		p, err := psbt.NewFromRawBytes(bytes.NewReader(raw), false)
		require.NoError(t, err)
		return raw, p
	}
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		require.NoError(t, err)
		return b
	}
	v174, p174 := decode(bip174Updater)
	v371, p371 := decode(bip371KeyPath)
	const (
		inBip32  = 0x06 // PSBT_IN_BIP32_DERIVATION
		outBip32 = 0x02 // PSBT_OUT_BIP32_DERIVATION
		inTap    = 0x16 // PSBT_IN_TAP_BIP32_DERIVATION
	)
	// BIP174's keys m/0'/0'/0'..5' of master d90c6a4f.
	k0, k1 := "029583bf39ae0a609747ad199addd634fa6108559d6c5cd39b4c2183f1ab96e07f", "02dab61ff49a14db6a7d02b0cd1fbb78fc4b18312b5b4e54dae4dba2fbfef536d7"
	k2, k3 := "03089dc10c7ac6db54f91329af617333db388cead0c231f723379d1b99030b02dc", "023add904f3d6dcf59ddb906b0dee23529b7ffb9ed50e5e86151926860221f0e73"
	k4 := "03a9a4c37f5996d3aa25dbac6b570af0650394492942460b354753ed9eeca58771"
	// BIP371's P2TR internal key at m/86'/1'/0'/1/0 and P2WPKH key at
	// m/84'/1'/0'/0/0 of master 772b2da7.
	tapKey, wpkhKey := "fe349064c98d6e2a853fa3c9b12bd8b304a19c195c60efa7ee2393046d3fa232", "036b772a6db74d8753c98a827958de6c78ab3312109f37d3e0304484242ece73d8"
	in0 := p174.Inputs[0].NonWitnessUtxo.TxOut[p174.UnsignedTx.TxIn[0].PreviousOutPoint.Index].PkScript
	cases := []struct {
		name   string
		desc   string
		script []byte
		want   [][]byte // records our PSBT must hold
	}{
		{"BIP174 P2WPKH output key as an input", "wpkh([d90c6a4f/0h/0h/4h]" + k4 + ")", p174.UnsignedTx.TxOut[0].PkScript,
			[][]byte{withKeyType(psbtRecord(v174, outBip32, unhex(k4)), inBip32)}},
		{"BIP174 P2SH 2-of-2 input", "sh(multi(2,[d90c6a4f/0h/0h/0h]" + k0 + ",[d90c6a4f/0h/0h/1h]" + k1 + "))", in0,
			[][]byte{psbtRecord(v174, inBip32, unhex(k0)), psbtRecord(v174, inBip32, unhex(k1))}},
		{"BIP174 P2SH-P2WSH 2-of-2 input", "sh(wsh(multi(2,[d90c6a4f/0h/0h/2h]" + k2 + ",[d90c6a4f/0h/0h/3h]" + k3 + ")))",
			p174.Inputs[1].WitnessUtxo.PkScript,
			[][]byte{psbtRecord(v174, inBip32, unhex(k2)), psbtRecord(v174, inBip32, unhex(k3))}},
		{"BIP371 P2TR key-path input", "tr([772b2da7/86h/1h/0h/1/0]" + tapKey + ")", p371.Inputs[0].WitnessUtxo.PkScript,
			[][]byte{psbtRecord(v371, inTap, unhex(tapKey))}},
		{"BIP371 P2WPKH output key as an input", "wpkh([772b2da7/84h/1h/0h/0/0]" + wpkhKey + ")", p371.UnsignedTx.TxOut[0].PkScript,
			[][]byte{withKeyType(psbtRecord(v371, outBip32, unhex(wpkhKey)), inBip32)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, rec := range tc.want {
				require.NotNil(t, rec, "the vector holds the record")
			}
			ours := sweepVector(t, tc.desc, tc.script)
			for _, rec := range tc.want {
				require.True(t, bytes.Contains(ours, rec), "our PSBT lacks the vector's record %x", rec)
			}
		})
	}
}

// electrumDeserialize returns what Electrum's own PSBT parser reads from
// a PSBT (electrum deserialize, offline): per input and output, the
// BIP32 paths by public key as [fingerprint hex, path].
func electrumDeserialize(t *testing.T, b64 string) (ins, outs []map[string][2]string) {
	t.Helper()
	bin, err := exec.LookPath("electrum")
	if err != nil {
		t.Skip("electrum is not installed (Debian's electrum package): no outside PSBT parser to check against")
	}
	cmd := exec.Command(bin, "--regtest", "--offline", "-D", t.TempDir(), "deserialize", b64)
	out, err := cmd.Output()
	require.NoError(t, err, "electrum deserialize: %s", out)
	var doc struct {
		Inputs, Outputs []struct {
			Paths map[string][2]string `json:"bip32_paths"`
		}
	}
	require.NoError(t, json.Unmarshal(out, &doc), "%s", out)
	for _, in := range doc.Inputs {
		ins = append(ins, in.Paths)
	}
	for _, o := range doc.Outputs {
		outs = append(outs, o.Paths)
	}
	return ins, outs
}

// TestPSBTFingerprintsReadByElectrum has Electrum's PSBT parser read the
// wallet's PSBTs: for a descriptor with a key origin every input's and the
// change output's derivation must name the origin's fingerprint as the
// descriptor writes it, and for a bare vpub the account key's own
// fingerprint (the first four bytes of HASH160 of its public key).
func TestPSBTFingerprintsReadByElectrum(t *testing.T) {
	k := psbtKeyring(t)
	origin := originKeyOf(t, k, 84)
	masterFP := origin[1:9]
	vpub, err := k.Xpub(84)
	require.NoError(t, err)
	ext, err := hdkeychain.NewKeyFromString(vpub)
	require.NoError(t, err)
	pub, err := ext.ECPubKey()
	require.NoError(t, err)
	ownFP := hex.EncodeToString(btcutil.Hash160(pub.SerializeCompressed())[:4])
	msig, err := k.MultisigDescriptor()
	require.NoError(t, err)
	cases := []struct {
		name string
		cfg  CreateConfig
		fps  []string // the fingerprints each derivation may name
		path string   // the path prefix of the first one
	}{
		{"wpkh() with key origin", CreateConfig{Descriptors: []string{"wpkh(" + origin + "/<0;1>/*)"}}, []string{masterFP}, "m/84'/1'/0'/"},
		{"vpub without origin", CreateConfig{Xpubs: []string{vpub}}, []string{ownFP}, "m/"},
		{"wsh(sortedmulti) 2 of 3", CreateConfig{Descriptors: []string{msig}}, msigFingerprints(t, msig), "m/48'/1'/0'/2'/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Network = "regtest"
			w, err := Create(t.TempDir(), tc.cfg)
			require.NoError(t, err)
			defer w.Close()
			f := &txFactory{}
			chain := newTestChain(f, 500)
			var pays []*wire.MsgTx
			for i, amt := range []int64{300_000, 80_000} {
				info, err := w.Receive(ReceiveOptions{})
				require.NoError(t, err)
				ws, err := parseAddress(info.Address, w.net.params)
				require.NoError(t, err)
				pays = append(pays, f.tx(nil, output{foreignScript(uint32(i)), 7_000}, output{ws.pkScript, amt}))
			}
			mustApply(t, w, chain.add(pays...).filtered())
			res, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{addressOf(t, foreignScript(99)), 350_000}}, FeeRate: 3})
			require.NoError(t, err)
			ins, outs := electrumDeserialize(t, res.Base64)
			require.Len(t, ins, len(res.Packet.Inputs))
			var named []map[string][2]string
			named = append(named, ins...)
			for i, o := range res.Outputs {
				if o.Change {
					named = append(named, outs[i])
				}
			}
			require.Len(t, named, len(ins)+1, "the inputs and the change output")
			for i, paths := range named {
				require.NotEmpty(t, paths, "record %d: electrum reads no BIP32 path", i)
				for key, fp := range paths {
					require.Contains(t, tc.fps, fp[0], "key %s: electrum reads fingerprint %s, path %s", key, fp[0], fp[1])
					require.True(t, strings.HasPrefix(fp[1], tc.path), "key %s: path %s", key, fp[1])
				}
			}
			// The keyring, signing by the same derivations, still finds
			// its keys.
			signAndVerify(t, k, res.Packet)
		})
	}
}

// msigFingerprints returns the key origin fingerprints of a multisig
// descriptor ("[fingerprint/...]" before each key), as it writes them.
func msigFingerprints(t *testing.T, desc string) []string {
	t.Helper()
	var out []string
	for _, part := range strings.Split(desc, "[")[1:] {
		fp, _, ok := strings.Cut(part, "/")
		require.True(t, ok, "origin in %q", desc)
		out = append(out, fp)
	}
	require.Len(t, out, testnet.MultisigCosigners, fmt.Sprintf("origins of %s", desc))
	return out
}
