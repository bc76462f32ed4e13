package behaviour

import "errors"

// ErrBadConfig is returned for options or input the behaviour
// attack cannot run with: unknown server rules, or no chain.
var ErrBadConfig = errors.New("bad configuration")
