package headers

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

const (
	// FileName is the header file inside a store's directory.
	FileName = "headers.dat"

	// lockName is the lock file inside a store's directory.
	lockName = "headers.lock"

	// fileMagic starts every header file.
	fileMagic = "BWHEADER"

	// fileVersion is the format version written by this package.
	fileVersion = 1

	// fileHeaderLen is the length of the file header: magic, version,
	// network magic, genesis hash.
	fileHeaderLen = 8 + 4 + 4 + chainhash.HashSize

	// headerLen is the length of a serialized block header.
	headerLen = wire.MaxBlockHeaderPayload

	// recordLen is the length of a record: a header and its CRC-32C.
	recordLen = headerLen + 4
)

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Repair describes a repair Open made to the header file.
type Repair struct {
	// Path is the file.
	Path string
	// OldSize and NewSize are its sizes before and after.
	OldSize, NewSize int64
	// Dropped is the number of (partial) records removed.
	Dropped int
	// Reason says why.
	Reason string
}

// String describes the repair.
func (r Repair) String() string {
	return fmt.Sprintf("%s: truncated from %d to %d bytes (%d record(s) dropped): %s",
		r.Path, r.OldSize, r.NewSize, r.Dropped, r.Reason)
}

// encodeFileHeader returns the file header of a network.
func encodeFileHeader(net wire.BitcoinNet, genesis *chainhash.Hash) []byte {
	b := make([]byte, fileHeaderLen)
	copy(b, fileMagic)
	binary.LittleEndian.PutUint32(b[8:], fileVersion)
	binary.LittleEndian.PutUint32(b[12:], uint32(net))
	copy(b[16:], genesis[:])
	return b
}

// putRecord appends the record of h to buf.
func putRecord(buf []byte, h *wire.BlockHeader) []byte {
	start := len(buf)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(h.Version))
	buf = append(buf, h.PrevBlock[:]...)
	buf = append(buf, h.MerkleRoot[:]...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(h.Timestamp.Unix()))
	buf = binary.LittleEndian.AppendUint32(buf, h.Bits)
	buf = binary.LittleEndian.AppendUint32(buf, h.Nonce)
	return binary.LittleEndian.AppendUint32(buf, crc32c(buf[start:]))
}

// crc32c is the record checksum.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// decodeHeader parses an 80-byte serialized header.
func decodeHeader(b []byte) wire.BlockHeader {
	var h wire.BlockHeader
	h.Version = int32(binary.LittleEndian.Uint32(b[0:]))
	copy(h.PrevBlock[:], b[4:36])
	copy(h.MerkleRoot[:], b[36:68])
	h.Timestamp = time.Unix(int64(binary.LittleEndian.Uint32(b[68:])), 0)
	h.Bits = binary.LittleEndian.Uint32(b[72:])
	h.Nonce = binary.LittleEndian.Uint32(b[76:])
	return h
}

// recordOK reports whether a record's CRC matches.
func recordOK(rec []byte) bool {
	return crc32c(rec[:headerLen]) == binary.LittleEndian.Uint32(rec[headerLen:])
}

// recordOffset is the file offset of record i.
func recordOffset(i int32) int64 {
	return fileHeaderLen + int64(i)*recordLen
}

