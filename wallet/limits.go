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
)

// Batching: ApplyBlock groups several blocks into one database transaction
// so a long sync does not pay one fsync per block.
const (
	// DefaultBatchBlocks is the largest number of blocks applied in one
	// database transaction.
	DefaultBatchBlocks = 500

	// DefaultBatchInterval is the longest a batch stays open, measured
	// from its first write, before the next ApplyBlock commits it.
	DefaultBatchInterval = 200 * time.Millisecond
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
