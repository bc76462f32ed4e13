package hostile

import "errors"

// Sentinel errors.
var (
	// ErrUnknownScenario means the scenario name is not in Scenarios().
	ErrUnknownScenario = errors.New("hostile: unknown scenario")
	// ErrNoUpstream means Config.Upstream is nil.
	ErrNoUpstream = errors.New("hostile: no upstream")
	// ErrNoParams means Config.Params is nil.
	ErrNoParams = errors.New("hostile: no chain params")
	// ErrHandshake means the remote side did not open with a version message.
	ErrHandshake = errors.New("hostile: bad handshake")
	// ErrNotFound means the upstream has no such block or header.
	ErrNotFound = errors.New("hostile: not found")
	// ErrCannotForge means the requested forgery does not apply to this block
	// (for example a CVE-2012-2459 tree for a power-of-two block).
	ErrCannotForge = errors.New("hostile: forgery does not apply")
	// ErrUnknownFlood means FloodConfig.Cmd is not in FloodCommands().
	ErrUnknownFlood = errors.New("hostile: no flood of that command")
)
