package wallet

import (
	"encoding/binary"
	"fmt"

	"github.com/btcsuite/btcwallet/walletdb"
)

// Top-level walletdb buckets: one namespace per btcwallet package and one
// for bloomwatch's own records.
var (
	waddrmgrNS = []byte("waddrmgr")
	wtxmgrNS   = []byte("wtxmgr")
	ownNS      = []byte("bloomwatch")
)

// Keys and nested buckets inside ownNS.
var (
	keyFormat   = []byte("format")
	keyNetwork  = []byte("network")
	keyBirthday = []byte("birthday")
	keyGaps     = []byte("gaps")
	keyFirst    = []byte("first-applied")
	keyCounters = []byte("counters")
	keyRescan   = []byte("rescan-pending")
	bktImported = []byte("imported")
	bktBlocks   = []byte("blocks")
	// bktMempoolFP held the txid of every unconfirmed false positive,
	// for good. They are no longer stored (see mempoolFPs); the bucket
	// stays, emptied at Open, for older versions that require it.
	bktMempoolFP = []byte("mempool-fp")
)

// formatVersion is the layout of ownNS this code reads and writes: 2
// keeps the HD accounts' derived addresses in hd-scripts (hdstore.go);
// Open migrates a wallet of format 1 (formatHDInWaddrmgr).
const formatVersion = 2

// noHeight marks "no block" in stored heights.
const noHeight = -1

// counters are the wallet's match statistics for the blocks on its current
// chain and the mempool. They live in the same database transaction as the
// blocks they count, so a crash can neither lose nor double them.
type counters struct {
	// Relevant and FalsePositives count the distinct transactions peers
	// sent inside blocks, by verdict.
	Relevant       uint64
	FalsePositives uint64
	// MempoolRelevant and MempoolFalsePositives count unconfirmed
	// transactions, each txid once.
	MempoolRelevant       uint64
	MempoolFalsePositives uint64
}

// countersSize is the encoded size of counters: four uint64.
const countersSize = 4 * 8

func (c counters) encode() []byte {
	b := make([]byte, countersSize)
	binary.BigEndian.PutUint64(b[0:], c.Relevant)
	binary.BigEndian.PutUint64(b[8:], c.FalsePositives)
	binary.BigEndian.PutUint64(b[16:], c.MempoolRelevant)
	binary.BigEndian.PutUint64(b[24:], c.MempoolFalsePositives)
	return b
}

func decodeCounters(b []byte) (counters, error) {
	if len(b) != countersSize {
		return counters{}, fmt.Errorf("%w: counters record of %d bytes", ErrCorrupt, len(b))
	}
	return counters{
		Relevant:              binary.BigEndian.Uint64(b[0:]),
		FalsePositives:        binary.BigEndian.Uint64(b[8:]),
		MempoolRelevant:       binary.BigEndian.Uint64(b[16:]),
		MempoolFalsePositives: binary.BigEndian.Uint64(b[24:]),
	}, nil
}

// meta is the wallet-level record kept in ownNS.
type meta struct {
	network      string
	birthday     int32
	gapExternal  uint32
	gapInternal  uint32
	firstApplied int32
	counters     counters
	// rescanPending is set when scripts were imported into a wallet
	// that had applied blocks: the history it holds stays as it was
	// (confirmed at its heights) until the next sync applies the first
	// block of the rescan (see beginRescanIn).
	rescanPending bool
}

func putUint32(b walletdb.ReadWriteBucket, key []byte, v uint32) error {
	var buf [4]byte
	binary.BigEndian.PutUint32(buf[:], v)
	return b.Put(key, buf[:])
}

func getUint32(b walletdb.ReadBucket, key []byte) (uint32, error) {
	v := b.Get(key)
	if len(v) != 4 {
		return 0, fmt.Errorf("%w: record %q missing or malformed", ErrCorrupt, key)
	}
	return binary.BigEndian.Uint32(v), nil
}

// writeMeta stores every field of m.
func writeMeta(own walletdb.ReadWriteBucket, m *meta) error {
	if err := putUint32(own, keyFormat, formatVersion); err != nil {
		return err
	}
	if err := own.Put(keyNetwork, []byte(m.network)); err != nil {
		return err
	}
	if err := putUint32(own, keyBirthday, uint32(m.birthday)); err != nil {
		return err
	}
	gaps := make([]byte, 8)
	binary.BigEndian.PutUint32(gaps[0:], m.gapExternal)
	binary.BigEndian.PutUint32(gaps[4:], m.gapInternal)
	if err := own.Put(keyGaps, gaps); err != nil {
		return err
	}
	return writeProgress(own, m)
}

// writeProgress stores the fields that change as blocks are applied. The
// rescan mark is a key present only while a rescan is pending, so a wallet
// written before it existed reads as having none.
func writeProgress(own walletdb.ReadWriteBucket, m *meta) error {
	if err := putUint32(own, keyFirst, uint32(m.firstApplied)); err != nil {
		return err
	}
	if m.rescanPending {
		if err := own.Put(keyRescan, []byte{1}); err != nil {
			return err
		}
	} else if own.Get(keyRescan) != nil {
		if err := own.Delete(keyRescan); err != nil {
			return err
		}
	}
	return own.Put(keyCounters, m.counters.encode())
}

// readMeta loads and checks the wallet-level record.
func readMeta(own walletdb.ReadBucket) (*meta, error) {
	format, err := getUint32(own, keyFormat)
	if err != nil {
		return nil, err
	}
	if format != formatVersion {
		return nil, fmt.Errorf("%w: wallet format %d, this bloomwatch reads %d", ErrCorrupt, format, formatVersion)
	}
	m := &meta{network: string(own.Get(keyNetwork))}
	bd, err := getUint32(own, keyBirthday)
	if err != nil {
		return nil, err
	}
	m.birthday = int32(bd)
	gaps := own.Get(keyGaps)
	if len(gaps) != 8 {
		return nil, fmt.Errorf("%w: gap record malformed", ErrCorrupt)
	}
	m.gapExternal = binary.BigEndian.Uint32(gaps[0:])
	m.gapInternal = binary.BigEndian.Uint32(gaps[4:])
	first, err := getUint32(own, keyFirst)
	if err != nil {
		return nil, err
	}
	m.firstApplied = int32(first)
	switch v := own.Get(keyRescan); {
	case v == nil:
	case len(v) == 1 && v[0] == 1:
		m.rescanPending = m.firstApplied != noHeight
	default:
		return nil, fmt.Errorf("%w: rescan record malformed", ErrCorrupt)
	}
	if m.counters, err = decodeCounters(own.Get(keyCounters)); err != nil {
		return nil, err
	}
	for _, b := range [][]byte{bktImported, bktBlocks, bktMempoolFP, bktHDScripts} {
		if own.NestedReadBucket(b) == nil {
			return nil, fmt.Errorf("%w: bucket %q missing", ErrCorrupt, b)
		}
	}
	return m, nil
}
