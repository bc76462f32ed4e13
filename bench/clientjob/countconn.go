package clientjob

import (
	"net"
	"sync/atomic"
)

// CountConn wraps a net.Conn and counts the bytes read from it, so a client's
// download is measured on the wire, the same way for every client.
type CountConn struct {
	net.Conn
	// N counts the bytes read.
	N *atomic.Uint64
}

// Read reads from the connection and counts what it read.
func (c CountConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.N.Add(uint64(n))
	return n, err
}
