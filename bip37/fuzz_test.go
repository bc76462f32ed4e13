package bip37

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// Fuzz targets. Seed corpora live in testdata/fuzz/<FuzzName>/ and run with
// plain go test; each target must never panic.

// fuzzMaxTxs bounds the synthetic blocks FuzzExtractMatches builds so each
// input stays fast.
const fuzzMaxTxs = 600

// FuzzExtractMatches builds a block of 1..fuzzMaxTxs transactions and a
// match set from the input, builds its merkleblock, then tampers with it as
// the rest of the input says (flip a flag bit, flip a hash bit, drop or
// duplicate a hash, drop or add a flag byte, change the count). Whatever
// ExtractMatches accepts must agree with the reference, and a result that
// authenticates against the block's root must name genuine txids at their
// positions and re-build, with BuildMerkleBlock, to the same root and
// matches.
func FuzzExtractMatches(f *testing.F) {
	f.Fuzz(func(t *testing.T, numTxs uint16, seed uint64, matchRate uint8, ops []byte) {
		n := int(numTxs)%fuzzMaxTxs + 1
		rng := rand.New(rand.NewPCG(seed, uint64(n)))
		block := syntheticBlock(n, rng)
		match, _ := matchSet(n, uint(matchRate%8), rng)
		mb := BuildMerkleBlock(block, match)
		for len(ops) >= 3 {
			tamper(mb, ops[0], binary.LittleEndian.Uint16(ops[1:3]))
			ops = ops[3:]
		}
		root, matches, indexes, err := ExtractMatches(mb.Transactions, mb.Hashes, mb.Flags)
		refRoot, refMatches, refIdx, refOK := newRefPMT(mb.Transactions, nonNil(mb.Hashes), mb.Flags).extract()
		require.False(t, (err == nil) != refOK && !errors.Is(err, ErrNilHash), "ExtractMatches err %v, reference ok %v", err, refOK)
		if err != nil {
			return
		}
		require.Equal(t, refRoot, root, "ExtractMatches disagrees with the reference")
		require.True(t, slices.Equal(matches, refMatches), "ExtractMatches disagrees with the reference")
		require.True(t, slices.Equal(indexes, refIdx), "ExtractMatches disagrees with the reference")
		if root != block.Header.MerkleRoot {
			return
		}
		if mb.Transactions != uint32(n) {
			// The transaction count is not committed to by the root: an
			// understated count makes inner nodes leaves, and the tree
			// still authenticates (Core's ExtractMatches has the same
			// property; TestUnderstatedCountAuthenticates shows it).
			// Only with the true count are the leaves the block's txids.
			return
		}
		for i, idx := range indexes {
			require.Less(t, int(idx), n, "authenticated match %d (index %d) is not the block's txid", i, idx)
			require.Equal(t, block.Transactions[idx].TxHash(), matches[i], "authenticated match %d (index %d) is not the block's txid", i, idx)
			require.False(t, i > 0 && idx <= indexes[i-1], "authenticated match %d (index %d) is not the block's txid", i, idx)
		}
		rebuilt := BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return slices.Contains(indexes, uint32(i)) })
		m2, i2, err := VerifyMerkleBlock(rebuilt)
		require.NoError(t, err, "rebuilt tree")
		require.True(t, slices.Equal(m2, matches), "rebuilt tree: %v", err)
		require.True(t, slices.Equal(i2, indexes), "rebuilt tree: %v", err)
	})
}

// tamper applies one mutation chosen by op at position pos.
func tamper(mb *wire.MsgMerkleBlock, op byte, pos uint16) {
	p := int(pos)
	switch op % 8 {
	case 0:
		if len(mb.Flags) > 0 {
			mb.Flags[p/8%len(mb.Flags)] ^= 1 << (p % 8)
		}
	case 1:
		if len(mb.Hashes) > 0 {
			h := *mb.Hashes[p%len(mb.Hashes)]
			h[p/8%32] ^= 1 << (p % 8)
			mb.Hashes[p%len(mb.Hashes)] = &h
		}
	case 2:
		if len(mb.Hashes) > 0 {
			mb.Hashes = slices.Delete(slices.Clone(mb.Hashes), p%len(mb.Hashes), p%len(mb.Hashes)+1)
		}
	case 3:
		if len(mb.Hashes) > 0 {
			mb.Hashes = append(slices.Clone(mb.Hashes), mb.Hashes[p%len(mb.Hashes)])
		}
	case 4:
		if len(mb.Flags) > 0 {
			mb.Flags = mb.Flags[:len(mb.Flags)-1]
		}
	case 5:
		mb.Flags = append(mb.Flags, byte(pos))
	case 6:
		mb.Transactions = uint32(int(mb.Transactions) + p%5 - 2)
	default:
		mb.Transactions = uint32(pos) * 2
	}
}

