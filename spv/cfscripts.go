package spv

import (
	"fmt"

	"github.com/btcsuite/btcd/btcutil/gcs"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// elementScripts returns the output scripts a BIP158 filter can hold for
// one of the watcher's data elements (watch.Elements.Data: the push a
// BIP37 server finds in an output script). The element does not say its
// script type, so every standard script that pushes it is queried: a
// 20-byte hash as P2PKH, P2WPKH and P2SH; a 32-byte program as P2WSH and
// P2TR; a public key as P2PK. The extra queries cost false-positive
// blocks at the filter's rate (2^-19 per query and block), never a miss.
func elementScripts(e []byte) [][]byte {
	var out [][]byte
	build := func(b *txscript.ScriptBuilder) {
		if s, err := b.Script(); err == nil {
			out = append(out, s)
		}
	}
	switch len(e) {
	case 20:
		build(txscript.NewScriptBuilder().AddOp(txscript.OP_DUP).AddOp(txscript.OP_HASH160).
			AddData(e).AddOp(txscript.OP_EQUALVERIFY).AddOp(txscript.OP_CHECKSIG))
		build(txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(e))
		build(txscript.NewScriptBuilder().AddOp(txscript.OP_HASH160).AddData(e).AddOp(txscript.OP_EQUAL))
	case 32:
		build(txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(e))
		build(txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(e))
	case 33, 65:
		build(txscript.NewScriptBuilder().AddData(e).AddOp(txscript.OP_CHECKSIG))
	}
	return out
}

// cfScripts is the node's query set for compact filters: the output
// scripts of every data element of the element set, in the order they
// joined (so a filter matched against the first n needs only the rest
// when the set grows).
type cfScripts struct {
	list [][]byte
	set  map[string]struct{}
	// from is how many of the element set's data elements are in list.
	from int
}

// update adds the scripts of the data elements that joined s since the
// last call and reports whether any did.
func (c *cfScripts) update(s *elementSet) bool {
	if c.set == nil {
		c.set = make(map[string]struct{})
	}
	grew := false
	for ; c.from < len(s.data); c.from++ {
		for _, sc := range elementScripts(s.data[c.from]) {
			if _, ok := c.set[string(sc)]; ok {
				continue
			}
			c.set[string(sc)] = struct{}{}
			c.list = append(c.list, sc)
			grew = true
		}
	}
	return grew
}

// matchFilter reports whether filter f of block hash matches one of the
// scripts list[from:].
func (c *cfScripts) matchFilter(f *gcs.Filter, hash *chainhash.Hash, from int) (bool, error) {
	if from >= len(c.list) || f.N() == 0 {
		return false, nil
	}
	ok, err := f.MatchAny(builder.DeriveKey(hash), c.list[from:])
	if err != nil {
		return false, fmt.Errorf("match filter of %v: %w", hash, err)
	}
	return ok, nil
}

// blockMatches returns the transactions of block b that touch the
// watcher, at their block indexes: those paying one of its scripts and
// those spending one of its outpoints, or an output paying it earlier in
// the block (as a BLOOM_UPDATE_ALL server matches them: the watcher sees
// what a filtered block of an exact filter would hold).
func (c *cfScripts) blockMatches(b *wire.MsgBlock, ops map[wire.OutPoint]struct{}) ([]*wire.MsgTx, []uint32) {
	var txs []*wire.MsgTx
	var idx []uint32
	local := make(map[wire.OutPoint]struct{})
	for i, tx := range b.Transactions {
		hit := false
		var txid chainhash.Hash
		for o, out := range tx.TxOut {
			if _, ok := c.set[string(out.PkScript)]; ok {
				if !hit {
					txid = tx.TxHash()
				}
				hit = true
				local[wire.OutPoint{Hash: txid, Index: uint32(o)}] = struct{}{}
			}
		}
		for _, in := range tx.TxIn {
			if hit {
				break
			}
			_, own := ops[in.PreviousOutPoint]
			_, here := local[in.PreviousOutPoint]
			hit = own || here
		}
		if hit {
			txs = append(txs, tx)
			idx = append(idx, uint32(i))
		}
	}
	return txs, idx
}

// filterProblem returns why filter f cannot be block b's basic filter, or
// nil when the block cannot tell. With every spent output's script
// derivable from its input (txscript.ComputePkScript: P2PKH, P2SH,
// P2WPKH, P2WSH) the filter is rebuilt with builder.BuildBasicFilter and
// compared byte for byte; otherwise every output script and every
// derivable spent script must match it (neutrino's check: a filter can
// add false positives, never leave an element out).
func filterProblem(b *wire.MsgBlock, f *gcs.Filter) error {
	hash := b.BlockHash()
	var prev [][]byte
	complete := true
	for i, tx := range b.Transactions {
		if i == 0 {
			continue
		}
		for _, in := range tx.TxIn {
			pk, err := txscript.ComputePkScript(in.SignatureScript, in.Witness)
			if err != nil {
				complete = false
				continue
			}
			prev = append(prev, pk.Script())
		}
	}
	if complete {
		want, err := builder.BuildBasicFilter(b, prev)
		if err != nil {
			return nil
		}
		wb, err1 := want.NBytes()
		gb, err2 := f.NBytes()
		if err1 != nil || err2 != nil {
			return nil
		}
		if string(wb) != string(gb) {
			return fmt.Errorf("filter of block %v differs from the one its transactions give (%d elements, the block's %d)", hash, f.N(), want.N())
		}
		return nil
	}
	key := builder.DeriveKey(&hash)
	var items [][]byte
	for _, tx := range b.Transactions {
		for _, out := range tx.TxOut {
			if len(out.PkScript) > 0 && out.PkScript[0] != txscript.OP_RETURN {
				items = append(items, out.PkScript)
			}
		}
	}
	items = append(items, prev...)
	for _, it := range items {
		ok, err := f.Match(key, it)
		if err != nil {
			return fmt.Errorf("filter of block %v: %w", hash, err)
		}
		if !ok {
			return fmt.Errorf("filter of block %v lacks script %x of the block", hash, it)
		}
	}
	return nil
}
