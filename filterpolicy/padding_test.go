package filterpolicy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFilterPadding(t *testing.T) {
	for in, want := range map[string]FilterPadding{"": PadSteps, "steps": PadSteps, "max": PadMax, "none": PadNone} {
		got, err := ParseFilterPadding(in)
		require.NoError(t, err, "ParseFilterPadding(%q) = %q", in, got)
		require.Equal(t, want, got, "ParseFilterPadding(%q) = %q, %v", in, got, err)
	}
	_, err := ParseFilterPadding("some")
	require.ErrorIs(t, err, ErrBadPadding, "ParseFilterPadding(some): %v", err)
}

// TestPadFilterLoad checks the padded bursts: the smallest class with room
// for a decoy packet, the class itself when the filterload fills it
// exactly, the largest filterload for PadMax, nothing for PadNone.
func TestPadFilterLoad(t *testing.T) {
	cases := []struct {
		p             FilterPadding
		packet        int
		burst, decoys int
	}{
		{PadSteps, 184, 4096, 4096 - 184 - V2PacketOverhead},
		{PadSteps, 4096 - V2PacketOverhead, 4096, 0},
		{PadSteps, 4096 - V2PacketOverhead + 1, 16384, 16384 - (4096 - V2PacketOverhead + 1) - V2PacketOverhead},
		{PadSteps, 4096, 4096, -1},
		{PadSteps, 9825, 16384, 16384 - 9825 - V2PacketOverhead},
		{PadSteps, MaxFilterLoadWire, MaxFilterLoadWire, -1},
		{PadMax, 184, MaxFilterLoadWire, MaxFilterLoadWire - 184 - V2PacketOverhead},
		{PadNone, 184, 184, -1},
	}
	for _, c := range cases {
		burst, decoy := PadFilterLoad(c.p, c.packet)
		require.Equal(t, c.burst, burst, "PadFilterLoad(%s, %d) = %d, %d; want %d, %d", c.p, c.packet, burst, decoy, c.burst, c.decoys)
		require.Equal(t, c.decoys, decoy, "PadFilterLoad(%s, %d) = %d, %d; want %d, %d", c.p, c.packet, burst, decoy, c.burst, c.decoys)
	}
	got := MessageWire(true, 37)
	require.Equal(t, 37+21, got, "v2 wire of a 37-byte payload: %d", got)
	got = MessageWire(false, 37)
	require.Equal(t, 37+24, got, "v1 wire of a 37-byte payload: %d", got)
}

// TestElementsForWire checks what an observer who knows the policy reads
// from a v2 filterload burst: the capacity step's element range without
// padding, the range of every step a class holds with it, nothing for a
// burst no filter of the policy makes. Every element count from 0 to
// 10,000 lands in the range its own burst gives, under each padding.
func TestElementsForWire(t *testing.T) {
	const fp = DefaultFPRate
	cases := []struct {
		wire   int
		p      FilterPadding
		lo, hi int
	}{
		{MessageWire(true, filterLoadPayload(153)), PadNone, 0, 32},
		{MessageWire(true, filterLoadPayload(2448)), PadNone, 257, 512},
		{4096, PadSteps, 0, 512},
		{16384, PadSteps, 513, 2048},
		{MaxFilterLoadWire, PadSteps, 2049, 1<<31 - 1},
		{MaxFilterLoadWire, PadMax, 0, 1<<31 - 1},
	}
	for _, c := range cases {
		got, ok := ElementsForWire(c.wire, fp, c.p)
		require.True(t, ok, "ElementsForWire(%d) = %+v %v, want [%d, %d]", c.wire, got, ok, c.lo, c.hi)
		require.Equal(t, c.lo, got.MinElements, "ElementsForWire(%d) = %+v %v, want [%d, %d]", c.wire, got, ok, c.lo, c.hi)
		require.Equal(t, c.hi, got.MaxElements, "ElementsForWire(%d) = %+v %v, want [%d, %d]", c.wire, got, ok, c.lo, c.hi)
	}
	got, ok := ElementsForWire(5000, fp, PadNone)
	require.False(t, ok, "ElementsForWire(5000) = %+v, want none", got)
	for n := 0; n <= 10000; n += 7 {
		size, _ := FilterSize(n, fp)
		packet := MessageWire(true, filterLoadPayload(size))
		for _, p := range []FilterPadding{PadNone, PadSteps, PadMax} {
			b, _ := PadFilterLoad(p, packet)
			got, ok := ElementsForWire(b, fp, p)
			require.True(t, ok, "%d elements, %s: burst %d reads as %+v %v", n, p, b, got, ok)
			require.GreaterOrEqual(t, n, got.MinElements, "%d elements, %s: burst %d reads as %+v %v", n, p, b, got, ok)
			require.LessOrEqual(t, n, got.MaxElements, "%d elements, %s: burst %d reads as %+v %v", n, p, b, got, ok)
			q, ok := PaddingOf(packet, b)
			require.True(t, ok, "%d elements, %s: PaddingOf(%d, %d) = %s %v", n, p, packet, b, q, ok)
			if p == PadNone {
				require.Equal(t, PadNone, q, "%d elements, %s: PaddingOf(%d, %d) = %s %v", n, p, packet, b, q, ok)
			}
			qb, _ := PadFilterLoad(q, packet)
			require.Equal(t, b, qb, "%d elements: PaddingOf gave %s, whose burst is %d, not %d", n, q, qb, b)
		}
	}
}
