package bip37

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// propertyMaxElement bounds random element lengths (every tail length and
// the 520-byte filteradd limit are covered).
const propertyMaxElement = 2 * MaxFilterAddSize

// TestPropertyFilterMatchesReference checks Add and Matches, bit for bit,
// against the plain reference and, for non-empty filters, btcutil/bloom,
// over random sizes, hash counts (odd and even), tweaks and element lengths.
func TestPropertyFilterMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		size := rapid.IntRange(0, 600).Draw(t, "size")
		k := rapid.Uint32Range(0, MaxHashFuncs).Draw(t, "k")
		tweak := rapid.Uint32().Draw(t, "tweak")
		f, err := NewFilterFromBits(make([]byte, size), k, tweak, UpdateNone)
		require.NoError(t, err)
		ref := &refFilter{data: make([]byte, size), hashFuncs: k, tweak: tweak}
		element := rapid.SliceOfN(rapid.Byte(), 0, propertyMaxElement)
		inserted := rapid.SliceOfN(element, 0, 40).Draw(t, "inserted")
		for _, e := range inserted {
			f.Add(e)
			ref.insert(e)
		}
		require.True(t, bytes.Equal(f.Bits(), ref.data), "bits %x, reference %x", f.Bits(), ref.data)
		queries := append(rapid.SliceOfN(element, 1, 40).Draw(t, "queries"), inserted...)
		var bf *bloom.Filter
		if size > 0 {
			bf = bloom.LoadFilter(f.MsgFilterLoad())
		}
		for _, q := range queries {
			got := f.Matches(q)
			want := ref.contains(q)
			require.Equal(t, want, got, "Matches(%x) = %v, reference %v", q, got, want)
			require.False(t, bf != nil && bf.Matches(q) != got, "Matches(%x) = %v, btcutil %v", q, got, !got)
		}
	})
}

// TestPropertyMurmurAndFastMod checks MurmurHash3 against the reference
// and fastMod against the % operator on random input.
func TestPropertyMurmurAndFastMod(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint32().Draw(t, "seed")
		data := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "data")
		got, want := MurmurHash3(seed, data), referenceMurmur3(seed, data)
		require.Equal(t, want, got, "MurmurHash3 = %#x, reference %#x", got, want)
		d := rapid.Uint32Min(1).Draw(t, "d")
		a := rapid.Uint32().Draw(t, "a")
		got = newFastMod(d).mod(a)
		require.Equal(t, a%d, got, "%d mod %d = %d, want %d", a, d, got, a%d)
	})
}

// txGen draws transactions whose scripts mix pushes of watched elements,
// random pushes in every push encoding, OP_0, small integers, other
// opcodes, P2PK and multisig templates and truncated pushes.
type txGen struct {
	pool  [][]byte // watched elements
	clean bool     // only fully parsing scripts without empty pushes
}

// pushOf encodes data with a randomly chosen (possibly non-minimal) push.
func pushOf(t *rapid.T, data []byte) []byte {
	form := rapid.IntRange(0, 3).Draw(t, "pushForm")
	switch {
	case form == 0 && len(data) < opPushData1:
		return append([]byte{byte(len(data))}, data...)
	case form <= 1 && len(data) <= 0xff:
		return append([]byte{opPushData1, byte(len(data))}, data...)
	case form <= 2:
		return append(binary.LittleEndian.AppendUint16([]byte{opPushData2}, uint16(len(data))), data...)
	default:
		return append(binary.LittleEndian.AppendUint32([]byte{opPushData4}, uint32(len(data))), data...)
	}
}

func (g txGen) script(t *rapid.T) []byte {
	var s []byte
	ops := rapid.IntRange(0, 6).Draw(t, "ops")
	for range ops {
		switch rapid.IntRange(0, 8).Draw(t, "kind") {
		case 0, 1:
			s = append(s, pushOf(t, rapid.SampledFrom(g.pool).Draw(t, "watched"))...)
		case 2:
			s = append(s, pushOf(t, rapid.SliceOfN(rapid.Byte(), 1, 80).Draw(t, "data"))...)
		case 3:
			if !g.clean {
				s = append(s, opFalse)
			}
		case 4:
			s = append(s, byte(rapid.IntRange(op1Negate, op16).Draw(t, "smallInt")))
		case 5:
			s = append(s, byte(rapid.IntRange(op16+1, 0xff).Draw(t, "opcode")))
		case 6:
			key := rapid.SampledFrom(g.pool).Draw(t, "p2pkKey")
			return append(append([]byte{byte(len(key))}, key...), opCheckSig)
		case 7:
			return g.multisig(t)
		case 8:
			if !g.clean {
				trunc := rapid.SampledFrom([][]byte{{0x14, 1, 2}, {opPushData1}, {opPushData2, 5}, {opPushData4, 1, 0, 0}}).Draw(t, "truncated")
				return append(s, trunc...)
			}
		}
	}
	return s
}

