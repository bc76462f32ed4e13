package nodeapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// Limits of the server.
const (
	// MaxRequestBytes bounds a request body (a transaction of a full
	// block's weight in hex fits).
	MaxRequestBytes = 10 << 20
	// readHeaderTimeout bounds the wait for a request's headers.
	readHeaderTimeout = 10 * time.Second
	// shutdownTimeout bounds Close's wait for running requests.
	shutdownTimeout = 5 * time.Second
)

// Config configures a Server. Wallet is required.
type Config struct {
	// Wallet is the running session's wallet, read by every wallet
	// method.
	Wallet *wallet.Wallet
	// Listen is DefaultListen when empty, 127.0.0.1:PORT, or ListenUnix
	// (see CheckListen).
	Listen string
	// Broadcast sends a transaction through the running node
	// (session.Session.Broadcast); nil: the broadcast method is not
	// served.
	Broadcast func(ctx context.Context, tx *wire.MsgTx, opts spv.BroadcastOptions) (*spv.BroadcastResult, error)
	// Status returns the node's status for the status method (nil:
	// none).
	Status func() spv.Status
	// Methods are extra methods (the demo's faucet), by name.
	Methods map[string]Handler
	// Dashboard feeds attached dashboards (StreamPath, MethodReload);
	// nil: none.
	Dashboard *Dashboard
	// Log receives one line per start and stop, and each failed request
	// at debug level (nil: none).
	Log *slog.Logger
}

// Server is a running node API.
type Server struct {
	cfg      Config
	dir      string
	password string
	address  string
	methods  map[string]Handler
	ln       net.Listener
	http     *http.Server
	served   chan struct{}
	// ctx is canceled by Close, ending the methods still running (a
	// broadcast waiting for its relay).
	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
	closeErr  error
	// cache keeps the latest events for dashboards that attach later;
	// balance is the balance snapshot (both nil without a node).
	cache   *lastEvents
	balance *balanceSnapshot
}

// Start listens, writes the cookie and the address file into the wallet's
// data dir and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Wallet == nil {
		return nil, errors.New("nodeapi: no wallet")
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if err := CheckListen(cfg.Listen); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(cfg.Wallet.Dir())
	if err != nil {
		return nil, fmt.Errorf("nodeapi: data dir: %w", err)
	}
	s := &Server{cfg: cfg, dir: dir, served: make(chan struct{})}
	s.methods = s.builtin()
	for name, h := range cfg.Methods {
		s.methods[name] = h
	}
	if s.password, err = newCookie(); err != nil {
		return nil, err
	}
	if cfg.Listen == ListenUnix {
		path := filepath.Join(dir, SocketFile)
		if len(path) > maxSocketPath {
			return nil, fmt.Errorf("%w: the socket path %s is longer than %d bytes: listen on 127.0.0.1 instead", ErrBadListen, path, maxSocketPath)
		}
		_ = os.Remove(path) // a socket a killed node left
		if s.ln, err = net.Listen("unix", path); err != nil {
			return nil, fmt.Errorf("nodeapi: listen: %w", err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			_ = s.ln.Close()
			return nil, fmt.Errorf("nodeapi: socket permission: %w", err)
		}
		s.address = "unix:" + path
	} else {
		if s.ln, err = net.Listen("tcp4", cfg.Listen); err != nil {
			return nil, fmt.Errorf("nodeapi: listen: %w", err)
		}
		s.address = s.ln.Addr().String()
	}
	if err := writeFiles(dir, s.password, s.address); err != nil {
		_ = s.ln.Close()
		return nil, fmt.Errorf("nodeapi: %w", err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if cfg.Dashboard != nil {
		s.startCache()
	}
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ErrorLog:          nil,
	}
	go func() {
		defer close(s.served)
		_ = s.http.Serve(s.ln)
	}()
	cfg.Log.Info("node API listening", "address", s.address, "cookie", filepath.Join(dir, CookieFile))
	return s, nil
}

// Address returns where the server listens: 127.0.0.1:PORT or unix:PATH.
func (s *Server) Address() string { return s.address }

// Close stops listening, ends the running requests (waiting for them at
// most a few seconds) and removes the cookie, the address file and the
// socket. It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		s.cancel()
		err := s.http.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = s.http.Close()
		}
		<-s.served
		for _, name := range []string{AddressFile, CookieFile, SocketFile} {
			if rerr := os.Remove(filepath.Join(s.dir, name)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
				err = rerr
			}
		}
		s.closeErr = err
		s.cfg.Log.Info("node API stopped", "address", s.address)
	})
	return s.closeErr
}

