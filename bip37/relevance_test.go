package bip37

import (
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestBloomMatch runs Core's bloom_match: which elements make the filter
// relevant to tx b4749f01..., and that UPDATE_ALL then matches the spending
// transaction e2769b09....
func TestBloomMatch(t *testing.T) {
	tx := loadTx(t, "tx_b4749f.hex")
	spend := loadTx(t, "tx_e2769b_spend.hex")
	got := tx.TxHash()
	require.Equal(t, mustHash(t, "b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b"), got, "tx hash %v", got)
	got = spend.TxHash()
	require.Equal(t, mustHash(t, "e2769b09e784f32f62ef849763d4f45b98e07ba658647343b915ff832b110436"), got, "spending tx hash %v", got)
	const prevTx = "90c122d70786e899529d71dbeba91ba216982fb6ba58f3bdaab65e73b7e9260b"

	type insert func(t *testing.T, f *Filter)
	hashElem := func(s string) insert {
		return func(t *testing.T, f *Filter) { h := mustHash(t, s); f.Add(h[:]) }
	}
	hexElem := func(s string) insert {
		return func(t *testing.T, f *Filter) { f.Add(mustHex(t, s)) }
	}
	outPoint := func(s string, i uint32) insert {
		return func(t *testing.T, f *Filter) { f.AddOutPoint(&wire.OutPoint{Hash: mustHash(t, s), Index: i}) }
	}
	tests := []struct {
		name       string
		insert     insert
		want       bool
		wantSpends bool // the spending tx matches after MatchTxAndUpdate(tx)
	}{
		{"tx hash", hashElem("b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b"), true, false},
		{"manually serialized tx hash", hexElem("6bff7fcd4f8565ef406dd5d63d4ff94f318fe82027fd4dc451b04474019f74b4"), true, false},
		{"input signature", hexElem("30450220070aca44506c5cef3a16ed519d7c3c39f8aab192c4e1c90d065f37b8a4af6141022100a8e160b856c2d43d27d8fba71e5aef6405b8643ac4cb7cb3c462aced7f14711a01"), true, false},
		{"input pub key", hexElem("046d11fee51b0e60666d5049a9101a72741df480b96ee26488a4d3466b95c9a40ac5eeef87e10a5cd336c19a84565f80fa6c547957b7700ff4dfbdefe76036c339"), true, false},
		{"output address", hexElem("04943fdd508053c75000106d3bc6e2754dbcff19"), true, true},
		{"second output address", hexElem("a266436d2965547608b9e15d9032a7b9d64fa431"), true, false},
		{"outpoint", outPoint(prevTx, 0), true, false},
		{"manually serialized outpoint", hexElem(
			"0b26e9b7735eb6aabdf358bab62f9816a21ba9ebdb719d5299e88607d722c190" + "00000000"), true, false},
		{"random tx hash", hashElem("00000009e784f32f62ef849763d4f45b98e07ba658647343b915ff832b110436"), false, false},
		{"random address", hexElem("0000006d2965547608b9e15d9032a7b9d64fa431"), false, false},
		{"outpoint of another output", outPoint(prevTx, 1), false, false},
		{"outpoint of another tx", outPoint("000000d70786e899529d71dbeba91ba216982fb6ba58f3bdaab65e73b7e9260b", 0), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFilter(10, 0.000001, 0, UpdateAll)
			require.NoError(t, err)
			tc.insert(t, f)
			got := f.MatchTx(tx)
			require.Equal(t, tc.want, got, "MatchTx = %v, want %v", got, tc.want)
			got = f.MatchTxAndUpdate(tx)
			require.Equal(t, tc.want, got, "MatchTxAndUpdate = %v, want %v", got, tc.want)
			require.False(t, tc.wantSpends && !f.MatchTxAndUpdate(spend), "spending tx does not match after the update")
		})
	}
}

