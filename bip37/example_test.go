package bip37_test

import (
	"encoding/hex"
	"fmt"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// mustHex decodes a hex literal.
func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// A filter sized for three elements at a 1 % false-positive rate, filled
// with the elements of Bitcoin Core's bloom_create_insert_serialize test:
// its filterload payload is Core's, byte for byte.
func ExampleNewFilter() {
	f, err := bip37.NewFilter(3, 0.01, 0, bip37.UpdateAll)
	if err != nil {
		panic(err)
	}
	for _, e := range []string{
		"99108ad8ed9bb6274d3980bab5a85c048f0950c8",
		"b5a2c786d9ef4658287ced5914b37a1b4aa32eee",
		"b9300670b4c5366e95b2699e8b18bc75e5f729c5",
	} {
		f.Add(mustHex(e))
	}
	fmt.Printf("%d bytes, %d hash functions\n", f.Size(), f.HashFuncs())
	fmt.Printf("filterload %x\n", f.Serialize())
	// Output:
	// 3 bytes, 5 hash functions
	// filterload 03614e9b050000000000000001
}

// Matches is the membership test a serving node applies to every data
// push, outpoint and txid of a transaction. The second element differs
// from the inserted one in a single bit.
func ExampleFilter_Matches() {
	f, err := bip37.NewFilter(3, 0.01, 0, bip37.UpdateAll)
	if err != nil {
		panic(err)
	}
	f.Add(mustHex("99108ad8ed9bb6274d3980bab5a85c048f0950c8"))
	fmt.Println(f.Matches(mustHex("99108ad8ed9bb6274d3980bab5a85c048f0950c8")))
	fmt.Println(f.Matches(mustHex("19108ad8ed9bb6274d3980bab5a85c048f0950c8")))
	// Output:
	// true
	// false
}

// A full node builds a merkleblock for the transactions a filter matched
// (here the second and the fourth of five); the light client verifies the
// partial merkle tree against the header's merkle root and learns which
// transactions it proves.
func ExampleVerifyMerkleBlock() {
	block := wire.NewMsgBlock(wire.NewBlockHeader(1, &chainhash.Hash{}, &chainhash.Hash{}, 0, 0))
	for i := range 5 {
		tx := wire.NewMsgTx(wire.TxVersion)
		tx.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: uint32(i)}})
		tx.AddTxOut(wire.NewTxOut(int64(1000*(i+1)), []byte{txscript.OP_TRUE}))
		block.AddTransaction(tx)
	}
	block.Header.MerkleRoot = blockchain.CalcMerkleRoot(btcutil.NewBlock(block).Transactions(), false)

	mb := bip37.BuildMerkleBlock(block, func(i int, _ *wire.MsgTx) bool { return i == 1 || i == 3 })
	matches, indexes, err := bip37.VerifyMerkleBlock(mb)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d transactions, %d hashes, %d flag bytes\n", mb.Transactions, len(mb.Hashes), len(mb.Flags))
	for i, txid := range matches {
		fmt.Printf("tx %d %s\n", indexes[i], txid)
	}
	// Output:
	// 5 transactions, 5 hashes, 2 flag bytes
	// tx 1 6e09d336758ec77287f6a56b8a74378839d2e3840abe8386ca26a5ad59ea8d45
	// tx 3 61472969f86f50061db116a9f9a16dd1d502cbf22d9a09bf887e07c28366879a
}
