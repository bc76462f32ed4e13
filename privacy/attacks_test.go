package privacy

import (
	"errors"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/transcript"
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
		if err != nil || got != tc.want {
			t.Errorf("ParseAttacks(%q, %v) = %+v, %v; want %+v", tc.list, tc.chain, got, err, tc.want)
		}
	}
	if _, err := ParseAttacks("both-forms,zap", true); !errors.Is(err, ErrUnknownAttack) || !strings.Contains(err.Error(), `unknown attack "zap" (want`) {
		t.Errorf("unknown name: %v", err)
	}
	for _, list := range []string{"graph", "saturation", "behaviour", "all"} {
		if _, err := ParseAttacks(list, false); !errors.Is(err, ErrAttackNeedsChain) {
			t.Errorf("%s without a chain: %v", list, err)
		}
	}
}

func TestLastLoadHeight(t *testing.T) {
	if h := LastLoadHeight(nil); h != -1 {
		t.Errorf("no records: %d", h)
	}
	recs := []transcript.Record{
		{Kind: transcript.KindFilterLoad, Height: 5},
		{Kind: transcript.KindFilterLoad, Height: 9},
		{Kind: transcript.KindFilterAdd, Height: 12},
	}
	if h := LastLoadHeight(recs); h != 9 {
		t.Errorf("last load at %d, want 9", h)
	}
}
