package wallet

import (
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
)

// bktDescriptors is the nested bucket of ownNS holding the imported
// descriptors, keyed by a big-endian sequence number (import order). A
// wallet created before descriptors existed has none until its first
// AddDescriptor; readers treat a missing bucket as empty, so the format
// version is unchanged.
var bktDescriptors = []byte("descriptors")

// descriptorRecord is one imported descriptor and where the wallet
// watches it: a ranged one is branches of a waddrmgr account, a
// non-ranged one scripts of the imported bucket. The descriptor text is
// kept as given and never parsed again at open, so a wallet stays
// readable whatever later parsers accept.
type descriptorRecord struct {
	// desc is the descriptor with its checksum.
	desc   string
	kind   Kind
	ranged bool
	// scope, account and branches locate a ranged descriptor's account;
	// path is its account key's derivation path from the key origin
	// ("m/84'/1'/0'"), empty without one.
	scope    waddrmgr.KeyScope
	account  uint32
	branches []uint32
	path     string
	// scripts are a non-ranged descriptor's output scripts.
	scripts [][]byte
	// multisig marks a multi() or sortedmulti() descriptor; a ranged one
	// is watched by the wallet's own derivation (descriptor_msig.go), its
	// scope is msigScope and its account its own number.
	multisig bool
	// id is the record's key, its number in import order (not encoded).
	id uint32
}

// descriptorRecordVersion is the layout of an encoded descriptorRecord.
const descriptorRecordVersion = 1

// Flags of an encoded descriptorRecord.
const (
	descFlagRanged   = 1
	descFlagMultisig = 2
)

// encode serializes r: version, flags, descriptor and kind
// (length-prefixed), then for a ranged record the scope, account,
// branches and path, else the scripts.
func (r *descriptorRecord) encode() []byte {
	b := []byte{descriptorRecordVersion, 0}
	if r.ranged {
		b[1] |= descFlagRanged
	}
	if r.multisig {
		b[1] |= descFlagMultisig
	}
	b = appendBytes16(b, []byte(r.desc))
	b = append(b, byte(len(r.kind)))
	b = append(b, r.kind...)
	if r.ranged {
		b = binary.BigEndian.AppendUint32(b, r.scope.Purpose)
		b = binary.BigEndian.AppendUint32(b, r.scope.Coin)
		b = binary.BigEndian.AppendUint32(b, r.account)
		b = append(b, byte(len(r.branches)))
		for _, br := range r.branches {
			b = binary.BigEndian.AppendUint32(b, br)
		}
		return appendBytes16(b, []byte(r.path))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(r.scripts)))
	for _, s := range r.scripts {
		b = appendBytes16(b, s)
	}
	return b
}

// appendBytes16 appends v with a 2-byte length.
func appendBytes16(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
	return append(b, v...)
}

// recordReader reads an encoded record, remembering the first short read.
type recordReader struct {
	b   []byte
	bad bool
}

func (rr *recordReader) take(n int) []byte {
	if rr.bad || len(rr.b) < n {
		rr.bad = true
		return nil
	}
	v := rr.b[:n]
	rr.b = rr.b[n:]
	return v
}

func (rr *recordReader) u8() int {
	v := rr.take(1)
	if v == nil {
		return 0
	}
	return int(v[0])
}

func (rr *recordReader) u16() int {
	v := rr.take(2)
	if v == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(v))
}

func (rr *recordReader) u32() uint32 {
	v := rr.take(4)
	if v == nil {
		return 0
	}
	return binary.BigEndian.Uint32(v)
}

func (rr *recordReader) bytes16() []byte {
	return append([]byte(nil), rr.take(rr.u16())...)
}

// decodeDescriptorRecord parses an encoded record; anything malformed is
// ErrCorrupt.
func decodeDescriptorRecord(v []byte) (*descriptorRecord, error) {
	rr := &recordReader{b: v}
	if rr.u8() != descriptorRecordVersion {
		return nil, fmt.Errorf("%w: descriptor record of an unknown layout", ErrCorrupt)
	}
	r := &descriptorRecord{}
	flags := rr.u8()
	r.ranged, r.multisig = flags&descFlagRanged != 0, flags&descFlagMultisig != 0
	r.desc = string(rr.bytes16())
	r.kind = Kind(rr.take(rr.u8()))
	if r.ranged {
		r.scope = waddrmgr.KeyScope{Purpose: rr.u32(), Coin: rr.u32()}
		r.account = rr.u32()
		n := rr.u8()
		for range n {
			r.branches = append(r.branches, rr.u32())
		}
		r.path = string(rr.bytes16())
	} else {
		n := rr.u16()
		for range n {
			r.scripts = append(r.scripts, rr.bytes16())
		}
	}
	if rr.bad || len(rr.b) != 0 || r.desc == "" {
		return nil, fmt.Errorf("%w: descriptor record malformed", ErrCorrupt)
	}
	return r, nil
}

// nextDescriptorID returns the number the next descriptor record gets.
func nextDescriptorID(own walletdb.ReadBucket) (uint32, error) {
	bkt := own.NestedReadBucket(bktDescriptors)
	if bkt == nil {
		return 0, nil
	}
	k, _ := bkt.ReadCursor().Last()
	if k == nil {
		return 0, nil
	}
	if len(k) != 4 {
		return 0, fmt.Errorf("%w: descriptor key of %d bytes", ErrCorrupt, len(k))
	}
	return binary.BigEndian.Uint32(k) + 1, nil
}

// putDescriptorRecord appends r to the descriptors bucket, creating it in
// a wallet that has none yet.
func putDescriptorRecord(own walletdb.ReadWriteBucket, r *descriptorRecord) error {
	bkt, err := own.CreateBucketIfNotExists(bktDescriptors)
	if err != nil {
		return fmt.Errorf("descriptors bucket: %w", err)
	}
	next, err := nextDescriptorID(own)
	if err != nil {
		return err
	}
	key := binary.BigEndian.AppendUint32(nil, next)
	if err := bkt.Put(key, r.encode()); err != nil {
		return fmt.Errorf("store descriptor: %w", err)
	}
	return nil
}

// readDescriptorRecords returns the stored descriptors in import order.
func readDescriptorRecords(own walletdb.ReadBucket) ([]*descriptorRecord, error) {
	bkt := own.NestedReadBucket(bktDescriptors)
	if bkt == nil {
		return nil, nil
	}
	var out []*descriptorRecord
	err := bkt.ForEach(func(k, v []byte) error {
		r, err := decodeDescriptorRecord(v)
		if err != nil {
			return err
		}
		if len(k) != 4 {
			return fmt.Errorf("%w: descriptor key of %d bytes", ErrCorrupt, len(k))
		}
		r.id = binary.BigEndian.Uint32(k)
		out = append(out, r)
		return nil
	})
	return out, err
}
