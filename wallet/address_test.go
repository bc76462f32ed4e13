package wallet

import (
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// regtestAddresses returns a regtest address of every kind with its kind.
func regtestAddresses(t testing.TB) []struct {
	addr string
	kind Kind
} {
	t.Helper()
	params := &chaincfg.RegressionNetParams
	program := func(b byte, n int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = b + byte(i)
		}
		return p
	}
	wsh, err := btcutil.NewAddressWitnessScriptHash(program(0x10, 32), params)
	require.NoError(t, err)
	tr, err := btcutil.NewAddressTaproot(program(0x40, 32), params)
	require.NoError(t, err)
	sh, err := btcutil.NewAddressScriptHashFromHash(program(0x70, 20), params)
	require.NoError(t, err)
	wpkh, err := btcutil.NewAddressWitnessPubKeyHash(program(0x90, 20), params)
	require.NoError(t, err)
	return []struct {
		addr string
		kind Kind
	}{
		{"mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV", KindP2PKH}, // BIP44 account 1', not watched below
		{sh.EncodeAddress(), KindP2SH},
		{wpkh.EncodeAddress(), KindP2WPKH},
		{wsh.EncodeAddress(), KindP2WSH},
		{tr.EncodeAddress(), KindP2TR},
	}
}

func TestParseAddressKinds(t *testing.T) {
	for _, tc := range regtestAddresses(t) {
		t.Run(string(tc.kind), func(t *testing.T) {
			ws, err := parseAddress(tc.addr, &chaincfg.RegressionNetParams)
			require.NoError(t, err)
			require.Equal(t, tc.kind, ws.kind)
			require.Equal(t, tc.addr, ws.address)
			// The text a derived script encodes when shown is the
			// same address.
			bare := *ws
			bare.address = ""
			require.Equal(t, tc.addr, bare.addressOn(&chaincfg.RegressionNetParams))
			addr, err := btcutil.DecodeAddress(tc.addr, &chaincfg.RegressionNetParams)
			require.NoError(t, err)
			script, err := txscript.PayToAddrScript(addr)
			require.NoError(t, err)
			require.Equal(t, script, ws.pkScript)
			// The element is the script's only non-empty data push
			// (servers skip the empty push of OP_0).
			pushes, err := txscript.PushedData(script)
			require.NoError(t, err)
			var nonEmpty [][]byte
			for _, p := range pushes {
				if len(p) > 0 {
					nonEmpty = append(nonEmpty, p)
				}
			}
			require.Len(t, nonEmpty, 1)
			require.Equal(t, nonEmpty[0], ws.element)
		})
	}
}

func TestParseAddressRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		addr    string
		params  *chaincfg.Params
		wantErr error
	}{
		{"garbage", "hello", &chaincfg.RegressionNetParams, ErrInvalidAddress},
		{"empty", "", &chaincfg.RegressionNetParams, ErrInvalidAddress},
		{"bad bech32 checksum", "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppq", &chaincfg.RegressionNetParams, ErrInvalidAddress},
		{"bad base58 checksum", "mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJW", &chaincfg.RegressionNetParams, ErrInvalidAddress},
		{"mainnet bech32 on regtest", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", &chaincfg.RegressionNetParams, ErrWrongNetwork},
		{"testnet bech32 on regtest", "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", &chaincfg.RegressionNetParams, ErrWrongNetwork},
		{"regtest bech32 on mainnet", "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk", &chaincfg.MainNetParams, ErrWrongNetwork},
		{"mainnet base58 on regtest", "1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", &chaincfg.RegressionNetParams, ErrWrongNetwork},
		{"testnet base58 on mainnet", "mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV", &chaincfg.MainNetParams, ErrWrongNetwork},
		{"public key hex", "0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c", &chaincfg.MainNetParams, ErrInvalidAddress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseAddress(tc.addr, tc.params)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.wantErr)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
		})
	}
}

func TestParseScript(t *testing.T) {
	pub, _ := hex.DecodeString("0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c")
	pub2, _ := hex.DecodeString("03e775fd51f0dfb8cd865d9ff1cca2a158cf651fe997fdc9fee9c1d3b5e995ea77")
	p2pk, _ := txscript.NewScriptBuilder().AddData(pub).AddOp(txscript.OP_CHECKSIG).Script()
	multi, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(pub).AddData(pub2).
		AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()
	short := []byte{0x01, 0x02}
	long := []byte("a longer push of data")
	nonstd, _ := txscript.NewScriptBuilder().AddData(short).AddOp(txscript.OP_DROP).AddData(long).AddOp(txscript.OP_DROP).
		AddOp(txscript.OP_TRUE).Script()
	opTrue := []byte{txscript.OP_TRUE}
	truncated := []byte{txscript.OP_DATA_20, 0x01, 0x02}
	p2wpkh := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams).p2wpkh(0, 0)

	tests := []struct {
		name    string
		script  []byte
		kind    Kind
		element []byte
		address string
		wantErr error
	}{
		{"p2wpkh", p2wpkh, KindP2WPKH, p2wpkh[2:], "bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk", nil},
		{"p2pk", p2pk, KindP2PK, pub, "", nil},
		{"bare multisig", multi, KindMultisig, pub, "", nil},
		{"nonstandard takes the longest push", nonstd, KindScript, long, "", nil},
		{"no push", opTrue, "", nil, "", ErrUnmatchableScript},
		{"empty", nil, "", nil, "", ErrUnmatchableScript},
		{"malformed", truncated, "", nil, "", ErrUnmatchableScript},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := parseScript(tc.script, &chaincfg.RegressionNetParams)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.kind, ws.kind)
			require.Equal(t, tc.element, ws.element)
			require.Equal(t, tc.address, ws.address)
		})
	}
}

