package replay

import "errors"

// Errors callers must tell apart. They are wrapped with details; test for
// them with errors.Is.
var (
	// ErrBadFilterRecord is returned when a transcript's filterload record
	// carries a filter a full node would reject (malformed serialization,
	// over the size or hash-function caps).
	ErrBadFilterRecord = errors.New("bad filter in transcript")

	// ErrNoFilters is returned when a transcript holds no filterload, so
	// there is nothing to analyze.
	ErrNoFilters = errors.New("transcript has no filterload")
)
