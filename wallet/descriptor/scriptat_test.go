package descriptor

import (
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
)

// TestScriptAtKeepsTheKeySerialization checks that ScriptAt, which the
// signing metadata uses, gives the script Scripts watches for a hex key
// in each serialization: BIP381's pkh() vector with an uncompressed key
// hashes the 65-byte key, and the same key compressed the 33-byte one.
func TestScriptAtKeepsTheKeySerialization(t *testing.T) {
	params := &chaincfg.MainNetParams
	for _, c := range []struct{ desc, script string }{
		{"pkh(04a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd5b8dec5235a0fa8722476c7709c02559e3aa73aa03918ba2d492eea75abea235)",
			"76a914b5bd079c4d57cc7fc28ecf8213a6b791625b818388ac"},
		{"pkh(03a34b99f22c790c4e36b2b3c2c35a36db06226e41c692fc82b8b56ac1c540c5bd)",
			"76a9149a1c78a507689f6f54b847ad1cef1e614ee23f1e88ac"},
	} {
		d, err := Parse(c.desc+"#"+mustChecksum(t, c.desc), params)
		require.NoError(t, err, c.desc)
		watched, err := d.Scripts(params)
		require.NoError(t, err)
		require.Len(t, watched, 1)
		require.Equal(t, c.script, hex.EncodeToString(watched[0].PkScript), c.desc)
		at, err := d.ScriptAt(0, 0, params)
		require.NoError(t, err)
		require.Equal(t, watched[0].PkScript, at.PkScript, "ScriptAt of %s", c.desc)
	}
}

func mustChecksum(t *testing.T, body string) string {
	t.Helper()
	sum, err := Checksum(body)
	require.NoError(t, err)
	return sum
}
