package nodeapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/internal/boundedread"
)

// File names in the data dir.
const (
	// CookieFile holds "__cookie__:PASSWORD", mode 0600, new at every
	// start of a node (bitcoind's .cookie).
	CookieFile = ".cookie"
	// AddressFile holds where the node listens: "127.0.0.1:PORT" or
	// "unix:PATH".
	AddressFile = "api.address"
	// SocketFile is the unix socket of Listen "unix".
	SocketFile = "api.sock"
	// CookieUser is the basic-auth user of the cookie.
	CookieUser = "__cookie__"
)

// DefaultListen is where a node listens unless told otherwise: a free
// port on 127.0.0.1, written to AddressFile.
const DefaultListen = "127.0.0.1:0"

// ListenUnix is the Listen value for a unix socket in the data dir.
const ListenUnix = "unix"

// maxSocketPath is the longest unix socket path every platform takes
// (sockaddr_un's sun_path is 104 bytes on the BSDs, 108 on Linux).
const maxSocketPath = 103

// ErrBadListen is returned for a Listen value other than 127.0.0.1:PORT
// or "unix".
var ErrBadListen = errors.New("the node API listens on 127.0.0.1:PORT or on a unix socket in the data dir (unix) only")

// CheckListen checks a Listen value: "unix", or 127.0.0.1 with a port
// (0: a free one). Any other host, loopback names and ::1 included, is
// refused.
func CheckListen(listen string) error {
	if listen == ListenUnix {
		return nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrBadListen, listen, err)
	}
	if host != "127.0.0.1" {
		return fmt.Errorf("%w: %q", ErrBadListen, listen)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%w: %q: port: %v", ErrBadListen, listen, err)
	}
	return nil
}

// newCookie returns a fresh cookie password: 32 random bytes in hex.
func newCookie() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("cookie: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// writeFiles writes the cookie and the address file, 0600 both.
func writeFiles(dir, password, address string) error {
	return atomicfile.WriteAll([]atomicfile.Data{
		{Path: filepath.Join(dir, CookieFile), Data: []byte(CookieUser + ":" + password + "\n")},
		{Path: filepath.Join(dir, AddressFile), Data: []byte(address + "\n")},
	}, 0o600)
}

// maxNodeFileBytes bounds the cookie and the address file Dial reads: a
// cookie is a user name and 64 hex digits, an address a socket path of
// at most maxSocketPath bytes or 127.0.0.1:PORT.
const maxNodeFileBytes = 4096

// readFiles reads the cookie's password and the address; os.ErrNotExist
// when no node wrote them, boundedread.ErrTooLarge for a file above
// maxNodeFileBytes.
func readFiles(dir string) (password, address string, err error) {
	a, err := boundedread.ReadFile(filepath.Join(dir, AddressFile), maxNodeFileBytes, "nodeapi.maxNodeFileBytes")
	if err != nil {
		return "", "", err
	}
	c, err := boundedread.ReadFile(filepath.Join(dir, CookieFile), maxNodeFileBytes, "nodeapi.maxNodeFileBytes")
	if err != nil {
		return "", "", err
	}
	user, pw, ok := strings.Cut(strings.TrimSpace(string(c)), ":")
	if !ok || user != CookieUser || pw == "" {
		return "", "", fmt.Errorf("%s: not a cookie", filepath.Join(dir, CookieFile))
	}
	return pw, strings.TrimSpace(string(a)), nil
}
