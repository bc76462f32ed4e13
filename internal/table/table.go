// Package table formats bloomwatch's plain-text tables: columns aligned
// by a tabwriter, floats to four significant digits, "-" for a figure that
// is not known. The command line and the privacy reports share it, so
// their tables look alike.
package table

import (
	"io"
	"strconv"
	"text/tabwriter"
)

// Layout of every table.
const (
	minWidth = 0
	tabWidth = 2
	padding  = 2
	padChar  = ' '
	// sigDigits is the precision of floats (Num).
	sigDigits = 4
	ellipsis  = "..."
)

// NotKnown fills a cell whose figure is not known.
const NotKnown = "-"

// New returns a tab-aligned writer on w: cells end with a tab, rows with
// a newline; Flush writes the table.
func New(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, minWidth, tabWidth, padding, padChar, 0)
}

// Num formats a float compactly: four significant digits, exponent form
// for large and small magnitudes.
func Num(v float64) string { return strconv.FormatFloat(v, 'g', sigDigits, 64) }

// Truncate shortens s to n runes, ending in "..." when it cut.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-len(ellipsis)]) + ellipsis
}
