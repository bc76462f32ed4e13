package amount

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBTC(t *testing.T) {
	for _, c := range []struct {
		sat          int64
		plain, signd string
	}{
		{0, "0.00000000", "0.00000000"},
		{1, "0.00000001", "+0.00000001"},
		{-1, "-0.00000001", "-0.00000001"},
		{-12_000, "-0.00012000", "-0.00012000"},
		{150_000_000, "1.50000000", "+1.50000000"},
		{2_100_000_000_000_000, "21000000.00000000", "+21000000.00000000"},
		{math.MaxInt64, "92233720368.54775807", "+92233720368.54775807"},
		{math.MinInt64, "-92233720368.54775808", "-92233720368.54775808"},
		{math.MinInt64 + 1, "-92233720368.54775807", "-92233720368.54775807"},
	} {
		got := BTC(c.sat)
		require.Equal(t, c.plain, got, "BTC(%d) = %q, want %q", c.sat, got, c.plain)
		got = SignedBTC(c.sat)
		require.Equal(t, c.signd, got, "SignedBTC(%d) = %q, want %q", c.sat, got, c.signd)
	}
}
