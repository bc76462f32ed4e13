//go:build tools

// Package tools pins build-time dependencies: integration/rpctest compiles
// btcd with `go build github.com/btcsuite/btcd`, so the btcd main package must
// stay in the module graph.
package tools

import (
	_ "github.com/btcsuite/btcd"
)
