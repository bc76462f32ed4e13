package wallet

import (
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/wallet/descriptor"
	"github.com/bloomwatch/bloomwatch/wallet/internal/secret"
)

// Sentinel errors. They are wrapped with details; test for them with
// errors.Is.
var (
	// ErrNoWallet is returned by Open when the data directory holds no
	// wallet (or does not exist).
	ErrNoWallet = errors.New("wallet: no wallet in data directory")

	// ErrExists is returned by Create when the data directory already
	// holds a wallet.
	ErrExists = errors.New("wallet: a wallet already exists in data directory")

	// ErrWrongNetwork is returned when a wallet, key or address belongs to
	// another network than the one asked for.
	ErrWrongNetwork = descriptor.ErrWrongNetwork

	// ErrUnknownNetwork is returned for a network name bloomwatch does
	// not know.
	ErrUnknownNetwork = errors.New("wallet: unknown network")

	// ErrCorrupt is returned when the wallet database cannot be read.
	// The file is left as it was.
	ErrCorrupt = errors.New("wallet: database unreadable")

	// ErrInUse is returned when another process holds the wallet
	// database open.
	ErrInUse = errors.New("wallet: database in use by another process")

	// ErrInvalidKey is returned for an extended public key that does not
	// decode (bad checksum, bad length, unknown version).
	ErrInvalidKey = descriptor.ErrInvalidKey

	// ErrPrivateKey is returned when a private key is given (an
	// extended private key, or a WIF key in a descriptor): a watch-only
	// wallet refuses to store private keys.
	ErrPrivateKey = descriptor.ErrPrivateKey

	// ErrInvalidDescriptor is returned for an output descriptor that is
	// malformed or invalid by BIP380-389 (syntax, key origin, derivation
	// step, a key form its function does not allow).
	ErrInvalidDescriptor = descriptor.ErrInvalid

	// ErrDescriptorChecksum is returned when a descriptor's "#checksum"
	// is malformed or does not match the descriptor (BIP380).
	ErrDescriptorChecksum = descriptor.ErrChecksum

	// ErrUnsupportedDescriptor is returned for a valid descriptor the
	// wallet cannot watch: a function other than pkh, sh(wpkh), wpkh, tr
	// (key path only), addr and raw, or a ranged derivation that is not
	// an HD account's (see ParseDescriptor).
	ErrUnsupportedDescriptor = descriptor.ErrUnsupported

	// ErrHardenedStep is returned for a hardened derivation step after an
	// extended public key: deriving it needs the private key.
	ErrHardenedStep = descriptor.ErrHardenedStep

	// ErrInvalidAddress is returned for an address that does not decode.
	ErrInvalidAddress = errors.New("wallet: invalid address")

	// ErrUnmatchableScript is returned for a script with no data push a
	// BIP37 server could match.
	ErrUnmatchableScript = errors.New("wallet: script has no data push a BIP37 server can match")

	// ErrDuplicate is returned when a key, address or script is already
	// watched.
	ErrDuplicate = errors.New("wallet: already watched")

	// ErrInvalidConfig is returned for out-of-range creation settings
	// (gap limits, birthday).
	ErrInvalidConfig = errors.New("wallet: invalid configuration")

	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("wallet: closed")

	// ErrBadBlock is returned for a FilteredBlock that is inconsistent
	// with itself (hash not matching header, transaction indexes out of
	// order or out of range). Nothing is applied.
	ErrBadBlock = errors.New("wallet: malformed block")

	// ErrBadTx is returned for a nil or empty unconfirmed transaction.
	ErrBadTx = errors.New("wallet: malformed transaction")

	// ErrInvalidTx is the reason ApplyMempoolTx refuses a transaction no
	// valid block can hold (an output value outside [0, 21e6 BTC] or a
	// sum above it, a duplicated input, ...; see checkTx), and why
	// ApplyBlock never counts one as the wallet's.
	ErrInvalidTx = errors.New("wallet: invalid transaction")

	// ErrMempoolBudget is the reason ApplyMempoolTx refuses an
	// unconfirmed transaction over a budget (MaxPendingTxSize and the
	// limits after it). It arrives inside a *watch.TxRefusal.
	ErrMempoolBudget = errors.New("wallet: over the budget of unconfirmed transactions")

	// ErrNotNext is returned when a block does not connect to the
	// wallet's sync point (wrong height or previous hash). Nothing is
	// applied; the caller must Rollback first on a reorg.
	ErrNotNext = errors.New("wallet: block does not connect to sync point")

	// ErrReorgTooDeep is returned by Rollback when the fork point is
	// older than the block hashes the wallet keeps.
	ErrReorgTooDeep = errors.New("wallet: reorg deeper than the kept block hashes")
)

