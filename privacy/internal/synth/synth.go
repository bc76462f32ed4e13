// Package synth is the deterministic generator shared by privacy's
// synthetic universe (scan.Synthetic) and the synthetic keys and
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
	wordBits    = 64
)

// weyl returns j steps of splitmix64's counter, j*golden64 modulo 2^64 (a
// function so that constant multiples wrap instead of overflowing; the
// compiler folds them).
func weyl(j uint64) uint64 { return j * golden64 }

// Mix64 is splitmix64's finalizer: a bijective 64-bit mixer whose outputs
// pass BigCrush when fed a Weyl sequence.
func Mix64(z uint64) uint64 {
	z = (z ^ z>>splitSh1) * splitMul1
	z = (z ^ z>>splitSh2) * splitMul2
	return z ^ z>>splitSh3
}

// Hash fills a 20-byte form from the three lanes starting at first of the
// stream whose mixed seed is ms, reusing buf when it is large enough.
func Hash(buf []byte, ms, first uint64) []byte {
	if cap(buf) < HashSize {
		buf = make([]byte, HashSize)
	}
	buf = buf[:HashSize]
	putHash((*[HashSize]byte)(buf), laneInput(ms, first))
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
	putPubKey((*[PubKeySize]byte)(buf), laneInput(ms, first))
	return buf
}

// CandidatePubKeys fills pubKeys[i] with the second form of candidate
// first+i of the stream whose mixed seed is ms: the bytes PubKey gives at
// lanes (first+i)*TotalLanes+HashLanes. Successive lanes' inputs are a
// Weyl sequence, so it steps them by addition.
func CandidatePubKeys(ms, first uint64, pubKeys [][PubKeySize]byte) {
	x := laneInput(ms, first*TotalLanes+HashLanes)
	for i := range pubKeys {
		putPubKey(&pubKeys[i], x)
		x += weyl(TotalLanes)
	}
}

// HashWords is the word-major form of a batch of hash forms:
// w[b][i] is bytes 4b to 4b+3 of candidate i's 20-byte form, little-endian
// (the layout of bip37.Words20).
type HashWords = [HashSize / 4][64]uint32

// CandidateWords stores the primary forms of candidates first to
// first+n-1 of the stream whose mixed seed is ms in w, as words: the bytes
// Hash gives at lanes (first+i)*TotalLanes, without going through bytes
// (the scan's generator). n is at most 64.
func CandidateWords(ms, first uint64, w *HashWords, n int) {
	x := laneInput(ms, first*TotalLanes)
	i := 0
	if useAVX2 && n >= 8 {
		var start [8]uint64
		for c := range start {
			start[c] = x + weyl(uint64(c)*TotalLanes)
		}
		groups := min(n, 64) / 8
		candidateWordsAVX2(&start, w, groups)
		i = 8 * groups
		x += weyl(uint64(i) * TotalLanes)
	}
	for ; i < n; i++ {
		l0, l1, l2 := Mix64(x), Mix64(x+weyl(1)), Mix64(x+weyl(2))
		j := i & 63
		w[0][j], w[1][j] = uint32(l0), uint32(l0>>32)
		w[2][j], w[3][j] = uint32(l1), uint32(l1>>32)
		w[4][j] = uint32(l2)
		x += weyl(TotalLanes)
	}
}

// laneInput is the input splitmix64 mixes for word first of the stream
// whose mixed seed is ms; word first+j mixes laneInput + weyl(j).
func laneInput(ms, first uint64) uint64 {
	return ms + (first+1)*golden64
}

// putHash writes a 20-byte form from the three lanes whose first input is x.
func putHash(d *[HashSize]byte, x uint64) {
	binary.LittleEndian.PutUint64(d[0:8], Mix64(x))
	binary.LittleEndian.PutUint64(d[8:16], Mix64(x+weyl(1)))
	binary.LittleEndian.PutUint32(d[16:20], uint32(Mix64(x+weyl(2))))
}

// putPubKey writes a 33-byte form from the four lanes whose first input is
// x: the lanes little-endian after a prefix byte, 0x02 or 0x03 by the top
// bit of the last lane.
func putPubKey(d *[PubKeySize]byte, x uint64) {
	binary.LittleEndian.PutUint64(d[1:9], Mix64(x))
	binary.LittleEndian.PutUint64(d[9:17], Mix64(x+weyl(1)))
	binary.LittleEndian.PutUint64(d[17:25], Mix64(x+weyl(2)))
	w := Mix64(x + weyl(3))
	binary.LittleEndian.PutUint64(d[25:33], w)
	d[0] = compressedEven | byte(w>>(wordBits-1))
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
