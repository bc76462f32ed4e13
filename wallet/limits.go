package wallet

import (
	"time"

	"github.com/btcsuite/btcwallet/waddrmgr"
)

// Gap limits: how many unused addresses past the last used one the wallet
// watches on each branch of an HD account.
const (
	// DefaultGapExternal is the receive-branch gap limit (BIP44's 20).
	DefaultGapExternal = 20

	// DefaultGapInternal is the change-branch gap limit. Change addresses
	// are used in order by the wallet that spends, so a smaller gap is
	// enough and leaks fewer elements into the filter.
	DefaultGapInternal = 10

	// MaxGap bounds a configured gap limit. Every watched address is a
	// filter element; past a few thousand the filter saturates at the
	// BIP37 size cap and the false-positive rate climbs.
	MaxGap = 5000

	// MaxStride bounds how many addresses past the gap limit one
	// extension of a branch derives (see nextStride): a branch grows by
	// half of its size at each extension, up to this many addresses.
	// Every derived address is a filter element: below the BIP37 size
	// cap the filter grows with them, at the cap (36,000 bytes, k = 5 at
	// 15,000 elements) 1,000 more elements raise its false-positive rate
	// by about a third. The bound keeps the unused addresses of a large
	// wallet to a small share of its elements, at one filter change per
	// MaxStride addresses once a branch holds 2,000.
	MaxStride = 1000
)

// Batching: ApplyBlock groups several blocks into one database transaction
// so a long sync does not pay one commit per block. A commit's cost grows
// with the pages the batch dirtied, which for wtxmgr's buckets (keyed by
// random txids) is most of them whatever the batch's size: a first sync of
// 2,300 blocks and 3,000 wallet transactions costs 2.3-2.5 s with a commit
// per block, 0.46 s with one per 20 blocks, 0.30-0.32 s per 50, 0.12-0.16 s
// per 500 or one in all (BenchmarkFirstSyncBatch). The node calls Flush when it
// reaches the peers' tip and when it stops, so no block stays uncommitted
// while the node is idle; a crash loses at most one batch, which the node
// fetches again.
const (
	// DefaultBatchBlocks is the largest number of blocks applied in one
	// database transaction.
	DefaultBatchBlocks = 500

	// DefaultBatchInterval is the longest a batch stays open, measured
	// from its first write, before the next ApplyBlock commits it. It
	// was 200 ms: a first sync receiving filtered blocks more slowly than
	// 2,500 a second (a remote peer, dense blocks) committed before
	// reaching DefaultBatchBlocks: every 20 blocks at 100 blocks a
	// second, every other block at 5 a second. Two seconds keeps full
	// batches down to 250 blocks a second, and a crash costs at most two
	// seconds of sync.
	DefaultBatchInterval = 2 * time.Second
)

const (
	// dbFileName is the wallet database file inside the data directory.
	dbFileName = "wallet.db"

	// dbOpenTimeout is how long Open waits for another process's file
	// lock before it reports ErrInUse.
	dbOpenTimeout = time.Second

	// dirPerm and the file mode bbolt uses (0600) keep the wallet private
	// to its owner: an extended public key reveals every address.
	dirPerm = 0o700

	// minDBFileSize is the smallest file bbolt could have written: two
	// meta pages of the smallest page size. A shorter file would make
	// bbolt initialise it (write to it), so Open refuses it first.
	minDBFileSize = 2 * 1024

	// maxFalsePositiveList caps FalsePositives when the caller passes a
	// limit of zero or less.
	maxFalsePositiveList = 10000
)

// publicPassphrase opens the waddrmgr address manager.
//
// A watch-only manager holds no private keys: waddrmgr encrypts the account
// extended public keys and derived addresses with a key protected by this
// public passphrase only. Since bloomwatch has no secret to protect (and
// asking the user for a passphrase at every start would only guard the
// privacy of the xpub, which the 0600 file mode already does), the
// passphrase is a constant and protects nothing: anyone who can read the
// file can read the keys, exactly as with the file permissions alone.
var publicPassphrase = []byte("bloomwatch watch-only public data")

// scryptOptions are the key-derivation parameters waddrmgr stores with the
// master public key and runs at every Open. waddrmgr's default (N = 2^18)
// costs about a quarter of a second and 256 MiB of memory per open to
// stretch a passphrase that, here, is a public constant: the work would
// buy no security. N = 16 is the cheapest setting waddrmgr's scrypt
// accepts comfortably (the same as waddrmgr.FastScryptOptions) and keeps
// Open fast.
var scryptOptions = waddrmgr.ScryptOptions{N: 16, R: 8, P: 1}