// createFile writes a new header file holding only the genesis header,
// atomically (temporary file, fsync, rename, fsync of the directory).
func createFile(path string, net wire.BitcoinNet, genesis *wire.BlockHeader) error {
	gh := genesis.BlockHash()
	buf := encodeFileHeader(net, &gh)
	buf = putRecord(buf, genesis)

	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("headers: create %s: %w", tmp, err)
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("headers: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("headers: sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("headers: close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("headers: rename %s: %w", tmp, err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir fsyncs a directory so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("headers: open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("headers: sync dir %s: %w", dir, err)
	}
	return nil
}

// loadedFile is what scanning a header file produced.
type loadedFile struct {
	nodes nodeArena
	index hashIndex
	size  int64
}

// loadFile validates and indexes the header file f of network r, truncating
// a torn last record (reported through repair).
func loadFile(f *os.File, path string, r *rules, repair func(Repair)) (*loadedFile, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("headers: stat %s: %w", path, err)
	}
	size := st.Size()
	corrupt := func(off int64, reason string, cause error) error {
		return &CorruptError{Path: path, Offset: off, Reason: reason, Err: cause}
	}
	if size < fileHeaderLen+recordLen {
		return nil, corrupt(-1, fmt.Sprintf("file of %d bytes is shorter than a file header and genesis", size), nil)
	}

	fh := make([]byte, fileHeaderLen)
	if _, err := f.ReadAt(fh, 0); err != nil {
		return nil, fmt.Errorf("headers: read %s: %w", path, err)
	}
	if string(fh[:8]) != fileMagic {
		return nil, corrupt(0, "not a bloomwatch header file (bad magic)", nil)
	}
	if v := binary.LittleEndian.Uint32(fh[8:]); v != fileVersion {
		return nil, corrupt(8, fmt.Sprintf("unsupported format version %d", v), nil)
	}
	params := r.net.Params
	if m := wire.BitcoinNet(binary.LittleEndian.Uint32(fh[12:])); m != params.Net {
		return nil, corrupt(12, fmt.Sprintf("network magic %#08x, want %s's %#08x",
			uint32(m), r.net.Name, uint32(params.Net)), ErrWrongNetwork)
	}
	if !params.GenesisHash.IsEqual((*chainhash.Hash)(fh[16:48])) {
		return nil, corrupt(16, fmt.Sprintf("genesis %v, want %s's %v",
			chainhash.Hash(fh[16:48]), r.net.Name, params.GenesisHash), ErrWrongNetwork)
	}

	body := size - fileHeaderLen
	count := body / recordLen
	if count > int64(maxNodes) {
		return nil, corrupt(-1, fmt.Sprintf("%d records, more than the %d a store holds", count, maxNodes), nil)
	}
	if rem := body % recordLen; rem != 0 {
		newSize := fileHeaderLen + count*recordLen
		if err := truncate(f, path, newSize); err != nil {
			return nil, err
		}
		repair(Repair{Path: path, OldSize: size, NewSize: newSize, Dropped: 1,
			Reason: fmt.Sprintf("partial last record of %d bytes", rem)})
		size = newSize
	}

	lf := &loadedFile{
		index: newHashIndex(int(count + 2*wire.MaxBlockHeadersPerMsg)),
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, fileHeaderLen, count*recordLen), 1<<20)
	rec := make([]byte, recordLen)
	for i := int64(0); i < count; i++ {
		off := fileHeaderLen + i*recordLen
		if _, err := io.ReadFull(br, rec); err != nil {
			return nil, fmt.Errorf("headers: read %s at %d: %w", path, off, err)
		}
		if !recordOK(rec) {
			// A crash during an append can leave the last record
			// unfinished, or (on file systems that extend the size
			// before the data lands) a tail of zeros. Anything else
			// is corruption.
			torn := i == count-1
			if !torn {
				zeros, err := allZero(br, rec)
				if err != nil {
					return nil, fmt.Errorf("headers: read %s: %w", path, err)
				}
				torn = zeros
			}
			if torn && i > 0 {
				if err := truncate(f, path, off); err != nil {
					return nil, err
				}
				repair(Repair{Path: path, OldSize: size, NewSize: off, Dropped: int(count - i),
					Reason: fmt.Sprintf("record %d fails its checksum and nothing but zeros follows", i)})
				size = off
				break
			}
			return nil, corrupt(off, fmt.Sprintf("record %d fails its checksum", i), nil)
		}
		hash := headerHash((*[headerLen]byte)(rec))
		bits := binary.LittleEndian.Uint32(rec[72:])
		t := binary.LittleEndian.Uint32(rec[68:])
		if i == 0 {
			if hash != *params.GenesisHash {
				return nil, corrupt(off, fmt.Sprintf("first record %v is not the genesis %v",
					hash, params.GenesisHash), ErrWrongNetwork)
			}
			lf.nodes.push(node{hash: hash, parent: noParent,
				bits: bits, time: t, work: r.info(bits).work})
			lf.index.insert(&lf.nodes, 0)
			continue
		}
		if _, dup := lf.index.lookup(&lf.nodes, &hash); dup {
			return nil, corrupt(off, fmt.Sprintf("record %d repeats header %v", i, hash), nil)
		}
		parent, ok := lf.index.lookup(&lf.nodes, (*chainhash.Hash)(rec[4:36]))
		if !ok {
			return nil, corrupt(off, fmt.Sprintf("record %d (%v) has no earlier parent", i, hash), nil)
		}
		bi := r.info(bits)
		if !bi.inLimit || hashAbove(&hash, &bi.target) {
			return nil, corrupt(off, fmt.Sprintf("record %d (%v) fails proof of work", i, hash), nil)
		}
		p := lf.nodes.at(parent)
		lf.nodes.push(node{hash: hash, parent: parent, height: p.height + 1,
			bits: bits, time: t, work: p.work.add(bi.work)})
		lf.index.insert(&lf.nodes, int32(i))
	}
	lf.size = size
	return lf, nil
}

// allZero reports whether rec (a record that failed its checksum) and
// everything after it in r are zero bytes.
func allZero(r io.Reader, rec []byte) (bool, error) {
	buf := rec
	for {
		for _, b := range buf {
			if b != 0 {
				return false, nil
			}
		}
		n, err := r.Read(rec)
		if n == 0 && err == io.EOF {
			return true, nil
		}
		if err != nil && err != io.EOF {
			return false, err
		}
		buf = rec[:n]
	}
}

// truncate shortens the file to size and syncs it.
func truncate(f *os.File, path string, size int64) error {
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("headers: truncate %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("headers: sync %s: %w", path, err)
	}
	return nil
}