// multisig draws a bare multisig template over watched keys, now and then
// (outside clean mode) with a defect Core's Solver must reject: a
// non-minimal pushed count, m > n, a key count that disagrees with n, or an
// extra opcode before OP_CHECKMULTISIG.
func (g txGen) multisig(t *rapid.T) []byte {
	var keys [][]byte
	for _, e := range g.pool {
		if validPubKeySize(e) {
			keys = append(keys, e)
		}
	}
	if len(keys) == 0 {
		keys = [][]byte{append([]byte{0x03}, make([]byte, 32)...)}
	}
	n := rapid.IntRange(1, 3).Draw(t, "keys")
	m := rapid.IntRange(1, n).Draw(t, "required")
	nField := n
	defect := 0
	if !g.clean {
		defect = rapid.IntRange(0, 8).Draw(t, "defect") // 0-4: none
	}
	switch defect {
	case 6:
		m = n + 1
	case 7:
		nField = n + 1
	}
	ms := []byte{byte(op1 - 1 + m)}
	if defect == 5 {
		ms = []byte{1, byte(m)} // a pushed count below 17 is not minimal
	}
	for range n {
		key := rapid.SampledFrom(keys).Draw(t, "msKey")
		ms = append(append(ms, byte(len(key))), key...)
	}
	ms = append(ms, byte(op1-1+nField))
	if defect == 8 {
		ms = append(ms, byte(rapid.IntRange(0, 0xff).Draw(t, "extra")))
	}
	return append(ms, opCheckMultiSig)
}

func (g txGen) tx(t *rapid.T, prevouts []wire.OutPoint) *wire.MsgTx {
	tx := wire.NewMsgTx(wire.TxVersion)
	for range rapid.IntRange(1, 3).Draw(t, "inputs") {
		var prev wire.OutPoint
		if len(prevouts) > 0 && rapid.Bool().Draw(t, "spendKnown") {
			prev = rapid.SampledFrom(prevouts).Draw(t, "prevout")
		} else {
			copy(prev.Hash[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "prevHash"))
			prev.Index = rapid.Uint32Range(0, 4).Draw(t, "prevIndex")
		}
		tx.AddTxIn(wire.NewTxIn(&prev, g.script(t), nil))
	}
	for range rapid.IntRange(1, 4).Draw(t, "outputs") {
		tx.AddTxOut(wire.NewTxOut(1, g.script(t)))
	}
	return tx
}

// drawPool returns watched elements: hash160s and keys with valid prefixes,
// and sometimes the empty element (which only empty pushes could match).
func drawPool(t *rapid.T, withEmpty bool) [][]byte {
	var pool [][]byte
	if withEmpty && rapid.Bool().Draw(t, "emptyElement") {
		pool = append(pool, []byte{})
	}
	for range rapid.IntRange(1, 6).Draw(t, "poolSize") {
		switch rapid.IntRange(0, 2).Draw(t, "elemKind") {
		case 0:
			pool = append(pool, rapid.SliceOfN(rapid.Byte(), 20, 20).Draw(t, "hash160"))
		case 1:
			pool = append(pool, append([]byte{0x02}, rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "key33")...))
		default:
			pool = append(pool, append([]byte{0x04}, rapid.SliceOfN(rapid.Byte(), 64, 64).Draw(t, "key65")...))
		}
	}
	return pool
}

// runTxSequence feeds a chain of transactions, each able to spend the
// previous ones' outputs, through check.
func runTxSequence(t *rapid.T, g txGen, check func(tx *wire.MsgTx)) {
	var prevouts []wire.OutPoint
	for range rapid.IntRange(1, 8).Draw(t, "txs") {
		tx := g.tx(t, prevouts)
		check(tx)
		for i := range tx.TxOut {
			prevouts = append(prevouts, wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)})
		}
	}
}