// TestMatchTxUpdateModes checks which outpoint each update mode inserts for
// a P2PKH output, a P2PK output and a bare multisig output, and that
// MatchTx never writes.
func TestMatchTxUpdateModes(t *testing.T) {
	key33 := append([]byte{0x02}, make([]byte, 32)...)
	key33[5] = 0x77
	hash20 := make([]byte, 20)
	hash20[0] = 0x42
	p2pkh := append(append([]byte{0x76, 0xa9, 0x14}, hash20...), 0x88, 0xac)
	p2pk := append(append([]byte{0x21}, key33...), 0xac)
	multisig := append(append([]byte{0x51, 0x21}, key33...), 0x51, 0xae)
	tests := []struct {
		name     string
		script   []byte
		element  []byte
		flags    UpdateFlag
		wantSpnd bool
	}{
		{"p2pkh none", p2pkh, hash20, UpdateNone, false},
		{"p2pkh all", p2pkh, hash20, UpdateAll, true},
		{"p2pkh p2pubkeyonly", p2pkh, hash20, UpdateP2PubKeyOnly, false},
		{"p2pk p2pubkeyonly", p2pk, key33, UpdateP2PubKeyOnly, true},
		{"multisig p2pubkeyonly", multisig, key33, UpdateP2PubKeyOnly, true},
		{"p2pk none", p2pk, key33, UpdateNone, false},
		// Only the low two bits select the mode: 0x05 is UPDATE_ALL.
		{"high bits ignored", p2pkh, hash20, UpdateFlag(0x05), true},
		// 3 is neither ALL nor P2PUBKEY_ONLY.
		{"mode 3 updates nothing", p2pk, key33, UpdateFlag(0x03), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFilter(10, 0.000001, 99, tc.flags)
			require.NoError(t, err)
			f.Add(tc.element)
			tx := wire.NewMsgTx(wire.TxVersion)
			tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 7}, nil, nil))
			tx.AddTxOut(wire.NewTxOut(1000, []byte{0x6a}))
			tx.AddTxOut(wire.NewTxOut(1000, tc.script))
			before := append([]byte(nil), f.Bits()...)
			require.True(t, f.MatchTx(tx), "MatchTx = false")
			require.Equal(t, string(f.Bits()), string(before), "MatchTx changed the filter")
			require.True(t, f.MatchTxAndUpdate(tx), "MatchTxAndUpdate = false")
			spent := &wire.OutPoint{Hash: tx.TxHash(), Index: 1}
			got := f.MatchesOutPoint(spent)
			require.Equal(t, tc.wantSpnd, got, "outpoint inserted = %v, want %v", got, tc.wantSpnd)
			require.False(t, f.MatchesOutPoint(&wire.OutPoint{Hash: tx.TxHash(), Index: 0}), "outpoint of the unmatched output inserted")
		})
	}
}

// TestMatchTxIgnoresWitness checks that a public key in a witness never
// makes a transaction relevant; only the outpoint it spends does.
func TestMatchTxIgnoresWitness(t *testing.T) {
	key33 := append([]byte{0x03}, make([]byte, 32)...)
	f, err := NewFilter(10, 0.0001, 0, UpdateAll)
	require.NoError(t, err)
	f.Add(key33)
	prev := wire.OutPoint{Index: 3}
	prev.Hash[0] = 1
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&prev, nil, wire.TxWitness{make([]byte, 71), key33}))
	tx.AddTxOut(wire.NewTxOut(1000, append([]byte{0x00, 0x14}, make([]byte, 20)...)))
	require.False(t, f.MatchTx(tx), "matched through the witness")
	f.AddOutPoint(&prev)
	require.True(t, f.MatchTx(tx), "no match through the spent outpoint")
}

