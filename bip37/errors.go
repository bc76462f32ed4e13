package bip37

import "errors"

// Errors returned by filter construction, decoding and validation. They are
// wrapped with details; test for them with errors.Is.
var (
	// ErrZeroElements is returned when a filter is sized for no elements.
	ErrZeroElements = errors.New("bip37: element count must be at least 1")

	// ErrFPRateRange is returned when a false-positive rate is not in the
	// open interval (0, 1).
	ErrFPRateRange = errors.New("bip37: false-positive rate must be in (0, 1)")

	// ErrFilterTooLarge is returned for a filter larger than MaxFilterSize.
	ErrFilterTooLarge = errors.New("bip37: filter larger than 36000 bytes")

	// ErrTooManyHashFuncs is returned for more than MaxHashFuncs hash
	// functions.
	ErrTooManyHashFuncs = errors.New("bip37: more than 50 hash functions")

	// ErrFilterAddTooLarge is returned for a filteradd element larger
	// than MaxFilterAddSize.
	ErrFilterAddTooLarge = errors.New("bip37: filteradd element larger than 520 bytes")

	// ErrMalformedFilter is returned when a serialized filter is truncated
	// or uses a non-canonical length prefix.
	ErrMalformedFilter = errors.New("bip37: malformed serialized filter")

	// ErrTrailingBytes is returned when bytes follow a serialized filter.
	ErrTrailingBytes = errors.New("bip37: trailing bytes after serialized filter")

	// ErrNilMessage is returned when a nil wire message is passed.
	ErrNilMessage = errors.New("bip37: nil message")

	// ErrUnknownUpdateFlag is returned by ParseUpdateFlag.
	ErrUnknownUpdateFlag = errors.New("bip37: unknown update flag")
)
