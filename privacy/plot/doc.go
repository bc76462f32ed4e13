// Package plot draws privacy's charts (privacy.Chart: the collapse curves
// of privacy.Report.Charts and the figures of privacy/experiments) with
// gonum/plot, one panel per chart stacked in one figure, as PNG (WritePNG)
// or SVG (WriteSVG).
//
// It writes only to the io.Writer it is given: a command writes a file,
// a server a response, a test a buffer. Drawing is deterministic: the same
// charts give the same bytes.
package plot
