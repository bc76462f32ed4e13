package descriptor

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
)

// FuzzParseDescriptor feeds arbitrary text to Parse on mainnet and
// regtest: it must never panic; a refusal wraps one of the sentinel
// errors with a message of one line; an accepted descriptor is printed
// with its checksum, and that text parses again to the same descriptor
// with the same scripts. The seeds (the BIP380-389 vectors the tests use,
// single key and multisig, valid and invalid) run in every go test.
// (wallet's TestParseDescriptorInputErrors checks that ParseDescriptor
// makes every refusal an *InputError.)
func FuzzParseDescriptor(f *testing.F) {
	const tpub = "tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B"
	seeds := []string{
		"", "#", "raw(deadbeef)#89f8spxm", "addr(mkmZxiEcEd8ZqjQWVZuC6so5dFMKEFpN2j)",
		"wpkh(" + bip380Pub + ")", "pkh(" + bip380Unc + ")", "tr(a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)",
		"wpkh([deadbeef/84h/1h/0h]" + tpub + "/<0;1>/*)", "sh(wpkh(" + tpub + "/0/*))", "tr(" + tpub + "/1/*)",
		"wsh(sortedmulti(2,[deadbeef/48h/1h/0h/2h]" + tpub + "/<0;1>/*," + bip380Pub + "," + tpub + "/7/<0;1>/*))",
		"sh(multi(1," + bip380Unc + "," + bip380Pub + "))", "sh(wsh(multi(1," + tpub + "/0/*)))",
		"wsh(multi(0," + bip380Pub + "))", "wsh(multi(99," + bip380Pub + "))", "wsh(multi(1,))", "wsh(multi(,))",
		"wsh(multi(1," + tpub + "/<0;1>/*," + tpub + "/<0;1;2>/*))", "sh(wsh(wpkh(" + bip380Pub + ")))",
		"wsh(multi(1," + bip380Xprv + "/0/*))", "multi(1," + bip380WIFC + ")", "sh(sh(multi(1," + bip380Pub + ")))",
		"wsh(multi(2," + strings.Repeat(bip380Pub+",", 20) + bip380Pub + "))",
	}
	for _, v := range bip383Valid {
		seeds = append(seeds, v.desc)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, params := range []*chaincfg.Params{&chaincfg.MainNetParams, &chaincfg.RegressionNetParams} {
			d, err := Parse(s, params)
			if err != nil {
				requireSentinel(t, err)
				require.False(t, strings.ContainsAny(err.Error(), "\r\n"), "%q on %s: error of several lines: %q", s, params.Name, err)
				continue
			}
			body, sum, _ := strings.Cut(d.String(), "#")
			want, err := Checksum(body)
			require.NoError(t, err, "%q on %s: printed %q with checksum %q", s, params.Name, d, sum)
			require.Len(t, sum, ChecksumLen, "%q on %s: printed %q with checksum %q", s, params.Name, d, sum)
			require.Equal(t, want, sum, "%q on %s: printed %q with checksum %q", s, params.Name, d, sum)
			again, err := Parse(d.String(), params)
			require.NoError(t, err, "%q on %s: its printed form %q is refused", s, params.Name, d)
			require.Equal(t, d.String(), again.String(), "%q on %s: parsed again differently: %+v vs %+v", s, params.Name, again, d)
			require.Equal(t, d.Kind(), again.Kind(), "%q on %s: parsed again differently: %+v vs %+v", s, params.Name, again, d)
			require.Equal(t, d.Ranged(), again.Ranged(), "%q on %s: parsed again differently: %+v vs %+v", s, params.Name, again, d)
			require.Equal(t, strings.Join(hexScripts(t, d, params), ","), strings.Join(hexScripts(t, again, params), ","), "%q on %s: parsed again differently: %+v vs %+v", s, params.Name, again, d)
		}
	})
}

// hexScripts returns the scripts (hex) of a non-ranged descriptor with
// keys; nil for a ranged one, addr() and raw().
func hexScripts(t *testing.T, d *Descriptor, params *chaincfg.Params) []string {
	t.Helper()
	_, isAddr := d.Addr()
	_, isRaw := d.Raw()
	if d.Ranged() || isAddr || isRaw {
		return nil
	}
	ss, err := d.Scripts(params)
	require.NoError(t, err, "%s on %s: scripts", d, params.Name)
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = hex.EncodeToString(s.PkScript)
	}
	return out
}
