package proc

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Leftovers lists child processes of this process that are still
// running, other processes whose working directory is inside tmp (a
// test binary's private TMPDIR, where nodes keep their scratch
// directories), and entries left in tmp: what a test binary's TestMain
// reports as leaked.
func Leftovers(tmp string) []string {
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

// LoopbackSockets checks every TCP and UDP socket of process pid: both
// ends must be loopback (or unspecified, for a listener's remote end).
// It returns how many sockets it checked, or an error naming the first
// one that is not.
func LoopbackSockets(pid int) (int, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return 0, err
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("testnet: pid %d holds no socket", pid)
	}
	seen := 0
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
		n, err := checkTable(pid, table, inodes)
		if err != nil {
			return seen, err
		}
		seen += n
	}
	return seen, nil
}

// checkTable checks pid's sockets listed in /proc/pid/net/table.
func checkTable(pid int, table string, inodes map[string]bool) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
	if err != nil {
		return 0, fmt.Errorf("testnet: socket table: %w", err)
	}
	defer f.Close()
	seen := 0
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || !inodes[fields[9]] {
			continue
		}
		seen++
		local, err := procAddr(fields[1])
		if err != nil {
			return seen, err
		}
		remote, err := procAddr(fields[2])
		if err != nil {
			return seen, err
		}
		if !local.IsLoopback() {
			return seen, fmt.Errorf("testnet: pid %d: %s socket bound to %s", pid, table, local)
		}
		if !remote.IsLoopback() && !remote.IsUnspecified() {
			return seen, fmt.Errorf("testnet: pid %d: %s socket to %s", pid, table, remote)
		}
	}
	return seen, sc.Err()
}

// socketInodes returns the inodes of the sockets process pid holds.
func socketInodes(pid int) (map[string]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("testnet: sockets of pid %d: %w", pid, err)
	}
	inodes := make(map[string]bool)
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	return inodes, nil
}

// procAddr decodes a /proc/net/tcp{,6} or udp{,6} address "HEX:PORT".
func procAddr(s string) (net.IP, error) {
	host, _, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("testnet: socket address %q", s)
	}
	raw, err := hex.DecodeString(host)
	if err != nil {
		return nil, fmt.Errorf("testnet: socket address %q: %w", s, err)
	}
	// The kernel prints each 32-bit word in host (little-endian) order.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.IP(raw), nil
}

// RunTests is a harness package's TestMain: it runs m's tests with a
// private TMPDIR, then fails the run (exit code 1) if Leftovers finds
// anything left behind, naming pkg, and returns the exit code.
func RunTests(m *testing.M, pkg string) int {
	tmp, err := os.MkdirTemp("", pkg+"-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(tmp)
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	if leaks := Leftovers(tmp); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "%s: leaked after tests:\n  %s\n", pkg, strings.Join(leaks, "\n  "))
		if code == 0 {
			code = 1
		}
	}
	return code
}