// request is a JSON-RPC 2.0 request.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// response is a JSON-RPC 2.0 response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// ServeHTTP answers one JSON-RPC request: POST, from 127.0.0.1 (or the
// unix socket), with the cookie, without a browser's Origin.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if !fromLoopback(r.RemoteAddr) {
		http.Error(rw, "the node API answers 127.0.0.1 only", http.StatusForbidden)
		return
	}
	if r.Header.Get("Origin") != "" {
		// A browser's page: it cannot read the cookie, but refuse it
		// before it costs anything.
		http.Error(rw, "no cross-origin requests", http.StatusForbidden)
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != CookieUser || subtle.ConstantTimeCompare([]byte(pass), []byte(s.password)) != 1 {
		rw.Header().Set("WWW-Authenticate", `Basic realm="bloomwatch"`)
		http.Error(rw, "the cookie of the data dir is required", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(rw, "POST a JSON-RPC 2.0 request", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == StreamPath {
		s.serveStream(rw, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxRequestBytes))
	if err != nil {
		s.reply(rw, response{Error: &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("request body: %v", err)}})
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		s.reply(rw, response{Error: &Error{Code: CodeParse, Message: fmt.Sprintf("not JSON: %v", err)}})
		return
	}
	resp := response{ID: req.ID}
	h, found := s.methods[req.Method]
	switch {
	case req.JSONRPC != "2.0":
		resp.Error = &Error{Code: CodeInvalidRequest, Message: `"jsonrpc" must be "2.0"`}
	case !found:
		resp.Error = &Error{Code: CodeNoMethod, Message: fmt.Sprintf("no method %q (the status method lists them)", req.Method)}
	default:
		res, err := h(r.Context(), req.Params)
		if err != nil {
			resp.Error = &Error{Code: CodeFailure, Message: err.Error()}
			if IsInputError(err) {
				resp.Error.Code = CodeInput
			}
			s.cfg.Log.Debug("node API request failed", "method", req.Method, "err", err)
		} else {
			resp.Result = res
		}
	}
	s.reply(rw, resp)
}

// reply writes resp.
func (s *Server) reply(rw http.ResponseWriter, resp response) {
	resp.JSONRPC = "2.0"
	if resp.ID == nil {
		resp.ID = json.RawMessage("null")
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(resp); err != nil {
		resp.Result, resp.Error = nil, &Error{Code: CodeInternal, Message: fmt.Sprintf("encode the result: %v", err)}
		b.Reset()
		_ = json.NewEncoder(&b).Encode(resp)
	}
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write(b.Bytes())
}

// fromLoopback reports whether a request's remote address is 127.0.0.1
// or the unix socket's (which has no IP address).
func fromLoopback(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote == "" || remote == "@" // a unix socket's peer
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.Equal(net.IPv4(127, 0, 0, 1))
}

// decode decodes params into v; absent params leave v as it is.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return InputErrorf("params: %v", err)
	}
	return nil
}

// builtin returns the wallet's methods, status and broadcast.
func (s *Server) builtin() map[string]Handler {
	l := &Local{W: s.cfg.Wallet}
	m := map[string]Handler{
		MethodStatus: s.status,
		MethodBalance: func(ctx context.Context, _ json.RawMessage) (any, error) {
			if s.balance != nil {
				return s.balance.answer(ctx)
			}
			return l.Balance(ctx)
		},
		MethodTxs:       func(ctx context.Context, _ json.RawMessage) (any, error) { return l.Txs(ctx) },
		MethodUTXOs:     func(ctx context.Context, _ json.RawMessage) (any, error) { return l.UTXOs(ctx) },
		MethodAddresses: func(ctx context.Context, _ json.RawMessage) (any, error) { return l.Addresses(ctx) },
		MethodTruth:     func(ctx context.Context, _ json.RawMessage) (any, error) { return l.Truth(ctx) },
		MethodStats: func(ctx context.Context, p json.RawMessage) (any, error) {
			var sp StatsParams
			if err := decode(p, &sp); err != nil {
				return nil, err
			}
			return l.Stats(ctx, sp.FalsePositives)
		},
		MethodReceive: func(ctx context.Context, p json.RawMessage) (any, error) {
			var rp ReceiveParams
			if err := decode(p, &rp); err != nil {
				return nil, err
			}
			return l.Receive(ctx, rp.options())
		},
		MethodPSBT: func(ctx context.Context, p json.RawMessage) (any, error) {
			var pp PSBTParams
			if err := decode(p, &pp); err != nil {
				return nil, err
			}
			req, err := pp.request()
			if err != nil {
				return nil, err
			}
			return l.CreatePSBT(ctx, req)
		},
	}
	if s.cfg.Broadcast != nil {
		m[MethodBroadcast] = s.broadcast
	}
	if d := s.cfg.Dashboard; d != nil && d.Reload != nil {
		m[MethodReload] = func(_ context.Context, p json.RawMessage) (any, error) {
			var rp struct {
				Reason string `json:"reason"`
			}
			if err := decode(p, &rp); err != nil {
				return nil, err
			}
			if rp.Reason == "" {
				return nil, InputErrorf("reason: required")
			}
			d.Reload(rp.Reason)
			return struct{}{}, nil
		}
	}
	return m
}

// status serves the status method.
func (s *Server) status(context.Context, json.RawMessage) (any, error) {
	info := &StatusInfo{DataDir: s.dir, Network: s.cfg.Wallet.Network(), PID: os.Getpid()}
	for name := range s.methods {
		info.Methods = append(info.Methods, name)
	}
	slices.Sort(info.Methods)
	if s.cfg.Status != nil {
		info.Node = NodeStateOf(s.cfg.Status())
	}
	return info, nil
}

// broadcast serves the broadcast method: the transaction is checked
// against the wallet (every input an unspent coin of it, verified), sent
// through the running node, and returned as the wallet then holds it.
func (s *Server) broadcast(ctx context.Context, p json.RawMessage) (any, error) {
	var bp BroadcastParams
	if err := decode(p, &bp); err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(bp.Tx)
	if err != nil {
		return nil, InputErrorf("tx: bad hex: %v", err)
	}
	tx := wire.NewMsgTx(2)
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		return nil, InputErrorf("tx: not a transaction: %v", err)
	}
	if bp.To != "" {
		if err := spv.CheckPeerAddr(bp.To); err != nil {
			return nil, InputErrorf("to: %v", err)
		}
	}
	if bp.TimeoutNS < 0 {
		return nil, InputErrorf("timeout_ns: negative")
	}
	if err := s.cfg.Wallet.CheckSpend(tx); err != nil {
		return nil, err
	}
	opts := spv.BroadcastOptions{To: bp.To, Timeout: time.Duration(bp.TimeoutNS)}
	res, err := s.cfg.Broadcast(ctx, tx, opts)
	if err != nil {
		if res != nil && res.Rebroadcast {
			return nil, fmt.Errorf("%s sent to %s, and the node sends it again on each block until its first confirmation: %w",
				tx.TxHash(), res.SentTo, err)
		}
		if res != nil && res.SentTo != "" {
			return nil, fmt.Errorf("%s sent to %s: %w", tx.TxHash(), res.SentTo, err)
		}
		return nil, err
	}
	info := &BroadcastInfo{Result: res}
	txs, err := s.cfg.Wallet.Txs()
	if err != nil {
		return nil, err
	}
	for i := range txs {
		if txs[i].Txid == res.Txid {
			info.Wallet = &txs[i]
		}
	}
	return info, nil
}
