package bip37

import (
	"encoding/binary"

	"github.com/btcsuite/btcd/wire"
)

// This file keeps a deliberately plain transcription of Bitcoin Core's
// CBloomFilter (bloom.cpp), GetScriptOp (script.cpp) and Solver
// (solver.cpp), with none of the optimisations of the package, so property
// tests can compare the fast implementation against it.

// referenceMurmur3 is MurmurHash3_x86_32 written byte by byte.
func referenceMurmur3(seed uint32, data []byte) uint32 {
	rotl := func(x uint32, r uint) uint32 { return x<<r | x>>(32-r) }
	h := seed
	nblocks := len(data) / 4
	for i := 0; i < nblocks; i++ {
		k := uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24
		k *= 0xcc9e2d51
		k = rotl(k, 15)
		k *= 0x1b873593
		h ^= k
		h = rotl(h, 13)
		h = h*5 + 0xe6546b64
	}
	tail := data[nblocks*4:]
	var k uint32
	if len(tail) >= 3 {
		k ^= uint32(tail[2]) << 16
	}
	if len(tail) >= 2 {
		k ^= uint32(tail[1]) << 8
	}
	if len(tail) >= 1 {
		k ^= uint32(tail[0])
		k *= 0xcc9e2d51
		k = rotl(k, 15)
		k *= 0x1b873593
		h ^= k
	}
	h ^= uint32(len(data))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// refFilter is CBloomFilter.
type refFilter struct {
	data      []byte
	hashFuncs uint32
	tweak     uint32
	flags     uint8
}

func (f *refFilter) hash(i uint32, key []byte) uint32 {
	return uint32(uint64(referenceMurmur3(i*0xFBA4C795+f.tweak, key)) % (uint64(len(f.data)) * 8))
}

func (f *refFilter) insert(key []byte) {
	if len(f.data) == 0 {
		return
	}
	for i := uint32(0); i < f.hashFuncs; i++ {
		idx := f.hash(i, key)
		f.data[idx>>3] |= 1 << (7 & idx)
	}
}

func (f *refFilter) contains(key []byte) bool {
	if len(f.data) == 0 {
		return true
	}
	for i := uint32(0); i < f.hashFuncs; i++ {
		idx := f.hash(i, key)
		if f.data[idx>>3]&(1<<(7&idx)) == 0 {
			return false
		}
	}
	return true
}

func refOutPoint(op wire.OutPoint) []byte {
	b := make([]byte, 36)
	copy(b, op.Hash[:])
	binary.LittleEndian.PutUint32(b[32:], op.Index)
	return b
}

// refOp is one parsed script operation.
type refOp struct {
	opcode byte
	data   []byte
}

// refParse returns the operations before the first parse failure, as
// repeated GetScriptOp calls see them, and whether the script parsed fully.
func refParse(script []byte) ([]refOp, bool) {
	var ops []refOp
	pc := 0
	for pc < len(script) {
		opcode := script[pc]
		pc++
		var data []byte
		if opcode <= 0x4e {
			var size int
			switch {
			case opcode < 0x4c:
				size = int(opcode)
			case opcode == 0x4c:
				if len(script)-pc < 1 {
					return ops, false
				}
				size = int(script[pc])
				pc++
			case opcode == 0x4d:
				if len(script)-pc < 2 {
					return ops, false
				}
				size = int(script[pc]) | int(script[pc+1])<<8
				pc += 2
			default:
				if len(script)-pc < 4 {
					return ops, false
				}
				size64 := uint64(script[pc]) | uint64(script[pc+1])<<8 | uint64(script[pc+2])<<16 | uint64(script[pc+3])<<24
				pc += 4
				if size64 > uint64(len(script)-pc) {
					return ops, false
				}
				size = int(size64)
			}
			if len(script)-pc < size {
				return ops, false
			}
			data = script[pc : pc+size]
			pc += size
		}
		ops = append(ops, refOp{opcode: opcode, data: data})
	}
	return ops, true
}

// refValidPubKey is CPubKey::ValidSize.
func refValidPubKey(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	switch b[0] {
	case 2, 3:
		return len(b) == 33
	case 4, 6, 7:
		return len(b) == 65
	}
	return false
}

// refNumber is GetScriptNumber (CheckMinimalPush + CScriptNum minimal).
func refNumber(op refOp, lo, hi int) (int, bool) {
	var n int
	switch {
	case op.opcode >= 0x51 && op.opcode <= 0x60:
		n = int(op.opcode) - 0x50
	case op.opcode > 0 && op.opcode <= 0x4e:
		d := op.data
		minimal := false
		switch {
		case len(d) == 0:
			minimal = op.opcode == 0
		case len(d) == 1 && d[0] >= 1 && d[0] <= 16:
		case len(d) == 1 && d[0] == 0x81:
		case len(d) <= 75:
			minimal = int(op.opcode) == len(d)
		case len(d) <= 255:
			minimal = op.opcode == 0x4c
		case len(d) <= 65535:
			minimal = op.opcode == 0x4d
		default:
			minimal = true
		}
		if !minimal || len(d) > 4 {
			return 0, false
		}
		if len(d) > 0 && d[len(d)-1]&0x7f == 0 && (len(d) == 1 || d[len(d)-2]&0x80 == 0) {
			return 0, false
		}
		var v int64
		for i := range d {
			v |= int64(d[i]) << (8 * i)
		}
		if len(d) > 0 && d[len(d)-1]&0x80 != 0 {
			v = -(v & ^(int64(0x80) << (8 * (len(d) - 1))))
		}
		n = int(v)
	default:
		return 0, false
	}
	if n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// refIsPubKeyOrMultisig reports Solver(script) in {PUBKEY, MULTISIG}.
func refIsPubKeyOrMultisig(script []byte) bool {
	// MatchPayToPubkey.
	if (len(script) == 67 && script[0] == 65 || len(script) == 35 && script[0] == 33) &&
		script[len(script)-1] == 0xac && refValidPubKey(script[1:len(script)-1]) {
		return true
	}
	// MatchMultisig, on the parsed operations.
	if len(script) == 0 || script[len(script)-1] != 0xae {
		return false
	}
	ops, _ := refParse(script)
	if len(ops) < 3 {
		return false
	}
	m, ok := refNumber(ops[0], 1, 20)
	if !ok {
		return false
	}
	i := 1
	for i < len(ops) && refValidPubKey(ops[i].data) {
		i++
	}
	if i >= len(ops) {
		return false
	}
	n, ok := refNumber(ops[i], m, 20)
	if !ok || n != i-1 {
		return false
	}
	// The count must be followed by exactly the final OP_CHECKMULTISIG.
	return i == len(ops)-2 && ops[i+1].opcode == 0xae && ops[i+1].data == nil
}

// isRelevantAndUpdate is CBloomFilter::IsRelevantAndUpdate.
func (f *refFilter) isRelevantAndUpdate(tx *wire.MsgTx) bool {
	if len(f.data) == 0 {
		return true
	}
	found := false
	hash := tx.TxHash()
	if f.contains(hash[:]) {
		found = true
	}
	for i, out := range tx.TxOut {
		ops, _ := refParse(out.PkScript)
		for _, op := range ops {
			if len(op.data) != 0 && f.contains(op.data) {
				found = true
				switch f.flags & 3 {
				case 1:
					f.insert(refOutPoint(wire.OutPoint{Hash: hash, Index: uint32(i)}))
				case 2:
					if refIsPubKeyOrMultisig(out.PkScript) {
						f.insert(refOutPoint(wire.OutPoint{Hash: hash, Index: uint32(i)}))
					}
				}
				break
			}
		}
	}
	if found {
		return true
	}
	for _, in := range tx.TxIn {
		if f.contains(refOutPoint(in.PreviousOutPoint)) {
			return true
		}
		ops, _ := refParse(in.SignatureScript)
		for _, op := range ops {
			if len(op.data) != 0 && f.contains(op.data) {
				return true
			}
		}
	}
	return false
}