// TestFilterElementsMatchEveryWatchedOutput checks the elements against
// the BIP37 matcher: a filter holding exactly them matches a payment to
// every watched address and a spend of every unspent outpoint, and holds
// one element per address, never a public key.
func TestFilterElementsMatchEveryWatchedOutput(t *testing.T) {
	var addrs []string
	imported := regtestAddresses(t)
	for _, a := range imported {
		addrs = append(addrs, a.addr)
	}
	w, err := Create(t.TempDir(), CreateConfig{
		Network:     "regtest",
		Xpubs:       []string{accountXpub(t, purposeBIP84, 1, versionVpub), accountXpub(t, purposeBIP49, 1, versionUpub)},
		Addresses:   addrs,
		GapExternal: 5,
		GapInternal: 3,
	})
	require.NoError(t, err)
	defer w.Close()

	f := &txFactory{}
	keys := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(0, 0), 50_000})
	mustApply(t, w, chain.add(fund).filtered())

	el, err := w.FilterElements()
	require.NoError(t, err)
	const accounts, gapExt, gapInt = 2, 5, 3
	// Index 0 was used: the receive branch of the BIP84 account grew by
	// one address (indexes 0..gapExt; no reserve).
	wantData := accounts*(gapExt+gapInt) + 1 + len(imported)
	require.Len(t, el.Data, wantData)
	require.Equal(t, []wire.OutPoint{{Hash: fund.TxHash(), Index: 0}}, el.OutPoints)

	infos, err := w.Addresses()
	require.NoError(t, err)
	require.Len(t, infos, wantData)
	seen := make(map[string]bool)
	for _, d := range el.Data {
		require.False(t, seen[string(d)], "element inserted twice")
		seen[string(d)] = true
		require.NotContains(t, []int{33, 65}, len(d), "a public key is never an element")
	}

	filter, err := bip37.NewFilter(uint32(el.Len()), 0.0001, 7, bip37.UpdateNone)
	require.NoError(t, err)
	for _, d := range el.Data {
		filter.Add(d)
	}
	for i := range el.OutPoints {
		filter.AddOutPoint(&el.OutPoints[i])
	}
	for _, info := range infos {
		addr, err := btcutil.DecodeAddress(info.Address, &chaincfg.RegressionNetParams)
		require.NoError(t, err)
		script, err := txscript.PayToAddrScript(addr)
		require.NoError(t, err)
		pay := f.tx(nil, output{script, 1000})
		require.True(t, filter.MatchTx(pay), "payment to %s (%s) not matched", info.Address, info.Kind)
	}
	spend := f.tx([]wire.OutPoint{{Hash: fund.TxHash(), Index: 0}}, output{foreignScript(1), 40_000})
	require.True(t, filter.MatchTx(spend), "spend of a wallet outpoint not matched")
}

func TestImportOfDerivedAddressIsDuplicate(t *testing.T) {
	// Index 0 of the BIP49 test account on test networks.
	_, err := Create(t.TempDir(), CreateConfig{
		Network:   "regtest",
		Xpubs:     []string{accountXpub(t, purposeBIP49, 1, versionUpub)},
		Addresses: []string{"2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2"},
	})
	require.ErrorIs(t, err, ErrDuplicate)
}

func TestElementDeltasFollowTheSet(t *testing.T) {
	w, keys := newRegtestWallet(t)
	f := &txFactory{}
	chain := newTestChain(f, 1)
	track := newDeltaTracker(t, w)
	res := mustApply(t, w, chain.add(f.tx(nil, output{foreignScript(1), 1})).filtered())
	require.True(t, res.Delta.Empty(), "a false positive changes nothing")
	pay := f.tx(nil, output{keys.p2wpkh(intBranch, 0), 5})
	res = mustApply(t, w, chain.add(pay).filtered())
	require.Len(t, res.Delta.OutPoints, 1, "the payment's outpoint")
	require.Equal(t, wire.OutPoint{Hash: pay.TxHash()}, res.Delta.OutPoints[0])
	require.NotEmpty(t, res.Delta.Data, "index 0 used: the change branch grows past the gap")
	track.apply(res.Delta)
	res = mustApply(t, w, chain.add(f.tx([]wire.OutPoint{{Hash: pay.TxHash()}}, output{keys.p2wpkh(intBranch, 0), 6})).filtered())
	require.Len(t, res.Delta.Spent, 1, "the spent coin leaves the set")
	require.Len(t, res.Delta.OutPoints, 1, "the new coin joins it")
	track.apply(res.Delta)
	track.check()
}
