// Package synth is the deterministic generator shared by privacy's
// synthetic universe (privacy.Synthetic) and the synthetic keys and
// scripts of the experiments (privacy/experiments) and the privacy tests:
// splitmix64 lanes drawn from a seed, shaped into hash160-like and
// compressed-public-key-like strings, and the P2PKH scripts of a
// synthetic chain. It is internal so that the generator can be shared
// without widening privacy's exported surface; every function is pure.
package synth

import (
	"encoding/binary"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
)

// Sizes of synthetic forms.
const (
	// HashSize is the size of a hash160-like form.
	HashSize = 20
	// PubKeySize is the size of a compressed-public-key-like form (0x02
	// or 0x03 prefix).
	PubKeySize = 33
	// compressedEven is the prefix of a compressed public key with an even
	// Y; compressedEven|1 is the odd one.
	compressedEven = 0x02
)

// splitmix64 constants (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", 2014).
const (
	golden64  = 0x9e3779b97f4a7c15
	splitMul1 = 0xbf58476d1ce4e5b9
	splitMul2 = 0x94d049bb133111eb
	splitSh1  = 30
	splitSh2  = 27
	splitSh3  = 31
)

// Lanes of the counter: a synthetic candidate draws HashLanes words for
// its primary form and PubKeyLanes for its second form.
const (
	HashLanes   = 3
	PubKeyLanes = 4
	TotalLanes  = HashLanes + PubKeyLanes
	wordBytes   = 8
	wordBits    = 64
)

// Mix64 is splitmix64's finalizer: a bijective 64-bit mixer whose outputs
// pass BigCrush when fed a Weyl sequence.
func Mix64(z uint64) uint64 {
	z = (z ^ z>>splitSh1) * splitMul1
	z = (z ^ z>>splitSh2) * splitMul2
	return z ^ z>>splitSh3
}

// lane returns word j of the stream whose mixed seed is ms: splitmix64's
// output for counter j.
func lane(ms, j uint64) uint64 {
	return Mix64(ms + (j+1)*golden64)
}

// Hash fills a 20-byte form from the three lanes starting at first of the
// stream whose mixed seed is ms, reusing buf when it is large enough.
func Hash(buf []byte, ms, first uint64) []byte {
	if cap(buf) < HashSize {
		buf = make([]byte, HashSize)
	}
	buf = buf[:HashSize]
	binary.LittleEndian.PutUint64(buf[0:], lane(ms, first))
	binary.LittleEndian.PutUint64(buf[wordBytes:], lane(ms, first+1))
	binary.LittleEndian.PutUint32(buf[2*wordBytes:], uint32(lane(ms, first+2)))
	return buf
}

// PubKey fills a 33-byte compressed-key-like form from the four lanes
// starting at first of the stream whose mixed seed is ms, reusing buf
// when it is large enough.
func PubKey(buf []byte, ms, first uint64) []byte {
	if cap(buf) < PubKeySize {
		buf = make([]byte, PubKeySize)
	}
	buf = buf[:PubKeySize]
	var w uint64
	for j := range uint64(PubKeyLanes) {
		w = lane(ms, first+j)
		binary.LittleEndian.PutUint64(buf[1+j*wordBytes:], w)
	}
	buf[0] = compressedEven | byte(w>>(wordBits-1))
	return buf
}

// Key derives key i of a stream from the seed: a 33-byte public-key-like
// string and its real hash160. Streams separate independent key sets
// (a wallet's, background users') drawn from one seed.
func Key(seed, stream, i uint64) (pubKey, hash160 []byte) {
	pk := PubKey(nil, Mix64(seed^Mix64(stream)), i*PubKeyLanes)
	return pk, btcutil.Hash160(pk)
}

// fakeSigSize is the size of the placeholder signature SpendScript pushes
// (a DER signature with its sighash byte is 71-73).
const fakeSigSize = 72

// HeightScript is a coinbase scriptSig that makes the coinbase of block h
// unique.
func HeightScript(h int) []byte {
	s, _ := txscript.NewScriptBuilder().AddInt64(int64(h)).AddInt64(int64(h) + 1).Script()
	return s
}

// P2PKH returns OP_DUP OP_HASH160 <hash> OP_EQUALVERIFY OP_CHECKSIG.
func P2PKH(hash []byte) []byte {
	s, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_DUP).AddOp(txscript.OP_HASH160).
		AddData(hash).AddOp(txscript.OP_EQUALVERIFY).AddOp(txscript.OP_CHECKSIG).Script()
	return s
}

// SpendScript is a P2PKH scriptSig: a placeholder signature and the key.
// Nothing that reads a synthetic chain validates scripts.
func SpendScript(pub []byte) []byte {
	s, _ := txscript.NewScriptBuilder().AddData(make([]byte, fakeSigSize)).AddData(pub).Script()
	return s
}
