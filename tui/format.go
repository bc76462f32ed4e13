package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// fmtRate formats a probability or a rate: 0, or scientific with three
// significant digits and a bare exponent (1.55e-4, not 1.55e-04).
func fmtRate(f float64) string {
	if f == 0 {
		return "0"
	}
	return fmtSci(f, 2)
}

// fmtSci formats v in scientific notation with prec decimals and a clean
// exponent ("7.2e-8", "1.2e6").
func fmtSci(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "--"
	}
	s := strconv.FormatFloat(v, 'e', prec, 64)
	i := strings.IndexByte(s, 'e')
	if i < 0 {
		return s
	}
	mant, exp := s[:i], s[i+1:]
	sign := ""
	switch exp[0] {
	case '-':
		sign, exp = "-", exp[1:]
	case '+':
		exp = exp[1:]
	}
	exp = strings.TrimLeft(exp, "0")
	if exp == "" {
		exp = "0"
	}
	return mant + "e" + sign + exp
}

// fmtInt formats an integer with thousands separators (2,878).
func fmtInt(v int64) string {
	if v < 0 {
		return "-" + groupDigits(strconv.FormatUint(uint64(-(v+1))+1, 10))
	}
	return groupDigits(strconv.FormatInt(v, 10))
}

// fmtUint formats an unsigned integer with thousands separators.
func fmtUint(v uint64) string { return groupDigits(strconv.FormatUint(v, 10)) }

// groupDigits puts a comma every three digits from the right.
func groupDigits(s string) string {
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	head := len(s) % 3
	b.WriteString(s[:head])
	for i := head; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// formatCount formats an expected count (a number of false positives):
// two decimals below 100, whole with separators below a million,
// scientific outside.
func formatCount(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "--"
	case v == 0:
		return "0"
	case math.Abs(v) < 0.01:
		return fmtSci(v, 1)
	case math.Abs(v) < 100:
		return fmt.Sprintf("%.2f", v)
	case math.Abs(v) < 1e6:
		return fmtInt(int64(math.Round(v)))
	}
	return fmtSci(v, 1)
}

// fmtPct formats a fraction as a percentage with one decimal.
func fmtPct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "--"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

// plural returns one for n == 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
