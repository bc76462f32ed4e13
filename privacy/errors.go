package privacy

import "errors"

// Errors callers must tell apart. They are wrapped with details; test for
// them with errors.Is.
var (
	// ErrTooManyHits is returned when a scan would keep more matching
	// candidates than its limit: the filters match too much of the
	// universe to be analyzed candidate by candidate.
	ErrTooManyHits = errors.New("too many matching candidates")

	// ErrEmptyUniverse is returned when the candidate universe is empty.
	ErrEmptyUniverse = errors.New("empty candidate universe")

	// ErrBadConfig is returned for an analysis input that cannot be
	// analyzed as configured (no universe, or an attack without the chain
	// it needs).
	ErrBadConfig = errors.New("bad configuration")
)
