// Package ptytest opens pseudo-terminals for tests: the one kind of
// terminal a test can make without a user, to check what a command does
// when its output is a terminal.
package ptytest

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Open returns a new pseudo-terminal's master and slave sides, closed at
// the end of the test: what is written to slave is read from master
// (with each newline as CR LF). It skips the test on a machine without
// /dev/ptmx.
func Open(t testing.TB) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal on this machine: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	fd := int(master.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0), "unlock the pseudo-terminal")
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err, "pseudo-terminal number")
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err, "open the pseudo-terminal's slave")
	t.Cleanup(func() { _ = slave.Close() })
	return master, slave
}
