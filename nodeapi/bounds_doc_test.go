package nodeapi

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/boundedread"
	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
)

// TestNodeAPIBoundsTable holds docs/RELIABILITY.md's table of the node
// API's bounds to bounds, and bounds to the source (every max* constant
// of the package, each once); -update rewrites the table.
func TestNodeAPIBoundsTable(t *testing.T) {
	doctabletest.Check(t, "nodeapi", bounds)
}

// TestDialRefusesOversizedFiles gives Dial a data dir whose address file,
// then whose cookie, is above maxNodeFileBytes: refused before it is
// read, naming the file and the bound.
func TestDialRefusesOversizedFiles(t *testing.T) {
	for _, big := range []string{AddressFile, CookieFile} {
		t.Run(big, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, writeFiles(dir, "pw", "127.0.0.1:1"))
			path := filepath.Join(dir, big)
			require.NoError(t, os.Truncate(path, maxNodeFileBytes+1))
			_, err := Dial(context.Background(), dir)
			require.ErrorIs(t, err, boundedread.ErrTooLarge)
			require.ErrorContains(t, err, path+" is 4097 bytes, above nodeapi.maxNodeFileBytes (4096 bytes)")
		})
	}
}

// bounds lists every max* constant of the package, each once;
// TestNodeAPIBoundsTable checks against the source that none is missing.
var bounds = []doctable.Bound{
	{Name: "MaxRequestBytes", Value: MaxRequestBytes, Unit: "bytes", Protects: "a request body (a full block's weight of tx in hex fits)"},
	{Name: "maxResponseBytes", Value: maxResponseBytes, Unit: "bytes", Protects: "a response body the client reads"},
	{Name: "maxStreamErrorBytes", Value: maxStreamErrorBytes, Unit: "bytes", Protects: "what a refused stream request's body puts into its error line"},
	{Name: "maxNodeFileBytes", Value: maxNodeFileBytes, Unit: "bytes", Protects: "the data dir's `.cookie` and `api.address`, read whole by Dial (`attach`, wallet commands beside a running node)"},
	{Name: "maxSocketPath", Value: maxSocketPath, Unit: "bytes", Protects: "`--api-listen unix`'s `DATADIR/api.sock` (sun_path): a longer one is refused"},
}
