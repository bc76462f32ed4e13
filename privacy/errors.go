package privacy

import "errors"

// Errors callers must tell apart. They are wrapped with details; test for
// them with errors.Is.
var (
	// ErrEmptyUniverse is returned when the candidate universe is empty.
	ErrEmptyUniverse = errors.New("empty candidate universe")

	// ErrBadConfig is returned for an analysis input that cannot be
	// analyzed as configured (no universe, or an attack without the chain
	// it needs).
	ErrBadConfig = errors.New("bad configuration")
)
