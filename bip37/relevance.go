package bip37

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// MatchTx reports whether a full node would relay tx to the owner of this
// filter, without changing the filter. It gives the same answer as
// MatchTxAndUpdate on a clone: outpoint insertions happen only after a
// match has already decided the result.
func (f *Filter) MatchTx(tx *wire.MsgTx) bool {
	txid := tx.TxHash()
	return f.relevant(tx, &txid, false)
}

// MatchTxAndUpdate is Bitcoin Core's CBloomFilter::IsRelevantAndUpdate.
//
// A zero-length filter matches every transaction. Otherwise the tx matches
// when the filter contains its txid, or any non-empty push of any output
// script. Each output script is read op by op up to its first parse
// failure; its first matching push marks the match and, per the update
// mode, inserts that output's outpoint (UpdateAll: always;
// UpdateP2PubKeyOnly: only for pay-to-pubkey and bare multisig outputs as
// Core's Solver classifies them), then the next output is examined. All
// outputs are processed even after a match so every update happens. Only
// when nothing matched are the inputs examined: each spent outpoint, then
// each non-empty push of its scriptSig. Witnesses are never examined.
func (f *Filter) MatchTxAndUpdate(tx *wire.MsgTx) bool {
	txid := tx.TxHash()
	return f.relevant(tx, &txid, true)
}

// relevant implements both relevance tests for a tx whose txid is known.
func (f *Filter) relevant(tx *wire.MsgTx, txid *chainhash.Hash, update bool) bool {
	if f.nBits == 0 {
		return true
	}
	mode := f.flags.mode()
	updating := update && (mode == UpdateAll || mode == UpdateP2PubKeyOnly)
	found := f.Matches(txid[:])
	for i, out := range tx.TxOut {
		if found && !updating {
			return true
		}
		if !f.scriptMatches(out.PkScript) {
			continue
		}
		found = true
		if !updating {
			return true
		}
		if mode == UpdateAll || isPayToPubKey(out.PkScript) || isBareMultisig(out.PkScript) {
			f.AddOutPoint(&wire.OutPoint{Hash: *txid, Index: uint32(i)})
		}
	}
	if found {
		return true
	}
	for _, in := range tx.TxIn {
		if f.MatchesOutPoint(&in.PreviousOutPoint) || f.scriptMatches(in.SignatureScript) {
			return true
		}
	}
	return false
}

// scriptMatches reports whether any non-empty push of script, read up to
// its first parse failure, matches the filter (under RulesBtcd: any push,
// empty ones too, of a script that parses whole).
func (f *Filter) scriptMatches(script []byte) bool {
	if f.rules == RulesBtcd {
		_, ok := f.firstPushBtcd(script)
		return ok
	}
	for len(script) > 0 {
		_, data, rest, ok := scriptOp(script)
		if !ok {
			return false
		}
		if len(data) > 0 && f.Matches(data) {
			return true
		}
		script = rest
	}
	return false
}
