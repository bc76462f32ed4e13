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
	// ReasonNoTransactions: the tree claims zero transactions.
	ReasonNoTransactions MerkleReason = iota + 1
	// ReasonTooManyTransactions: more than MaxMerkleTxs transactions.
	ReasonTooManyTransactions
	// ReasonTooManyHashes: more hashes than transactions.
	ReasonTooManyHashes
	// ReasonNotEnoughBits: fewer flag bits than hashes.
	ReasonNotEnoughBits
	// ReasonBitsExhausted: the traversal ran out of flag bits.
	ReasonBitsExhausted
	// ReasonHashesExhausted: the traversal ran out of hashes.
	ReasonHashesExhausted
	// ReasonDuplicateHash: an inner node's two children are equal
	// (CVE-2012-2459).
	ReasonDuplicateHash
	// ReasonUnusedBits: whole flag bytes were left unused.
	ReasonUnusedBits
	// ReasonUnusedHashes: hashes were left unused.
	ReasonUnusedHashes
	// ReasonMerkleRootMismatch: the computed root differs from the
	// header's merkle root.
	ReasonMerkleRootMismatch
	// ReasonNilHash: a hash pointer is nil (cannot come from the wire).
	ReasonNilHash
)

// Sentinel errors, one per MerkleReason; a *MerkleError matches its
// reason's sentinel with errors.Is.
var (
	ErrNoTransactions       = errors.New("bip37: partial merkle tree has no transactions")
	ErrTooManyTransactions  = errors.New("bip37: partial merkle tree claims more than 16666 transactions")
	ErrTooManyHashes        = errors.New("bip37: partial merkle tree has more hashes than transactions")
	ErrNotEnoughBits        = errors.New("bip37: partial merkle tree has fewer flag bits than hashes")
	ErrBitsExhausted        = errors.New("bip37: partial merkle tree ran out of flag bits")
	ErrHashesExhausted      = errors.New("bip37: partial merkle tree ran out of hashes")
	ErrDuplicateHash        = errors.New("bip37: partial merkle tree has identical sibling hashes (CVE-2012-2459)")
	ErrUnusedBits           = errors.New("bip37: partial merkle tree left flag bytes unused")
	ErrUnusedHashes         = errors.New("bip37: partial merkle tree left hashes unused")
	ErrMerkleRootMismatch   = errors.New("bip37: partial merkle tree root does not match the block header")
	ErrNilHash              = errors.New("bip37: partial merkle tree contains a nil hash")
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
