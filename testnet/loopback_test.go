package testnet

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// socketInodes returns the inodes of the sockets process pid holds.
func socketInodes(t *testing.T, pid int) map[string]bool {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	require.NoError(t, err)
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
	return inodes
}

// procAddr decodes a /proc/net/tcp{,6} or udp{,6} address "HEX:PORT".
func procAddr(t *testing.T, s string) net.IP {
	t.Helper()
	host, _, ok := strings.Cut(s, ":")
	require.True(t, ok, s)
	raw, err := hex.DecodeString(host)
	require.NoError(t, err)
	// The kernel prints each 32-bit word in host (little-endian) order.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.IP(raw)
}

// requireLoopbackOnly checks every TCP and UDP socket of pid: both ends
// must be loopback (or unspecified, for a listener's remote end).
func requireLoopbackOnly(t *testing.T, pid int) int {
	t.Helper()
	inodes := socketInodes(t, pid)
	require.NotEmpty(t, inodes)
	seen := 0
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			seen++
			local, remote := procAddr(t, fields[1]), procAddr(t, fields[2])
			require.True(t, local.IsLoopback(), "%s socket bound to %s", table, local)
			require.True(t, remote.IsLoopback() || remote.IsUnspecified(), "%s socket to %s", table, remote)
		}
		f.Close()
	}
	return seen
}

// TestBtcdTalksLoopbackOnly inspects the sockets of two connected btcd
// processes (P2P both ways, RPC): nothing but 127.0.0.1.
func TestBtcdTalksLoopbackOnly(t *testing.T) {
	h := NewT(t, Options{})
	_, err := h.Noise(2)
	require.NoError(t, err)
	_, err = h.Reorg(t.Context(), 1, ReorgOptions{})
	require.NoError(t, err)
	for _, n := range []*Node{h.Node(), h.node2} {
		seen := requireLoopbackOnly(t, n.PID())
		require.GreaterOrEqual(t, seen, 3, "P2P and RPC listeners and the peer link")
	}
}
