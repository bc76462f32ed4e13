package bip37

import (
	"bytes"

	"github.com/btcsuite/btcd/wire"
)

// MatchKind names the part of a transaction that matched a filter.
type MatchKind string

// The parts of a transaction a filter is tested against, in Core's order.
const (
	// MatchAll is a zero-length filter, which matches every transaction.
	MatchAll MatchKind = "match-all"
	// MatchTxid is the transaction's own id.
	MatchTxid MatchKind = "txid"
	// MatchOutput is a data push of an output script.
	MatchOutput MatchKind = "output"
	// MatchOutPoint is the outpoint an input spends.
	MatchOutPoint MatchKind = "outpoint"
	// MatchInputScript is a data push of an input's scriptSig.
	MatchInputScript MatchKind = "input-script"
)

// Match explains why a filter matched a transaction: the first element a
// full node found in it, where, and the bit positions that element's hash
// functions probe (all set, or it would not have matched).
type Match struct {
	Kind MatchKind `json:"kind"`
	// Index is the output or input index (-1 for the txid and MatchAll).
	Index int `json:"index"`
	// Element is the matching bytes: the push, the serialized outpoint
	// (txid in internal order then the little-endian index) or the txid.
	Element []byte `json:"element"`
	// Bits are the positions, one per hash function, in filter order.
	Bits []uint32 `json:"bits"`
}

// Explain returns what makes f match tx, testing the parts in the order
// Bitcoin Core does (txid, output pushes, then per input its outpoint and
// its scriptSig pushes), without changing the filter. It reports false
// when f does not match tx.
func (f *Filter) Explain(tx *wire.MsgTx) (Match, bool) {
	if f.nBits == 0 {
		return Match{Kind: MatchAll, Index: -1}, true
	}
	txid := tx.TxHash()
	if f.Matches(txid[:]) {
		return f.match(MatchTxid, -1, txid[:]), true
	}
	for i, out := range tx.TxOut {
		if d, ok := f.firstPush(out.PkScript); ok {
			return f.match(MatchOutput, i, d), true
		}
	}
	for i, in := range tx.TxIn {
		if f.MatchesOutPoint(&in.PreviousOutPoint) {
			op := serializeOutPoint(&in.PreviousOutPoint)
			return f.match(MatchOutPoint, i, op[:]), true
		}
		if d, ok := f.firstPush(in.SignatureScript); ok {
			return f.match(MatchInputScript, i, d), true
		}
	}
	return Match{}, false
}

// match builds a Match for data.
func (f *Filter) match(kind MatchKind, index int, data []byte) Match {
	return Match{Kind: kind, Index: index, Element: bytes.Clone(data), Bits: f.BitPositions(data)}
}

// firstPush returns the first non-empty push of script that matches f,
// reading the script as scriptMatches does.
func (f *Filter) firstPush(script []byte) ([]byte, bool) {
	if f.rules == RulesBtcd {
		return f.firstPushBtcd(script)
	}
	for len(script) > 0 {
		_, data, rest, ok := scriptOp(script)
		if !ok {
			return nil, false
		}
		if len(data) > 0 && f.Matches(data) {
			return data, true
		}
		script = rest
	}
	return nil, false
}

// BitPositions returns the bit positions data's hash functions select in
// f, one per hash function (nil for a zero-length filter).
func (f *Filter) BitPositions(data []byte) []uint32 {
	if f.nBits == 0 {
		return nil
	}
	out := make([]uint32, f.hashFuncs)
	for i := range out {
		out[i] = f.mod.mod(MurmurHash3(f.seeds[i], data))
	}
	return out
}
