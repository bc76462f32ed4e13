package hostile

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// server is the listener both peers (Peer, SilentPeer) run: it accepts on
// 127.0.0.1 until Close or until its context is done, runs handle for
// each connection in its own goroutine, and on shutdown closes the
// listener and every connection. mu guards conns and whatever the owner
// keeps beside them (its stats).
type server struct {
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	once  sync.Once

	// accepted runs under mu for each connection taken; handle serves
	// one connection, then closes it and deletes it from conns (under mu,
	// with whatever it counts); logf reports accept errors.
	accepted func()
	handle   func(net.Conn)
	logf     func(format string, args ...any)
}

// listen opens a listener on a free 127.0.0.1 port; what names the peer in
// errors.
func (s *server) listen(ctx context.Context, what string) error {
	return s.listenOn(ctx, what, 0)
}

// listenOn opens a listener on 127.0.0.1:port (0: a free port).
func (s *server) listenOn(ctx context.Context, what string, port uint16) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("hostile: %s: listen: %w", what, err)
	}
	s.ln = ln
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.conns = make(map[net.Conn]struct{})
	return nil
}

// serveAll starts accepting, and the shutdown when the context ends.
func (s *server) serveAll() {
	s.wg.Add(2)
	go s.acceptLoop()
	go func() {
		defer s.wg.Done()
		<-s.ctx.Done()
		s.shutdown()
	}()
}

// Addr returns the "127.0.0.1:port" address to connect to.
func (s *server) Addr() string { return s.ln.Addr().String() }

// Close stops listening, closes every connection and waits for the
// peer's goroutines. It is idempotent.
func (s *server) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// shutdown closes the listener and the connections once.
func (s *server) shutdown() {
	s.once.Do(func() {
		_ = s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
	})
}

// acceptLoop accepts connections until the listener closes.
func (s *server) acceptLoop() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if s.ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				s.logf("accept: %v", err)
			}
			return
		}
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			_ = conn.Close()
			return
		}
		s.conns[conn] = struct{}{}
		s.accepted()
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(conn)
		}()
	}
}
