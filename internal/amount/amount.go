// Package amount formats satoshi amounts as bitcoin, exactly: the command
// line's wallet tables and the dashboard print every amount through it.
package amount

import "strconv"

// satPerBTC is the number of satoshis in a bitcoin.
const satPerBTC = 100_000_000

// BTC formats sat as bitcoin with eight decimals ("-0.00012000"), with
// integer arithmetic only: every int64 prints exactly, math.MinInt64 and
// math.MaxInt64 included.
func BTC(sat int64) string {
	if sat < 0 {
		// -uint64(sat) is the magnitude, also for math.MinInt64.
		return "-" + magnitude(-uint64(sat))
	}
	return magnitude(uint64(sat))
}

// SignedBTC is BTC with a plus sign before a positive amount: a net change
// ("+0.00012000", "-0.00012000", "0.00000000").
func SignedBTC(sat int64) string {
	if sat > 0 {
		return "+" + BTC(sat)
	}
	return BTC(sat)
}

// magnitude formats mag satoshis as whole bitcoins, a point and eight
// decimals.
func magnitude(mag uint64) string {
	frac := strconv.FormatUint(mag%satPerBTC, 10)
	b := make([]byte, 0, 30)
	b = strconv.AppendUint(b, mag/satPerBTC, 10)
	b = append(b, '.')
	for range 8 - len(frac) {
		b = append(b, '0')
	}
	return string(append(b, frac...))
}