// InputError marks an error caused by bad user input (a key, address,
// script, network name or setting), as opposed to a storage failure.
// Callers that map errors to exit codes test for it with errors.As.
type InputError struct {
	// What names the input ("xpub", "address", "network", ...).
	What string
	// Value is the offending input, shortened for display; empty when it
	// holds a private key (Secret).
	Value string
	// Secret says what private key the input held ("a WIF private key"),
	// which is neither kept nor shown (wallet/internal/secret).
	Secret string
	// Err is the underlying reason, usually one of the sentinels.
	Err error
}

// maxShownInput bounds how much of a bad input an error message repeats.
const maxShownInput = 24

// Error implements error.
func (e *InputError) Error() string {
	v := e.Value
	if len(v) > maxShownInput {
		v = v[:maxShownInput] + "..."
	}
	if e.Secret != "" {
		return fmt.Sprintf("%s (%s, not shown: bloomwatch never holds private keys): %v", e.What, e.Secret, e.Err)
	}
	if v == "" {
		return fmt.Sprintf("%s: %v", e.What, e.Err)
	}
	return fmt.Sprintf("%s %q: %v", e.What, v, e.Err)
}

// Unwrap returns the underlying reason.
func (e *InputError) Unwrap() error { return e.Err }

// ListError locates the entry of a list that made a whole-list call
// (AddAddresses) refuse the list: Index is its position (from 0), Err its
// error (an *InputError, which errors.As finds through ListError), and
// Same, for an entry repeated in the list, the position of its first
// occurrence (-1 otherwise). Nothing of the list was imported.
type ListError struct {
	Index int
	Same  int
	Err   error
}

// Error implements error.
func (e *ListError) Error() string {
	if e.Same >= 0 {
		return fmt.Sprintf("entry %d: %v (same as entry %d)", e.Index+1, e.Err, e.Same+1)
	}
	return fmt.Sprintf("entry %d: %v", e.Index+1, e.Err)
}

// Unwrap returns the entry's error.
func (e *ListError) Unwrap() error { return e.Err }

// inputErr builds an *InputError. A value that is, or holds, what looks
// like a private key is neither kept nor shown (wallet/internal/secret):
// the error says what it is instead.
func inputErr(what, value string, err error) error {
	if kind := secret.In(value); kind != "" {
		return &InputError{What: what, Secret: kind, Err: err}
	}
	return &InputError{What: what, Value: value, Err: err}
}

// IsInputError reports whether err was caused by the caller's input rather
// than by a failure: a bad key, descriptor, address, script, network name
// or setting (an *InputError), an address list that is malformed or
// empty, something already watched, a wallet of another network, or a
// data directory that holds no wallet, or one already. A command line
// maps these to its usage exit code.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie) ||
		errors.Is(err, ErrNoWallet) ||
		errors.Is(err, ErrExists) ||
		errors.Is(err, ErrWrongNetwork) ||
		errors.Is(err, ErrUnknownNetwork) ||
		errors.Is(err, ErrDuplicate) ||
		errors.Is(err, ErrBadAddressList) ||
		errors.Is(err, ErrEmptyAddressList)
}
