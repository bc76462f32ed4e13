package experiments

import "errors"

// Errors callers must tell apart. They are wrapped with details; test for
// them with errors.Is.
var (
	// ErrUnknown is returned by Run for a name not in List.
	ErrUnknown = errors.New("unknown experiment")

	// ErrBadConfig is returned for a simulator scenario or a synthetic
	// chain configuration outside its valid range.
	ErrBadConfig = errors.New("bad configuration")
)
