package wallet

import (
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// verdict is the wallet's judgement of one transaction a peer sent.
type verdict byte

const (
	verdictRelevant      verdict = 1
	verdictFalsePositive verdict = 2
)

// matchEntry is one transaction a peer sent inside a block.
type matchEntry struct {
	// pos is the transaction's index in the block.
	pos     uint32
	txid    chainhash.Hash
	verdict verdict
}

// blockRecord lists every transaction peers sent for one applied block,
// in block order. Only blocks with at least one such transaction have a
// record.
type blockRecord struct {
	hash    chainhash.Hash
	entries []matchEntry
}

// Encoded sizes of a block record: the block hash and an entry count, then
// per entry a position, a txid and a verdict byte.
const (
	blockRecordHeader = chainhash.HashSize + 4
	matchEntrySize    = 4 + chainhash.HashSize + 1
)

func (r *blockRecord) encode() []byte {
	b := make([]byte, blockRecordHeader+len(r.entries)*matchEntrySize)
	copy(b, r.hash[:])
	binary.BigEndian.PutUint32(b[chainhash.HashSize:], uint32(len(r.entries)))
	off := blockRecordHeader
	for _, e := range r.entries {
		binary.BigEndian.PutUint32(b[off:], e.pos)
		copy(b[off+4:], e.txid[:])
		b[off+4+chainhash.HashSize] = byte(e.verdict)
		off += matchEntrySize
	}
	return b
}

func decodeBlockRecord(b []byte) (*blockRecord, error) {
	if len(b) < blockRecordHeader {
		return nil, fmt.Errorf("%w: block record of %d bytes", ErrCorrupt, len(b))
	}
	r := &blockRecord{}
	copy(r.hash[:], b)
	n := binary.BigEndian.Uint32(b[chainhash.HashSize:])
	if uint64(len(b)) != uint64(blockRecordHeader)+uint64(n)*matchEntrySize {
		return nil, fmt.Errorf("%w: block record length %d does not hold %d entries", ErrCorrupt, len(b), n)
	}
	r.entries = make([]matchEntry, n)
	off := blockRecordHeader
	for i := range r.entries {
		e := &r.entries[i]
		e.pos = binary.BigEndian.Uint32(b[off:])
		copy(e.txid[:], b[off+4:])
		e.verdict = verdict(b[off+4+chainhash.HashSize])
		if e.verdict != verdictRelevant && e.verdict != verdictFalsePositive {
			return nil, fmt.Errorf("%w: block record verdict %d", ErrCorrupt, e.verdict)
		}
		off += matchEntrySize
	}
	return r, nil
}

// count returns the number of entries with verdict v.
func (r *blockRecord) count(v verdict) uint64 {
	var n uint64
	for _, e := range r.entries {
		if e.verdict == v {
			n++
		}
	}
	return n
}

// heightKey encodes a block height as a big-endian key, so cursors walk
// blocks in height order.
func heightKey(h int32) []byte {
	var k [4]byte
	binary.BigEndian.PutUint32(k[:], uint32(h))
	return k[:]
}

// importedRecord is one single address or raw script watched outside any
// HD account. waddrmgr can only import an address together with its public
// key or redeem script (ImportPublicKey, ImportScript), and a watch-only
// user usually has neither, so these live in bloomwatch's own bucket,
// keyed by output script.
type importedRecord struct {
	ws   watchedScript
	used bool
}

// importedRecord value layout: used flag, kind length and kind, element
// length and element, then the address (possibly empty).
const (
	importedKindLenSize = 1
	importedElemLenSize = 2
)

func (r *importedRecord) encode() []byte {
	kind := []byte(r.ws.kind)
	b := make([]byte, 0, 1+importedKindLenSize+len(kind)+importedElemLenSize+len(r.ws.element)+len(r.ws.address))
	used := byte(0)
	if r.used {
		used = 1
	}
	b = append(b, used, byte(len(kind)))
	b = append(b, kind...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(r.ws.element)))
	b = append(b, r.ws.element...)
	return append(b, r.ws.address...)
}

// decodeImportedRecord decodes the record of the imported script pkScript.
// It runs once per imported script at every Open, so it allocates little:
// the script and its element share one copy, and the kind is one of the
// Kind constants when it is a known one.
func decodeImportedRecord(pkScript, b []byte) (*importedRecord, error) {
	if len(b) < 1+importedKindLenSize {
		return nil, errImportedRecord()
	}
	r := &importedRecord{used: b[0] == 1}
	kl := int(b[1])
	b = b[2:]
	if len(b) < kl+importedElemLenSize {
		return nil, errImportedRecord()
	}
	r.ws.kind = kindOf(b[:kl])
	b = b[kl:]
	el := int(binary.BigEndian.Uint16(b))
	b = b[importedElemLenSize:]
	if len(b) < el || el == 0 {
		return nil, errImportedRecord()
	}
	buf := make([]byte, len(pkScript)+el)
	n := copy(buf, pkScript)
	copy(buf[n:], b[:el])
	r.ws.pkScript, r.ws.element = buf[:n:n], buf[n:]
	r.ws.address = string(b[el:])
	return r, nil
}

// errImportedRecord reports an imported script record that does not
// decode.
func errImportedRecord() error {
	return fmt.Errorf("%w: imported script record malformed", ErrCorrupt)
}

// kindOf returns the Kind constant spelled k, or k as a new Kind.
func kindOf(k []byte) Kind {
	for _, known := range []Kind{KindP2WPKH, KindP2PKH, KindP2SH, KindP2WSH, KindP2TR,
		KindP2SHP2WPKH, KindP2PK, KindMultisig, KindScript} {
		if string(k) == string(known) {
			return known
		}
	}
	return Kind(k)
}

// heightFromKey decodes a heightKey.
func heightFromKey(k []byte) uint32 {
	if len(k) != 4 {
		return 0
	}
	return binary.BigEndian.Uint32(k)
}
