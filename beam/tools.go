//go:build tools

// Package tools pins what TestJobServer builds besides the crawl: Beam's
// Prism job server (a stand-in for a Flink or Spark job server: the same
// portable job API) and the Go SDK's boot loader, which a runner starts
// in the PROCESS environment to fetch the staged worker binary and run
// it. Both stay in the module graph, so they build offline.
package tools

import (
	_ "github.com/apache/beam/sdks/v2/go/cmd/prism"
	_ "github.com/apache/beam/sdks/v2/go/container"
)
