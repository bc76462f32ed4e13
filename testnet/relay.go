package testnet

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// Relay is a TCP relay on 127.0.0.1 that forwards every connection to an
// upstream address and records the bytes each way, with the time and size
// of every read: an on-path observer between a client and a node.
type Relay struct {
	ln       net.Listener
	upstream string
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	up     bytes.Buffer // client to upstream
	down   bytes.Buffer // upstream to client
	chunks []RelayChunk
}

// RelayChunk is one read the relay forwarded: what a passive observer
// sees of the stream, a burst of Bytes at Time.
type RelayChunk struct {
	Time time.Time
	// Conn numbers the connection (from 0, in accept order).
	Conn int
	// Up is client to upstream.
	Up    bool
	Bytes int
}

// StartRelay listens on a free 127.0.0.1 port and relays each connection
// to upstream (which must be on 127.0.0.1) until Close or until ctx is
// done.
func StartRelay(ctx context.Context, upstream string) (*Relay, error) {
	host, _, err := net.SplitHostPort(upstream)
	if err != nil || host != "127.0.0.1" {
		return nil, fmt.Errorf("testnet: relay upstream %q: want 127.0.0.1:PORT", upstream)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testnet: relay: listen: %w", err)
	}
	r := &Relay{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.wg.Add(2)
	go r.accept()
	go func() {
		defer r.wg.Done()
		<-r.ctx.Done()
		_ = r.ln.Close()
		r.mu.Lock()
		for c := range r.conns {
			_ = c.Close()
		}
		r.mu.Unlock()
	}()
	return r, nil
}

// Addr returns the relay's "127.0.0.1:port".
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Close stops the relay and its connections and waits for them.
func (r *Relay) Close() error {
	r.cancel()
	r.wg.Wait()
	return nil
}

// Recording returns copies of every byte relayed so far: up (client to
// upstream) and down, each the connections' streams one after another.
func (r *Relay) Recording() (up, down []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.up.Bytes()), bytes.Clone(r.down.Bytes())
}

// Chunks returns a copy of the reads relayed so far, in order.
func (r *Relay) Chunks() []RelayChunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RelayChunk(nil), r.chunks...)
}

// track registers c for shutdown; false once the relay is closing.
func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

// accept relays connections until the listener closes.
func (r *Relay) accept() {
	defer r.wg.Done()
	for id := 0; ; id++ {
		client, err := r.ln.Accept()
		if err != nil {
			return
		}
		var d net.Dialer
		server, err := d.DialContext(r.ctx, "tcp", r.upstream)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !r.track(client) || !r.track(server) {
			_ = client.Close()
			_ = server.Close()
			return
		}
		r.wg.Add(2)
		go r.pipe(id, true, client, server)
		go r.pipe(id, false, server, client)
	}
}

// pipe copies src to dst, recording each read, and closes both at the end.
func (r *Relay) pipe(id int, up bool, src, dst net.Conn) {
	defer r.wg.Done()
	defer func() {
		_ = src.Close()
		_ = dst.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			if up {
				r.up.Write(buf[:n])
			} else {
				r.down.Write(buf[:n])
			}
			r.chunks = append(r.chunks, RelayChunk{Time: time.Now(), Conn: id, Up: up, Bytes: n})
			r.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF, a reset or Close: the connection ends
		}
	}
}
