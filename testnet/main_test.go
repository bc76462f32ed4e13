package testnet

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// TestMain runs the package's tests with a private TMPDIR and afterwards
// fails the run if any child process (btcd), any process
// working in that TMPDIR, or any temporary directory of this package is
// left behind.
func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "testnet-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	if leaks := proc.Leftovers(tmp); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "testnet: leaked after tests:\n  %s\n", strings.Join(leaks, "\n  "))
		if code == 0 {
			code = 1
		}
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}
