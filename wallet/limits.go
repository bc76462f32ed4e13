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

	// DefaultReserve is the lookahead reserve: unused addresses every HD
	// branch keeps derived beyond its gap limit, in every filter, so that
	// a payment never needs a filter reload to stay safe (the node loads
	// new keys at its scheduled reloads, never right after a payment).
	// bitcoinj's DeterministicKeyChain keeps a lookahead of 100 keys
	// whole, derived in batches of more than a third of it; so does
	// bloomwatch, beyond the gap. A reserve costs filter bytes (and the
	// derivations): a fresh wallet
	// watches 230 addresses instead of 30, a 1,224-byte filter instead
	// of 153 at 1e-4 (FilterCapacity keeps the fill, and so the rate,
	// the same), and an address beyond the gap never appears on chain
	// before it is used.
	DefaultReserve = 100

	// CatchUpReserve is the reserve a wallet about to catch up keeps
	// (FilterElements, when it never synced or its sync point is older
	// than CatchUpAge): the node has up to its window of blocks (500) in
	// flight before its first scheduled reload can add keys, and a
	// wallet restored from an xpub may have used one address a block.
	CatchUpReserve = 1000

	// CatchUpAge is how old the last applied block must be for the
	// wallet to expect a catch-up.
	CatchUpAge = 24 * time.Hour

	// ReserveHorizon is how many blocks of the branch's own pace (used
	// addresses per block since its first payment) the reserve covers
	// when that is more than DefaultReserve: more than the node's reload
	// spacing (up to 150 blocks while catching up) plus the blocks it
	// has in flight (500), for a pace that grows.
	ReserveHorizon = 1500

	// MaxReserve bounds the reserve. Every derived address is a filter
	// element: at BIP37's 36,000-byte cap each one raises the
	// false-positive rate.
	MaxReserve = 5000
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