// TestScriptClassification checks isPayToPubKey and isBareMultisig against
// Core's Solver rules, including the cases where txscript disagrees.
func TestScriptClassification(t *testing.T) {
	key := func(prefix byte, n int) []byte {
		k := make([]byte, n)
		k[0] = prefix
		return k
	}
	push := func(b []byte) []byte { return append([]byte{byte(len(b))}, b...) }
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	op := func(b ...byte) []byte { return b }
	k33, k65, hyb := key(0x02, 33), key(0x04, 65), key(0x06, 65)
	var seventeen [][]byte
	for range 17 {
		seventeen = append(seventeen, push(k33))
	}
	tests := []struct {
		name     string
		script   []byte
		pubKey   bool
		multisig bool
	}{
		{"p2pk compressed", cat(push(k33), op(0xac)), true, false},
		{"p2pk uncompressed", cat(push(k65), op(0xac)), true, false},
		{"p2pk hybrid", cat(push(hyb), op(0xac)), true, false},
		{"p2pk bad prefix", cat(push(key(0x05, 33)), op(0xac)), false, false},
		{"p2pk wrong length for prefix", cat(push(key(0x04, 33)), op(0xac)), false, false},
		{"p2pk pushdata1", cat(op(0x4c, 33), k33, op(0xac)), false, false},
		{"p2pk no checksig", cat(push(k33), op(0xad)), false, false},
		{"1-of-1", cat(op(0x51), push(k33), op(0x51, 0xae)), false, true},
		{"1-of-2 mixed", cat(op(0x51), push(k33), push(k65), op(0x52, 0xae)), false, true},
		{"2-of-1", cat(op(0x52), push(k33), op(0x51, 0xae)), false, false},
		{"non-key push", cat(op(0x51), push(make([]byte, 20)), op(0x51, 0xae)), false, false},
		{"count mismatch", cat(op(0x51), push(k33), op(0x52, 0xae)), false, false},
		{"zero required", cat(op(0x00), push(k33), op(0x51, 0xae)), false, false},
		{"17-of-17 pushed counts", cat(op(0x01, 17), cat(seventeen...), op(0x01, 17, 0xae)), false, true},
		{"non-minimal count push", cat(op(0x01, 1), push(k33), op(0x51, 0xae)), false, false},
		{"21 keys", cat(op(0x51), cat(append(seventeen, push(k33), push(k33), push(k33), push(k33))...), op(0x01, 21, 0xae)), false, false},
		{"extra opcode", cat(op(0x51), push(k33), op(0x51, 0x61, 0xae)), false, false},
		{"truncated key", cat(op(0x51), op(0x21), k33[:10], op(0xae)), false, false},
		{"empty", nil, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := isPayToPubKey(tc.script)
			require.Equal(t, tc.pubKey, got, "isPayToPubKey = %v, want %v", got, tc.pubKey)
			got = isBareMultisig(tc.script)
			require.Equal(t, tc.multisig, got, "isBareMultisig = %v, want %v", got, tc.multisig)
			got = refIsPubKeyOrMultisig(tc.script)
			require.Equal(t, (tc.pubKey || tc.multisig), got, "reference Solver = %v, want %v", got, tc.pubKey || tc.multisig)
		})
	}
}

// TestMinimalScriptNum checks CScriptNum's minimal-encoding rule.
func TestMinimalScriptNum(t *testing.T) {
	tests := []struct {
		in   []byte
		want int
		ok   bool
	}{
		{nil, 0, true},
		{[]byte{0x11}, 17, true},
		{[]byte{0x81}, -1, true},
		{[]byte{0x80}, 0, false},       // negative zero
		{[]byte{0x11, 0x00}, 0, false}, // padded
		{[]byte{0xff, 0x00}, 255, true},
		{[]byte{0xff, 0x80}, -255, true},
		{[]byte{1, 2, 3, 4, 5}, 0, false}, // over 4 bytes
	}
	for _, tc := range tests {
		got, ok := minimalScriptNum(tc.in)
		require.Equal(t, tc.ok, ok, "minimalScriptNum(%x) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		require.False(t, ok && got != tc.want, "minimalScriptNum(%x) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
	}
}
