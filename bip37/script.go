package bip37

import "encoding/binary"

// Script opcodes this package inspects.
const (
	opFalse          = 0x00
	opPushData1      = 0x4c
	opPushData2      = 0x4d
	opPushData4      = 0x4e
	op1Negate        = 0x4f
	op1              = 0x51
	op16             = 0x60
	opCheckSig       = 0xac
	opCheckMultiSig  = 0xae
	pushData1Width   = 1
	pushData2Width   = 2
	pushData4Width   = 4
	smallIntBase     = op1 - 1
	compressedKeyLen = 33
	fullKeyLen       = 65
	scriptNumMaxLen  = 4
	scriptNumSignBit = 0x80
	maxMultisigKeys  = 20 // Core's MAX_PUBKEYS_PER_MULTISIG
	maxSmallInt      = op16 - smallIntBase
)

// Public key header bytes (the first byte of a serialized key).
const (
	keyCompressedEven = 0x02
	keyCompressedOdd  = 0x03
	keyUncompressed   = 0x04
	keyHybridEven     = 0x06
	keyHybridOdd      = 0x07
)

// scriptOp reads the operation at the start of script the way Core's
// GetScriptOp does. It returns the opcode, the pushed bytes (nil for
// non-push opcodes; a sub-slice of script, never a copy), the remaining
// script, and false when the operation is truncated. A parse failure ends
// iteration; the operations before it stand.
func scriptOp(script []byte) (op byte, data, rest []byte, ok bool) {
	if len(script) == 0 {
		return 0, nil, nil, false
	}
	op = script[0]
	script = script[1:]
	if op > opPushData4 {
		return op, nil, script, true
	}
	var size uint64
	switch op {
	case opPushData1:
		if len(script) < pushData1Width {
			return op, nil, nil, false
		}
		size = uint64(script[0])
		script = script[pushData1Width:]
	case opPushData2:
		if len(script) < pushData2Width {
			return op, nil, nil, false
		}
		size = uint64(binary.LittleEndian.Uint16(script))
		script = script[pushData2Width:]
	case opPushData4:
		if len(script) < pushData4Width {
			return op, nil, nil, false
		}
		size = uint64(binary.LittleEndian.Uint32(script))
		script = script[pushData4Width:]
	default:
		size = uint64(op)
	}
	if uint64(len(script)) < size {
		return op, nil, nil, false
	}
	return op, script[:size:size], script[size:], true
}

// validPubKeySize is Core's CPubKey::ValidSize: the header byte fixes the
// length (0x02/0x03: 33 bytes; 0x04/0x06/0x07: 65 bytes).
func validPubKeySize(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	switch key[0] {
	case keyCompressedEven, keyCompressedOdd:
		return len(key) == compressedKeyLen
	case keyUncompressed, keyHybridEven, keyHybridOdd:
		return len(key) == fullKeyLen
	}
	return false
}

// isPayToPubKey is Core's MatchPayToPubkey: <33 or 65-byte key> OP_CHECKSIG
// pushed with the direct push opcode.
func isPayToPubKey(script []byte) bool {
	n := len(script)
	if n != compressedKeyLen+2 && n != fullKeyLen+2 {
		return false
	}
	return int(script[0]) == n-2 && script[n-1] == opCheckSig && validPubKeySize(script[1:n-1])
}

// isBareMultisig is Core's MatchMultisig, as its Solver uses it:
// <m> <key>... <n> OP_CHECKMULTISIG with 1 <= m <= n <= 20, each count an
// OP_1..OP_16 or a minimally encoded number push, keys of valid size, and n
// equal to the number of keys. txscript.GetScriptClass is looser (it counts
// pushes of any size as keys and does not compare m with n) and narrower
// (only OP_1..OP_16 counts), so the two disagree on such scripts.
//
// Solver tests P2SH, witness programs and OP_RETURN outputs first; none of
// those can also satisfy isPayToPubKey or isBareMultisig (their first bytes
// differ, and a witness program's single push would have to span the
// counts), so the checks here alone give Core's PUBKEY/MULTISIG answer.
func isBareMultisig(script []byte) bool {
	if len(script) < 1 || script[len(script)-1] != opCheckMultiSig {
		return false
	}
	op, data, rest, ok := scriptOp(script)
	if !ok {
		return false
	}
	required, ok := scriptCount(op, data, 1, maxMultisigKeys)
	if !ok {
		return false
	}
	keys := 0
	for {
		op, data, rest, ok = scriptOp(rest)
		if !ok || !validPubKeySize(data) {
			break
		}
		keys++
	}
	if !ok {
		return false
	}
	total, ok := scriptCount(op, data, required, maxMultisigKeys)
	if !ok || total != keys {
		return false
	}
	return len(rest) == 1 // only OP_CHECKMULTISIG may follow
}

// scriptCount is Core's GetScriptNumber: a number in [lo, hi] given as
// OP_1..OP_16 or as a minimal push of a minimally encoded CScriptNum.
func scriptCount(op byte, data []byte, lo, hi int) (int, bool) {
	var n int
	switch {
	case op >= op1 && op <= op16:
		n = int(op - smallIntBase)
	case op > opFalse && op <= opPushData4:
		if !minimalPush(op, data) {
			return 0, false
		}
		v, ok := minimalScriptNum(data)
		if !ok {
			return 0, false
		}
		n = v
	default:
		return 0, false
	}
	if n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// minimalPush is Core's CheckMinimalPush for a push opcode.
func minimalPush(op byte, data []byte) bool {
	const directPushMax = opPushData1 - 1
	const pushData1Max = 0xff
	const pushData2Max = 0xffff
	switch {
	case len(data) == 0:
		return op == opFalse
	case len(data) == 1 && data[0] >= 1 && data[0] <= maxSmallInt:
		return false // should have used OP_1 .. OP_16
	case len(data) == 1 && data[0] == scriptNumSignBit|1:
		return false // should have used OP_1NEGATE
	case len(data) <= directPushMax:
		return int(op) == len(data)
	case len(data) <= pushData1Max:
		return op == opPushData1
	case len(data) <= pushData2Max:
		return op == opPushData2
	}
	return true
}

// minimalScriptNum decodes a CScriptNum with fRequireMinimal and Core's
// default 4-byte limit.
func minimalScriptNum(data []byte) (int, bool) {
	if len(data) > scriptNumMaxLen {
		return 0, false
	}
	if len(data) == 0 {
		return 0, true
	}
	last := data[len(data)-1]
	if last&^scriptNumSignBit == 0 && (len(data) == 1 || data[len(data)-2]&scriptNumSignBit == 0) {
		return 0, false
	}
	var v int64
	for i, b := range data {
		v |= int64(b) << (bitsPerByte * i)
	}
	if last&scriptNumSignBit != 0 {
		v &^= int64(scriptNumSignBit) << (bitsPerByte * (len(data) - 1))
		v = -v
	}
	return int(v), true
}
