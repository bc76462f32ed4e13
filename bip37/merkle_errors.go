package bip37

import (
	"errors"
	"fmt"
)

// MerkleReason names the check of CPartialMerkleTree::ExtractMatches (or the
// final root comparison) that a partial merkle tree failed.
type MerkleReason uint8

// The checks, in the order ExtractMatches makes them.
const (
	// ReasonNoTransactions means the tree claims zero transactions.
	ReasonNoTransactions MerkleReason = iota + 1
	// ReasonTooManyTransactions means more than MaxMerkleTxs transactions.
	ReasonTooManyTransactions
	// ReasonTooManyHashes means more hashes than transactions.
	ReasonTooManyHashes
	// ReasonNotEnoughBits means fewer flag bits than hashes.
	ReasonNotEnoughBits
	// ReasonBitsExhausted means the traversal ran out of flag bits.
	ReasonBitsExhausted
	// ReasonHashesExhausted means the traversal ran out of hashes.
	ReasonHashesExhausted
	// ReasonDuplicateHash means an inner node's two children are equal
	// (CVE-2012-2459).
	ReasonDuplicateHash
	// ReasonUnusedBits means whole flag bytes were left unused.
	ReasonUnusedBits
	// ReasonUnusedHashes means hashes were left unused.
	ReasonUnusedHashes
	// ReasonMerkleRootMismatch means the computed root differs from the
	// header's merkle root.
	ReasonMerkleRootMismatch
	// ReasonNilHash means a hash pointer is nil (cannot come from the wire).
	ReasonNilHash
)

// Sentinel errors, one per MerkleReason; a *MerkleError matches its
// reason's sentinel with errors.Is.
var (
	// ErrNoTransactions is the sentinel of ReasonNoTransactions.
	ErrNoTransactions = errors.New("bip37: partial merkle tree has no transactions")
	// ErrTooManyTransactions is the sentinel of ReasonTooManyTransactions.
	ErrTooManyTransactions = errors.New("bip37: partial merkle tree claims more than 16666 transactions")
	// ErrTooManyHashes is the sentinel of ReasonTooManyHashes.
	ErrTooManyHashes = errors.New("bip37: partial merkle tree has more hashes than transactions")
	// ErrNotEnoughBits is the sentinel of ReasonNotEnoughBits.
	ErrNotEnoughBits = errors.New("bip37: partial merkle tree has fewer flag bits than hashes")
	// ErrBitsExhausted is the sentinel of ReasonBitsExhausted.
	ErrBitsExhausted = errors.New("bip37: partial merkle tree ran out of flag bits")
	// ErrHashesExhausted is the sentinel of ReasonHashesExhausted.
	ErrHashesExhausted = errors.New("bip37: partial merkle tree ran out of hashes")
	// ErrDuplicateHash is the sentinel of ReasonDuplicateHash (CVE-2012-2459).
	ErrDuplicateHash = errors.New("bip37: partial merkle tree has identical sibling hashes (CVE-2012-2459)")
	// ErrUnusedBits is the sentinel of ReasonUnusedBits.
	ErrUnusedBits = errors.New("bip37: partial merkle tree left flag bytes unused")
	// ErrUnusedHashes is the sentinel of ReasonUnusedHashes.
	ErrUnusedHashes = errors.New("bip37: partial merkle tree left hashes unused")
	// ErrMerkleRootMismatch is the sentinel of ReasonMerkleRootMismatch.
	ErrMerkleRootMismatch = errors.New("bip37: partial merkle tree root does not match the block header")
	// ErrNilHash is the sentinel of ReasonNilHash.
	ErrNilHash = errors.New("bip37: partial merkle tree contains a nil hash")

	// errUnknownMerkleFailure stands for a MerkleReason outside the list.
	errUnknownMerkleFailure = errors.New("bip37: partial merkle tree failed an unknown check")
)

// reasonSentinels maps each reason to its sentinel.
var reasonSentinels = map[MerkleReason]error{
	ReasonNoTransactions:      ErrNoTransactions,
	ReasonTooManyTransactions: ErrTooManyTransactions,
	ReasonTooManyHashes:       ErrTooManyHashes,
	ReasonNotEnoughBits:       ErrNotEnoughBits,
	ReasonBitsExhausted:       ErrBitsExhausted,
	ReasonHashesExhausted:     ErrHashesExhausted,
	ReasonDuplicateHash:       ErrDuplicateHash,
	ReasonUnusedBits:          ErrUnusedBits,
	ReasonUnusedHashes:        ErrUnusedHashes,
	ReasonMerkleRootMismatch:  ErrMerkleRootMismatch,
	ReasonNilHash:             ErrNilHash,
}

// Sentinel returns the sentinel error for the reason.
func (r MerkleReason) Sentinel() error {
	if err, ok := reasonSentinels[r]; ok {
		return err
	}
	return errUnknownMerkleFailure
}

// String returns the sentinel's message for the reason.
func (r MerkleReason) String() string {
	return r.Sentinel().Error()
}

// MerkleError reports which check a partial merkle tree failed, with the
// numbers involved in Detail.
type MerkleError struct {
	Reason MerkleReason
	Detail string
}

// Error returns the reason's message followed by the detail.
func (e *MerkleError) Error() string {
	if e.Detail == "" {
		return e.Reason.String()
	}
	return e.Reason.String() + ": " + e.Detail
}

// Is reports whether target is the sentinel of e's reason.
func (e *MerkleError) Is(target error) bool {
	return target == e.Reason.Sentinel()
}

// merkleErrorf builds a *MerkleError with a formatted detail.
func merkleErrorf(reason MerkleReason, format string, args ...any) *MerkleError {
	return &MerkleError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}
