package bip37

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Text forms of a tweak and an outpoint.
const (
	hexPrefix   = "0x"
	hexBase     = 16
	decimalBase = 10
	uint32Bits  = 32
	txidHexLen  = 2 * chainhash.HashSize
)

// ParseTweak parses a filter's nTweak written as a decimal or 0x-prefixed
// hexadecimal uint32, and no other base (a leading zero is not read as
// octal). The error names the input.
func ParseTweak(s string) (uint32, error) {
	digits, base := s, decimalBase
	if strings.HasPrefix(strings.ToLower(s), hexPrefix) {
		digits, base = s[len(hexPrefix):], hexBase
	}
	v, err := strconv.ParseUint(digits, base, uint32Bits)
	if err != nil {
		return 0, fmt.Errorf("%q: want a decimal or 0x-hex uint32", s)
	}
	return uint32(v), nil
}

// ParseOutPoint parses an outpoint written TXID:INDEX, as
// wire.OutPoint.String writes it: the txid in 64 hex digits in display
// (byte-reversed) order, the output index a decimal uint32. The error
// names the input and the part that is wrong.
func ParseOutPoint(s string) (wire.OutPoint, error) {
	txid, index, ok := strings.Cut(s, ":")
	if !ok || len(txid) != txidHexLen {
		return wire.OutPoint{}, fmt.Errorf("%q: want TXID:INDEX with a 64-digit hex txid", s)
	}
	if _, err := hex.DecodeString(txid); err != nil {
		return wire.OutPoint{}, fmt.Errorf("%q: bad txid: %w", s, err)
	}
	h, err := chainhash.NewHashFromStr(txid)
	if err != nil {
		return wire.OutPoint{}, fmt.Errorf("%q: bad txid: %w", s, err)
	}
	i, err := strconv.ParseUint(index, decimalBase, uint32Bits)
	if err != nil {
		return wire.OutPoint{}, fmt.Errorf("%q: bad index: want a decimal uint32", s)
	}
	return wire.OutPoint{Hash: *h, Index: uint32(i)}, nil
}

// DecodeMerkleBlock decodes a merkleblock message payload, refusing bytes
// after the message. It checks the encoding only: VerifyMerkleBlock runs
// the partial merkle tree's checks.
func DecodeMerkleBlock(payload []byte) (*wire.MsgMerkleBlock, error) {
	var mb wire.MsgMerkleBlock
	r := bytes.NewReader(payload)
	if err := mb.BtcDecode(r, wire.ProtocolVersion, wire.LatestEncoding); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d trailing bytes after the message", r.Len())
	}
	return &mb, nil
}
