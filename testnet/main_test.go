package testnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMain runs the package's tests with a private TMPDIR and afterwards
// fails the run if any child process (btcd, bcoin's node), any process
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
	if leaks := leftovers(tmp); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "testnet: leaked after tests:\n  %s\n", strings.Join(leaks, "\n  "))
		if code == 0 {
			code = 1
		}
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

// leftovers lists child processes of this test binary that are still
// running, other processes whose working directory is inside the
// private TMPDIR, and entries left in it.
func leftovers(tmp string) []string {
	var out []string
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		out = append(out, "temp entry "+filepath.Join(tmp, e.Name()))
	}
	procs, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state, ppid, ...
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) > 1 && fields[1] == self && fields[0] != "Z" {
			out = append(out, "child process "+p.Name()+" "+s[:i+1])
			continue
		}
		// Nodes run in scratch directories under tmp (btcd and bcoin
		// alike): a process still working there is one of theirs that
		// outlived its parent, e.g. a grandchild of a test binary.
		if cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd")); err == nil && p.Name() != self &&
			len(fields) > 0 && fields[0] != "Z" && strings.HasPrefix(cwd, tmp+string(filepath.Separator)) {
			out = append(out, "process "+p.Name()+" "+s[:i+1]+" in "+cwd)
		}
	}
	return out
}
