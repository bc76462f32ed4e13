package netparams

import (
	"math/big"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestNet4Net is testnet4's wire magic (message start 1c 16 3f 28).
const TestNet4Net wire.BitcoinNet = 0x283f161c

// testNet4GenesisText is the text in the testnet4 genesis coinbase: a date
// and the hash of mainnet block 840000.
const testNet4GenesisText = "03/May/2024 " +
	"000000000000000000001ebd58c244970b3aa9d783bb001011fbe8ea8e98e00e"

// testNet4GenesisCoinbase is the coinbase of the testnet4 genesis block, as
// Bitcoin Core's CreateGenesisBlock builds it: scriptSig
// <486604799> <4> <text> and an output of 50 BTC to a 33-byte all-zero
// "public key" with OP_CHECKSIG.
var testNet4GenesisCoinbase = func() wire.MsgTx {
	sig := []byte{0x04, 0xff, 0xff, 0x00, 0x1d, 0x01, 0x04}
	// The text is 76 bytes: too long for a direct push, so OP_PUSHDATA1.
	sig = append(sig, 0x4c, byte(len(testNet4GenesisText)))
	sig = append(sig, testNet4GenesisText...)

	pk := make([]byte, 0, 35)
	pk = append(pk, 0x21)
	pk = append(pk, make([]byte, 33)...)
	pk = append(pk, 0xac)

	return wire.MsgTx{
		Version: 1,
		TxIn: []*wire.TxIn{{
			PreviousOutPoint: wire.OutPoint{Index: 0xffffffff},
			SignatureScript:  sig,
			Sequence:         0xffffffff,
		}},
		TxOut:    []*wire.TxOut{{Value: 50 * 1e8, PkScript: pk}},
		LockTime: 0,
	}
}()

// testNet4GenesisMerkleRoot is the txid of the genesis coinbase.
var testNet4GenesisMerkleRoot = mustHash(
	"7aa0a7ae1e223414cb807e40cd57e667b718e42aaf9306db9102fe28912b7b4e")

// testNet4GenesisHash is the hash of the testnet4 genesis block.
var testNet4GenesisHash = mustHash(
	"00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043")

// testNet4GenesisBlock is the first block of testnet4.
var testNet4GenesisBlock = wire.MsgBlock{
	Header: wire.BlockHeader{
		Version:    1,
		PrevBlock:  chainhash.Hash{},
		MerkleRoot: *testNet4GenesisMerkleRoot,
		Timestamp:  time.Unix(1714777860, 0), // 2024-05-03 23:11:00 UTC
		Bits:       0x1d00ffff,
		Nonce:      393743547,
	},
	Transactions: []*wire.MsgTx{&testNet4GenesisCoinbase},
}

// testNet4PowLimit is 2^224 - 1, as on mainnet.
var testNet4PowLimit = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 224), big.NewInt(1))

// TestNet4Params are the parameters of testnet4 (BIP94), which btcd v0.24
// does not define: testnet3's address encodings and deployments, testnet4's
// genesis block, magic, port, DNS seeds and rule heights (BIP34, BIP65 and
// BIP66 active from height 1). Checkpoints are empty: no testnet4 block hash
// beyond genesis was verified for this release.
var TestNet4Params = func() chaincfg.Params {
	p := chaincfg.TestNet3Params // address IDs, HD IDs, deployments
	p.Name = "testnet4"
	p.Net = TestNet4Net
	p.DefaultPort = "48333"
	// Both seeds run sipa's bitcoin-seeder, which answers x<services>.
	// subdomains.
	p.DNSSeeds = []chaincfg.DNSSeed{
		{Host: "seed.testnet4.bitcoin.sprovoost.nl", HasFiltering: true},
		{Host: "seed.testnet4.wiz.biz", HasFiltering: true},
	}
	p.GenesisBlock = &testNet4GenesisBlock
	p.GenesisHash = testNet4GenesisHash
	p.PowLimit = testNet4PowLimit
	p.PowLimitBits = 0x1d00ffff
	p.PoWNoRetargeting = false
	p.BIP0034Height = 1
	p.BIP0065Height = 1
	p.BIP0066Height = 1
	p.CoinbaseMaturity = 100
	p.SubsidyReductionInterval = 210000
	p.TargetTimespan = 14 * 24 * time.Hour
	p.TargetTimePerBlock = 10 * time.Minute
	p.RetargetAdjustmentFactor = 4
	p.ReduceMinDifficulty = true
	p.MinDiffReductionTime = 20 * time.Minute
	p.GenerateSupported = false
	p.Checkpoints = nil
	p.RelayNonStdTxs = true
	return p
}()

// mustHash parses a constant hash; it panics only on a typo in this file.
func mustHash(s string) *chainhash.Hash {
	h, err := chainhash.NewHashFromStr(s)
	if err != nil {
		panic("netparams: bad constant hash " + s + ": " + err.Error())
	}
	return h
}
