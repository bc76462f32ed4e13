package netparams

import (
	"bytes"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// The testnet4 parameters bloomwatch wrote by hand before btcd v0.25.0
// defined them (chaincfg.TestNet4Params), built from Bitcoin Core's
// chainparams.cpp. They stay here as the reference btcd's are checked
// against, field by field (TestBtcdTestNet4MatchesCore).

// testNet4Net is testnet4's wire magic (message start 1c 16 3f 28).
const testNet4Net wire.BitcoinNet = 0x283f161c

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

// handTestNet4 are the hand-written parameters of testnet4 (BIP94):
// testnet3's address encodings and deployments, testnet4's genesis block,
// magic, port, DNS seeds and rule heights (BIP34, BIP65 and BIP66 active
// from height 1).
var handTestNet4 = func() chaincfg.Params {
	p := chaincfg.TestNet3Params // address IDs, HD IDs, deployments
	p.Name = "testnet4"
	p.Net = testNet4Net
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

// TestBtcdTestNet4MatchesCore compares btcd's testnet4 parameters, which
// the network uses, with the hand-written ones, field by field: every
// field the header store, the wallet or the peer code reads is equal
// (the genesis block byte for byte), and the two that differ differ as
// Core's testnet4 says they should: btcd enforces BIP94 (the hand-written
// copy of testnet3 did not know the field; the header store applies BIP94
// from netparams.RulesTestnet4 either way) and activates every
// soft fork (CSV, segwit, taproot) from height 1 (testnet3's deployments
// were copied by hand; nothing bloomwatch runs reads them).
func TestBtcdTestNet4MatchesCore(t *testing.T) {
	n, err := Lookup("testnet4")
	require.NoError(t, err)
	btcd, hand := n.Params, &handTestNet4
	require.Same(t, &chaincfg.TestNet4Params, btcd, "testnet4 does not use btcd's parameters")
	var gb, hb bytes.Buffer
	require.NoError(t, btcd.GenesisBlock.Serialize(&gb))
	require.NoError(t, hand.GenesisBlock.Serialize(&hb))
	require.Equal(t, hb.Bytes(), gb.Bytes(), "genesis blocks differ: btcd %v, hand %v", btcd.GenesisHash, hand.GenesisHash)
	require.True(t, btcd.GenesisHash.IsEqual(hand.GenesisHash), "genesis blocks differ: btcd %v, hand %v", btcd.GenesisHash, hand.GenesisHash)
	require.Equal(t, 0, btcd.PowLimit.Cmp(hand.PowLimit), "pow limit: btcd %x, hand %x", btcd.PowLimit, hand.PowLimit)
	differ := map[string]bool{}
	bv, hv := reflect.ValueOf(*btcd), reflect.ValueOf(*hand)
	for i := range bv.NumField() {
		name := bv.Type().Field(i).Name
		switch name {
		case "GenesisBlock", "GenesisHash", "PowLimit":
			continue // compared above, by value
		case "Checkpoints":
			if len(btcd.Checkpoints) != 0 || len(hand.Checkpoints) != 0 {
				differ[name] = true // none is known for testnet4
			}
			continue
		}
		if !reflect.DeepEqual(bv.Field(i).Interface(), hv.Field(i).Interface()) {
			differ[name] = true
		}
	}
	want := map[string]bool{"EnforceBIP94": true, "Deployments": true}
	require.Equal(t, want, differ, "fields that differ: %v, want %v", differ, want)
	require.True(t, btcd.EnforceBIP94, "EnforceBIP94: btcd %v, hand %v", btcd.EnforceBIP94, hand.EnforceBIP94)
	require.False(t, hand.EnforceBIP94, "EnforceBIP94: btcd %v, hand %v", btcd.EnforceBIP94, hand.EnforceBIP94)
	for _, i := range []int{chaincfg.DeploymentCSV, chaincfg.DeploymentSegwit, chaincfg.DeploymentTaproot} {
		require.Equal(t, uint32(1), btcd.Deployments[i].AlwaysActiveHeight, "btcd's testnet4 deployment %d is not active from height 1", i)
	}
	// The magic is 1c 16 3f 28 on the wire.
	require.Equal(t, testNet4Net, btcd.Net, "magic %#x", uint32(btcd.Net))
	require.Equal(t, testNet4Net, wire.TestNet4, "magic %#x", uint32(btcd.Net))
	// What btcd lacks, netparams keeps: the minimum chain work.
	require.NotNil(t, n.MinChainWork, "testnet4 has no minimum chain work")
	require.Greater(t, n.MinChainWork.Sign(), 0, "testnet4 has no minimum chain work")
}

// TestBIP94Flag checks that the rule family that applies BIP94 and btcd's
// EnforceBIP94 agree on every network.
func TestBIP94Flag(t *testing.T) {
	for _, name := range Names() {
		n, _ := Lookup(name)
		require.Equal(t, n.Params.EnforceBIP94, n.Rules.BIP94(), "%s: rules BIP94 %v, params EnforceBIP94 %v", name, n.Rules.BIP94(), n.Params.EnforceBIP94)
	}
}
