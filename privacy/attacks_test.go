package privacy

import (
	"testing"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

func TestParseAttacks(t *testing.T) {
	for _, tc := range []struct {
		list  string
		chain bool
		want  Attacks
	}{
		{"auto", false, Attacks{BothForms: true, Intersection: true}},
		{"auto", true, AllAttacks()},
		{"all", true, AllAttacks()},
		{"none", false, Attacks{}},
		{"single", false, Attacks{}},
		{"both-forms, intersection", false, Attacks{BothForms: true, Intersection: true}},
		{"graph,saturation", true, Attacks{Graph: true, Saturation: true}},
		{"behaviour", true, Attacks{Behaviour: true}},
		{"none,intersection", false, Attacks{Intersection: true}},
	} {
		got, err := ParseAttacks(tc.list, tc.chain)
		require.NoError(t, err, "ParseAttacks(%q, %v) = %+v, %v; want %+v", tc.list, tc.chain, got, err, tc.want)
		require.Equal(t, tc.want, got, "ParseAttacks(%q, %v) = %+v, %v; want %+v", tc.list, tc.chain, got, err, tc.want)
	}
	_, err := ParseAttacks("both-forms,zap", true)
	require.ErrorIs(t, err, ErrUnknownAttack, "unknown name: %v", err)
	require.Contains(t, err.Error(), `unknown attack "zap" (want`, "unknown name: %v", err)
	for _, list := range []string{"graph", "saturation", "behaviour", "all"} {
		_, err := ParseAttacks(list, false)
		require.ErrorIs(t, err, ErrAttackNeedsChain, "%s without a chain: %v", list, err)
	}
}

func TestLastLoadHeight(t *testing.T) {
	h := LastLoadHeight(nil)
	require.Equal(t, int32(-1), h, "no records: %d", h)
	recs := []transcript.Record{
		{Kind: transcript.KindFilterLoad, Height: 5},
		{Kind: transcript.KindFilterLoad, Height: 9},
		{Kind: transcript.KindFilterAdd, Height: 12},
	}
	h = LastLoadHeight(recs)
	require.Equal(t, int32(9), h, "last load at %d, want 9", h)
}
