// Package doctable renders a package's named bounds as a Markdown table
// and replaces a marked region of a doc with it, so that a doc's bounds
// tables are generated from the code that holds the bounds.
//
// A package lists its bounds in a test file, as a table only its test
// reads (keyed, as go vet wants for a struct of another package):
//
//	var bounds = []doctable.Bound{
//		{Name: "maxConfigFileBytes", Value: maxConfigFileBytes, Unit: "bytes", Protects: "the data dir's bloomwatch.conf"},
//	}
//
// and a test renders it with Render(prefix, bounds) into the doc's
// region between
//
//	<!-- begin generated: NAME (COMMAND) -->
//	<!-- end generated: NAME -->
//
// (package doctabletest holds the test side: the comparison, -update and
// the check that every max* constant of the package has a row).
package doctable

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bound is one named bound of a package, a row of a bounds table.
type Bound struct {
	Name     string // the constant, as the code names it
	Value    any    // the constant itself: an integer, a float64 or a time.Duration
	Unit     string // what an integer or float Value counts ("bytes" prints as B, KiB, MiB)
	Protects string // what it bounds, and against what
}

// Header is the first two lines of the table Render writes.
const Header = "| bound | value | what it bounds |\n|---|---|---|\n"

// Render writes bounds as a Markdown table, in their order, each name
// qualified by prefix (a package name and a dot, or "").
func Render(prefix string, bounds []Bound) (string, error) {
	var b strings.Builder
	b.WriteString(Header)
	for _, bd := range bounds {
		v, err := FormatBound(bd)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "| `%s%s` | %s | %s |\n", prefix, bd.Name, v, bd.Protects)
	}
	return b.String(), nil
}

// FormatBound formats a bound's value in its unit: durations in s or
// min, integers grouped by thousands (bytes in B, KiB or MiB).
func FormatBound(bd Bound) (string, error) {
	switch v := bd.Value.(type) {
	case time.Duration:
		if v%time.Minute == 0 {
			return strconv.FormatInt(int64(v/time.Minute), 10) + " min", nil
		}
		return strconv.FormatFloat(v.Seconds(), 'g', -1, 64) + " s", nil
	case int:
		return FormatValue(int64(v), bd.Unit), nil
	case int64:
		return FormatValue(v, bd.Unit), nil
	case uint8:
		return FormatValue(int64(v), bd.Unit), nil
	case uint32:
		return FormatValue(int64(v), bd.Unit), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64) + " " + bd.Unit, nil
	}
	return "", fmt.Errorf("bound %s: value of type %T", bd.Name, bd.Value)
}

// FormatValue writes n in unit: bytes in B below 64 KiB, else in KiB or
// MiB when whole; other units after the grouped number.
func FormatValue(n int64, unit string) string {
	if unit != "bytes" {
		return Group(n) + " " + unit
	}
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return Group(n>>20) + " MiB"
	case n >= 64<<10 && n%(1<<10) == 0:
		return Group(n>>10) + " KiB"
	}
	return Group(n) + " B"
}

// Group writes n with a comma between groups of three digits.
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Markers returns the lines that open and close the generated region
// name; command is the command that regenerates it.
func Markers(name, command string) (begin, end string) {
	return "<!-- begin generated: " + name + " (" + command + ") -->\n", "<!-- end generated: " + name + " -->"
}

// Replace replaces the region name of text (between its Markers) with
// table, returning the new text and the region's old content.
func Replace(text, name, command, table string) (next, old string, err error) {
	begin, end := Markers(name, command)
	i := strings.Index(text, begin)
	if i < 0 {
		return "", "", fmt.Errorf("doctable: no region %q: the doc lacks the line %q", name, strings.TrimSuffix(begin, "\n"))
	}
	i += len(begin)
	j := strings.Index(text[i:], end)
	if j < 0 {
		return "", "", fmt.Errorf("doctable: region %q is not closed by %q", name, end)
	}
	j += i
	return text[:i] + table + text[j:], text[i:j], nil
}
