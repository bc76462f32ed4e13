package main

import (
	"net"
	"sync/atomic"
)

// countConn wraps a net.Conn and counts the bytes read from it, so a client's
// download is measured on the wire, the same way for every client.
type countConn struct {
	net.Conn
	n *atomic.Uint64
}

func (c countConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(uint64(n))
	return n, err
}