// TestPropertyMatchTxReference checks MatchTxAndUpdate (result and the
// filter it leaves) against the reference IsRelevantAndUpdate for every
// update mode, and MatchTx against MatchTxAndUpdate on a clone.
func TestPropertyMatchTxReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := txGen{pool: drawPool(t, true)}
		size := rapid.IntRange(0, 64).Draw(t, "size")
		k := rapid.Uint32Range(0, 20).Draw(t, "k")
		tweak := rapid.Uint32().Draw(t, "tweak")
		flags := rapid.SampledFrom([]UpdateFlag{UpdateNone, UpdateAll, UpdateP2PubKeyOnly, UpdateP2PubKeyOnly, 3, 0x86}).Draw(t, "flags")
		f, err := NewFilterFromBits(make([]byte, size), k, tweak, flags)
		require.NoError(t, err)
		for _, e := range g.pool[:rapid.IntRange(0, len(g.pool)).Draw(t, "watchedCount")] {
			f.Add(e)
		}
		ref := &refFilter{data: append([]byte(nil), f.Bits()...), hashFuncs: k, tweak: tweak, flags: uint8(flags)}
		runTxSequence(t, g, func(tx *wire.MsgTx) {
			clone := f.Clone()
			readOnly := f.MatchTx(tx)
			require.True(t, bytes.Equal(clone.Bits(), f.Bits()), "MatchTx changed the filter")
			got := f.MatchTxAndUpdate(tx)
			want := ref.isRelevantAndUpdate(tx)
			require.Equal(t, want, got, "MatchTxAndUpdate %v, MatchTx %v, reference %v", got, readOnly, want)
			require.Equal(t, got, readOnly, "MatchTxAndUpdate %v, MatchTx %v, reference %v", got, readOnly, want)
			require.True(t, bytes.Equal(f.Bits(), ref.data), "bits after update %x, reference %x", f.Bits(), ref.data)
		})
	})
}

// TestPropertyMatchTxBtcutil checks MatchTxAndUpdate against btcutil/bloom
// where the two are specified to agree: non-empty filters, scripts that
// parse fully with no empty pushes, and the UPDATE_NONE and UPDATE_ALL
// modes (P2PUBKEY_ONLY classification differs; see
// TestP2PubKeyOnlyDiffersFromBtcutil).
func TestPropertyMatchTxBtcutil(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := txGen{pool: drawPool(t, false), clean: true}
		size := rapid.IntRange(1, 64).Draw(t, "size")
		k := rapid.Uint32Range(1, 20).Draw(t, "k")
		flags := rapid.SampledFrom([]UpdateFlag{UpdateNone, UpdateAll}).Draw(t, "flags")
		f, err := NewFilterFromBits(make([]byte, size), k, rapid.Uint32().Draw(t, "tweak"), flags)
		require.NoError(t, err)
		for _, e := range g.pool[:rapid.IntRange(0, len(g.pool)).Draw(t, "watchedCount")] {
			f.Add(e)
		}
		bf := bloom.LoadFilter(f.MsgFilterLoad())
		runTxSequence(t, g, func(tx *wire.MsgTx) {
			got := f.MatchTxAndUpdate(tx)
			want := bf.MatchTxAndUpdate(btcutil.NewTx(tx))
			require.Equal(t, want, got, "MatchTxAndUpdate %v, btcutil %v", got, want)
			require.True(t, bytes.Equal(f.Bits(), bf.MsgFilterLoad().Filter), "filters diverged after the update")
		})
	})
}

// TestPropertyClassificationReference compares the P2PUBKEY_ONLY
// classification with the reference Solver on generated scripts, which
// include well-formed and defective multisig templates.
func TestPropertyClassificationReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := txGen{pool: drawPool(t, true)}
		for range 20 {
			script := g.script(t)
			got := isPayToPubKey(script) || isBareMultisig(script)
			want := refIsPubKeyOrMultisig(script)
			require.Equal(t, want, got, "classification of %x = %v, reference %v", script, got, want)
		}
	})
}