// FuzzVerifyMerkleBlock decodes a merkleblock message from arbitrary bytes.
// Verification must never panic, must agree with the reference, and a
// verified message must re-encode to the same bytes and verify the same way
// again, with strictly increasing in-range indexes.
func FuzzVerifyMerkleBlock(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte) {
		var mb wire.MsgMerkleBlock
		r := bytes.NewReader(payload)
		if err := mb.BtcDecode(r, wire.ProtocolVersion, wire.LatestEncoding); err != nil {
			return
		}
		matches, indexes, err := VerifyMerkleBlock(&mb)
		refRoot, _, _, refOK := newRefPMT(mb.Transactions, mb.Hashes, mb.Flags).extract()
		refOK = refOK && refRoot == mb.Header.MerkleRoot
		require.Equal(t, refOK, (err == nil), "VerifyMerkleBlock err %v, reference ok %v", err, refOK)
		if err != nil {
			return
		}
		require.Equal(t, len(indexes), len(matches), "matches and indexes differ in length")
		for i, idx := range indexes {
			require.Less(t, idx, mb.Transactions, "index %d out of order or range", idx)
			require.False(t, i > 0 && idx <= indexes[i-1], "index %d out of order or range", idx)
		}
		var buf bytes.Buffer
		require.NoError(t, mb.BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
		require.True(t, bytes.Equal(buf.Bytes(), payload[:len(payload)-r.Len()]), "verified message does not re-encode to its bytes")
		var again wire.MsgMerkleBlock
		require.NoError(t, again.BtcDecode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
		m2, i2, err := VerifyMerkleBlock(&again)
		require.NoError(t, err, "re-decoded message verifies differently")
		require.True(t, slices.Equal(m2, matches), "re-decoded message verifies differently: %v", err)
		require.True(t, slices.Equal(i2, indexes), "re-decoded message verifies differently: %v", err)
	})
}

// FuzzDeserializeFilter checks that any accepted payload re-serializes to
// itself, and that the filter's answers survive the round trip.
func FuzzDeserializeFilter(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte, probe []byte) {
		filter, err := Deserialize(payload)
		if err != nil {
			return
		}
		out := filter.Serialize()
		require.True(t, bytes.Equal(out, payload), "round trip %x, want %x", out, payload)
		back, err := Deserialize(out)
		require.NoError(t, err)
		require.Equal(t, filter.Matches(probe), back.Matches(probe), "round-tripped filter answers differently")
	})
}

// FuzzLoadFilter decodes a filterload message the way a node does and
// checks that an accepted filter produces an identical message.
func FuzzLoadFilter(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte) {
		var msg wire.MsgFilterLoad
		if err := msg.BtcDecode(bytes.NewReader(payload), wire.ProtocolVersion, wire.LatestEncoding); err != nil {
			return
		}
		filter, err := LoadFilter(&msg)
		if err != nil {
			require.False(t, !errors.Is(err, ErrFilterTooLarge) && !errors.Is(err, ErrTooManyHashFuncs), "unexpected error %v", err)
			return
		}
		back := filter.MsgFilterLoad()
		require.True(t, bytes.Equal(back.Filter, msg.Filter), "round trip %+v, want %+v", back, msg)
		require.Equal(t, msg.HashFuncs, back.HashFuncs, "round trip %+v, want %+v", back, msg)
		require.Equal(t, msg.Tweak, back.Tweak, "round trip %+v, want %+v", back, msg)
		require.Equal(t, msg.Flags, back.Flags, "round trip %+v, want %+v", back, msg)
		var buf bytes.Buffer
		require.NoError(t, msg.BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
		require.True(t, bytes.Equal(buf.Bytes(), filter.Serialize()), "Serialize differs from the wire encoding")
	})
}

// FuzzMatchTx runs the relevance test on arbitrary transactions and
// filters: it must never panic, MatchTx must equal MatchTxAndUpdate's
// result on a clone, and both must agree with the reference, bits included.
func FuzzMatchTx(f *testing.F) {
	f.Fuzz(func(t *testing.T, bits []byte, hashFuncs uint8, tweak uint32, flags uint8, txBytes []byte) {
		if len(bits) > MaxFilterSize {
			bits = bits[:MaxFilterSize]
		}
		filter, err := NewFilterFromBits(bits, uint32(hashFuncs)%(MaxHashFuncs+1), tweak, UpdateFlag(flags))
		require.NoError(t, err)
		var tx wire.MsgTx
		if err := tx.Deserialize(bytes.NewReader(txBytes)); err != nil {
			return
		}
		before := slices.Clone(filter.Bits())
		readOnly := filter.MatchTx(&tx)
		require.True(t, bytes.Equal(before, filter.Bits()), "MatchTx changed the filter")
		clone := filter.Clone()
		got := clone.MatchTxAndUpdate(&tx)
		require.Equal(t, readOnly, got, "MatchTx %v, MatchTxAndUpdate on a clone %v", readOnly, got)
		ref := &refFilter{data: slices.Clone(before), hashFuncs: filter.HashFuncs(), tweak: tweak, flags: flags}
		want := ref.isRelevantAndUpdate(&tx)
		require.Equal(t, want, readOnly, "reference %v, got %v (bits equal %v)", want, readOnly, bytes.Equal(ref.data, clone.Bits()))
		require.True(t, bytes.Equal(ref.data, clone.Bits()), "reference %v, got %v (bits equal %v)", want, readOnly, bytes.Equal(ref.data, clone.Bits()))
	})
}
