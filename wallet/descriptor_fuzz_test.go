package wallet

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseDescriptor feeds arbitrary text to ParseDescriptor on mainnet
// and regtest: it must never panic; a refusal is an *InputError about
// the descriptor with a message of one line; an accepted descriptor is
// printed with its checksum, and that text parses again to the same
// description. The seeds (the BIP380-389 vectors the tests use, single
// key and multisig, valid and invalid) run in every go test.
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
		for _, network := range []string{"mainnet", "regtest"} {
			info, err := ParseDescriptor(s, network)
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) || ie.What != "descriptor" {
					t.Fatalf("%q on %s: %v is not an input error about the descriptor", s, network, err)
				}
				if strings.ContainsAny(err.Error(), "\r\n") {
					t.Fatalf("%q on %s: error of several lines: %q", s, network, err)
				}
				continue
			}
			if len(info.Checksum) != DescriptorChecksumLen || !strings.HasSuffix(info.Descriptor, "#"+info.Checksum) {
				t.Fatalf("%q on %s: printed %q with checksum %q", s, network, info.Descriptor, info.Checksum)
			}
			again, err := ParseDescriptor(info.Descriptor, network)
			if err != nil {
				t.Fatalf("%q on %s: its printed form %q is refused: %v", s, network, info.Descriptor, err)
			}
			if again.Descriptor != info.Descriptor || again.Kind != info.Kind || again.Ranged != info.Ranged ||
				strings.Join(again.Scripts, ",") != strings.Join(info.Scripts, ",") {
				t.Fatalf("%q on %s: parsed again differently: %+v vs %+v", s, network, again, info)
			}
		}
	})
}
