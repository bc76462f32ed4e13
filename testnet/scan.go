package testnet

import (
	"context"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// ScanTruth computes the wallet truth of key's purpose addresses (within
// the first 1,000 indexes of each branch) from node's current chain,
// scanning every block from height from to the tip. It is independent of
// BuildChain's bookkeeping, so it cross-checks it, and it gives the truth
// of any chain, e.g. after a Reorg. Xpub, Seed and NoiseTxs are left
// zero; StartHeight is from-1.
func ScanTruth(ctx context.Context, node FullNode, key *Keyring, purpose uint32, from int32) (*Truth, error) {
	tipHash, tip, err := node.BestBlock()
	if err != nil {
		return nil, err
	}
	return scanBlocks(ctx, node.Params().Name, key, purpose, from, tip, *tipHash, node.BlockAt)
}

// scanBlocks walks blocks from..tip fetched by blockAt and computes the
// truth ScanTruth describes.
func scanBlocks(ctx context.Context, network string, key *Keyring, purpose uint32, from, tip int32, tipHash chainhash.Hash,
	blockAt func(int32) (*chainhash.Hash, *wire.MsgBlock, error)) (*Truth, error) {

	if purpose == 0 {
		purpose = PurposeBIP84
	}
	from = max(from, 1)
	t := &Truth{Network: network, Purpose: purpose, StartHeight: from - 1, TipHeight: tip, TipHash: tipHash}
	addrs := make(map[string]*TruthAddress)
	utxos := make(map[wire.OutPoint]TruthUTXO)
	for height := from; height <= tip; height++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("testnet: scan truth: %w", err)
		}
		hash, blk, err := blockAt(height)
		if err != nil {
			return nil, err
		}
		for _, tx := range blk.Transactions {
			txid := tx.TxHash()
			var delta int64
			mine, spends := false, false
			for _, in := range tx.TxIn {
				if u, ok := utxos[in.PreviousOutPoint]; ok {
					addrs[u.Address].Spent += u.Value
					delta -= u.Value
					mine, spends = true, true
					delete(utxos, in.PreviousOutPoint)
				}
			}
			for i, o := range tx.TxOut {
				path, ok := key.Lookup(o.PkScript)
				if !ok || path.Purpose != purpose {
					continue
				}
				addr, err := key.Address(path.Purpose, path.Branch, path.Index)
				if err != nil {
					return nil, err
				}
				a := addrs[addr.EncodeAddress()]
				if a == nil {
					a = &TruthAddress{Address: addr.EncodeAddress(), Branch: path.Branch, Index: path.Index, FirstHeight: height}
					addrs[a.Address] = a
				}
				a.Received += o.Value
				a.Payments++
				delta += o.Value
				mine = true
				utxos[wire.OutPoint{Hash: txid, Index: uint32(i)}] = TruthUTXO{Txid: txid, Vout: uint32(i), Value: o.Value, Address: a.Address, Height: height}
			}
			if !mine {
				continue
			}
			kind := TxPayment
			if spends {
				kind = TxSpend
			}
			t.Txs = append(t.Txs, TruthTx{Txid: txid, Height: height, BlockHash: *hash, Delta: delta, Kind: kind})
		}
	}
	t.settle(addrs, utxos)
	return t, nil
}
