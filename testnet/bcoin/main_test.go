package bcoin

import (
	"os"
	"testing"

	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// TestMain runs the package's tests with a private TMPDIR and afterwards
// fails the run if any bcoin process, any process working in that
// TMPDIR, or any temporary directory of this package is left behind
// (proc.RunTests).
func TestMain(m *testing.M) { os.Exit(proc.RunTests(m, "bcoin")) }
