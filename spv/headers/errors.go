package headers

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Validation failures: the Err of a *ValidationError is exactly one of these.
var (
	// ErrNotConnecting means the header's parent is not in the store.
	ErrNotConnecting = errors.New("headers: header does not connect to a known header")

	// ErrBadPoW means the header's hash is above the target its bits claim.
	ErrBadPoW = errors.New("headers: hash above the claimed target")

	// ErrBadBits means the difficulty bits are not what the network's
	// rules require at that position.
	ErrBadBits = errors.New("headers: difficulty bits differ from the required value")

	// ErrTimeTooOld means the timestamp is not after the median time of
	// the previous 11 blocks.
	ErrTimeTooOld = errors.New("headers: timestamp not after median time past")

	// ErrTimewarp means the first header of a difficulty period is
	// timestamped more than 600 s before its parent (BIP94, testnet4).
	ErrTimewarp = errors.New("headers: timewarp (BIP94): period start too far before its parent")

	// ErrTimeTooNew means the timestamp is more than two hours ahead of
	// the store's clock.
	ErrTimeTooNew = errors.New("headers: timestamp too far in the future")

	// ErrBadVersion means the header's version is below the floor set by
	// BIP34, BIP66 or BIP65 at its height.
	ErrBadVersion = errors.New("headers: obsolete block version")

	// ErrCheckpoint means the header contradicts a checkpoint or forks
	// the chain below the last checkpoint the store has passed.
	ErrCheckpoint = errors.New("headers: checkpoint mismatch or fork below a checkpoint")

	// ErrBelowPowLimit means the bits claim a target that is zero,
	// negative, or easier than the network's proof-of-work limit.
	ErrBelowPowLimit = errors.New("headers: target outside the proof-of-work limit")

	// ErrLowWorkBranch means a valid header on a side branch whose
	// cumulative work is more than SideBranchMargin blocks (at the best
	// tip's difficulty) below the best chain's: a branch that cannot
	// plausibly become the best one, and that costs an attacker little on
	// networks with minimum-difficulty blocks. It is not stored.
	ErrLowWorkBranch = errors.New("headers: side branch far below the best chain's work")
)

// Store-level errors.
var (
	// ErrNotFound is returned by getters for a height or hash the store
	// does not have (on the best chain, for the height getters).
	ErrNotFound = errors.New("headers: not found")

	// ErrCorrupt is wrapped by Open (in a *CorruptError) when headers.dat
	// is not a valid header file of this network. The usual remedy is to
	// delete the directory and sync again.
	ErrCorrupt = errors.New("headers: corrupt header file")

	// ErrWrongNetwork is wrapped, together with ErrCorrupt, when the file
	// belongs to another network.
	ErrWrongNetwork = errors.New("headers: header file of another network")

	// ErrClosed is returned by calls on a closed store.
	ErrClosed = errors.New("headers: store closed")

	// ErrFull is returned by Connect when the store holds the most
	// headers it can index (2^27 - 1); the headers before are stored.
	ErrFull = errors.New("headers: header store full")

	// ErrLocked is returned by Open when another Store (in this or
	// another process) holds the directory.
	ErrLocked = errors.New("headers: header store in use")
)

// ValidationError reports the first header of a Connect batch that failed
// validation. Err is one of the validation sentinels; errors.Is works on the
// *ValidationError itself.
type ValidationError struct {
	// Index is the position of the header in the batch.
	Index int
	// Hash is the header's hash.
	Hash chainhash.Hash
	// Height is the height the header would have had, or -1 when its
	// parent is unknown.
	Height int32
	// Err is the validation sentinel.
	Err error
	// Detail explains the failure with the values involved.
	Detail string
}

// Error describes the failure.
func (e *ValidationError) Error() string {
	s := fmt.Sprintf("header %d (%v, height %d): %v", e.Index, e.Hash, e.Height, e.Err)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the sentinel.
func (e *ValidationError) Unwrap() error { return e.Err }

// CorruptError reports why a header file was rejected by Open. It matches
// ErrCorrupt with errors.Is, and also ErrWrongNetwork when that is the
// reason.
type CorruptError struct {
	// Path is the file.
	Path string
	// Offset is the byte offset of the problem (-1 for the whole file).
	Offset int64
	// Reason explains the problem.
	Reason string
	// Err is an additional cause (ErrWrongNetwork, an I/O error) or nil.
	Err error
}

// Error describes the problem.
func (e *CorruptError) Error() string {
	s := fmt.Sprintf("%v: %s", ErrCorrupt, e.Path)
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at offset %d", e.Offset)
	}
	s += ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrCorrupt and the additional cause.
func (e *CorruptError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}
