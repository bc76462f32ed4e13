package pkg

import "github.com/bloomwatch/bloomwatch/internal/doctable"

// maxTestRuns is a test's own constant: it bounds no input, needs no row.
const maxTestRuns = 3

var bounds = []doctable.Bound{
	{Name: "maxFileBytes", Value: maxFileBytes, Unit: "bytes", Protects: "a file"},
	{Name: "LineMax", Value: LineMax, Unit: "bytes", Protects: "a line"},
}
