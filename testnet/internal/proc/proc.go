// Package proc runs the node processes of testnet's harnesses, btcd's
// and bcoin's alike: one Child per process (start in a scratch
// directory, readiness wait, reaping by PID, the SIGINT-then-SIGKILL
// stop, the output handed to a log), free loopback ports, the polling
// wait every harness operation uses, and the leak and loopback checks of
// the harnesses' tests.
package proc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Sentinel errors testnet re-exports under the same names.
var (
	// ErrStopped is returned by operations on a stopped node.
	ErrStopped = errors.New("testnet: node stopped")
	// ErrTimeout is returned when a wait does not finish in time.
	ErrTimeout = errors.New("testnet: timed out")
)

// Timeouts and polling of a node's lifecycle.
const (
	// StartTimeout bounds a node's start when the context has no earlier
	// deadline.
	StartTimeout = 60 * time.Second
	// StopTimeout is how long Stop waits by default for a node to exit
	// after SIGINT before it sends SIGKILL.
	StopTimeout = 15 * time.Second
	// WaitTimeout bounds a Poll whose context has no deadline.
	WaitTimeout = 60 * time.Second
	// PollInterval is the period of every polling wait.
	PollInterval = 25 * time.Millisecond
	// StartAttempts is how many port pairs a start tries when the node
	// fails to bind (another process took a free port in between).
	StartAttempts = 3
	// tailBytes is how much of a node's output an error quotes.
	tailBytes = 2048
)

// Child is one node process: its scratch directory (its working
// directory, removed at stop), its captured output and its lifecycle.
// The exported fields are set before Start.
type Child struct {
	// Name names the node in errors ("btcd", "bcoin").
	Name string
	// Killed is what a SIGKILL stop wraps; Exited what Alive and
	// WaitReady wrap when the process is gone.
	Killed, Exited error
	// Scratch is the temporary directory the process runs in.
	Scratch string
	// Log receives the output: an *os.File gets stdout live (stderr
	// stays in OutPath), another writer gets both at stop, nil discards.
	Log io.Writer
	// StopTimeout is how long Stop waits after SIGINT (0 = StopTimeout).
	StopTimeout time.Duration
	// CloseClients, when set, closes the node's clients once the process
	// is gone (before its output is copied).
	CloseClients func()

	proc    *os.Process
	pid     int
	outPath string
	out     *os.File
	liveLog bool

	mu      sync.Mutex
	exited  bool
	status  syscall.WaitStatus
	stopped bool
	stopErr error
}

// Start runs cmd in the scratch directory, its output captured in
// outName there (stdout straight to Log when it is an *os.File), in its
// own process group (a terminal's ^C goes to the test, which stops the
// node in order) and killed if the test binary dies.
func (c *Child) Start(cmd *exec.Cmd, outName string) error {
	if c.StopTimeout <= 0 {
		c.StopTimeout = StopTimeout
	}
	c.outPath = filepath.Join(c.Scratch, outName)
	out, err := os.Create(c.outPath)
	if err != nil {
		return fmt.Errorf("testnet: %s output file: %w", c.Name, err)
	}
	c.out = out
	cmd.Dir = c.Scratch
	cmd.Stdout, cmd.Stderr = out, out
	if f, ok := c.Log.(*os.File); ok {
		cmd.Stdout, c.liveLog = f, true
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testnet: start %s: %w", c.Name, err)
	}
	c.proc, c.pid = cmd.Process, cmd.Process.Pid
	return nil
}

// PID returns the process id.
func (c *Child) PID() int { return c.pid }

// OutPath returns the file that holds the process's output (only its
// stderr when the log gets stdout live).
func (c *Child) OutPath() string { return c.outPath }

// LiveLog reports whether stdout goes straight to the log.
func (c *Child) LiveLog() bool { return c.liveLog }

// Tail returns the last couple of kilobytes of the captured output.
func (c *Child) Tail() string { return TailOf(c.outPath) }

// reap collects the process if it has exited, blocking until it does
// when block is set. It reports whether the process is gone.
func (c *Child) reap(block bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reapLocked(block)
}

func (c *Child) reapLocked(block bool) bool {
	if c.exited || c.proc == nil {
		return true
	}
	opts := syscall.WNOHANG
	if block {
		opts = 0
	}
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(c.pid, &ws, opts, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.ECHILD) {
			c.exited = true
			return true
		}
		if err != nil || wpid != c.pid {
			return false
		}
		c.exited, c.status = true, ws
		_ = c.proc.Release()
		return true
	}
}

// HasExited reports whether the process has exited (and reaps it).
func (c *Child) HasExited() bool { return c.reap(false) }

// Alive returns ErrStopped after Stop, or an error wrapping Exited with
// the exit status and tail() when the process is gone.
func (c *Child) Alive(tail func() string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return ErrStopped
	}
	if c.reapLocked(false) {
		return fmt.Errorf("%w (%s): %s", c.Exited, exitString(c.status), tail())
	}
	return nil
}

// WaitReady polls probe until it succeeds, the process exits (an error
// wrapping Exited, with tail(); retry is set when tail contains bindErr,
// a port taken in between) or ctx ends.
func (c *Child) WaitReady(ctx context.Context, probe func(context.Context) error, tail func() string, bindErr string) (retry bool, err error) {
	for {
		if c.reap(false) {
			out := tail()
			retry := bindErr != "" && strings.Contains(out, bindErr)
			if retry {
				time.Sleep(100 * time.Millisecond) // a fixed port may free up
			}
			return retry, fmt.Errorf("%w before RPC was ready (%s): %s", c.Exited, exitString(c.status), out)
		}
		if probe(ctx) == nil {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("testnet: waiting for %s RPC: %w: %w: %s", c.Name, ErrTimeout, ctx.Err(), tail())
		case <-time.After(PollInterval):
		}
	}
}

// Stop stops the process: SIGINT (its graceful shutdown), then SIGKILL
// by PID after the stop timeout (the error then wraps Killed); it reaps
// the process, hands the output to the log and removes the scratch
// directory. It is idempotent and returns the first call's result.
func (c *Child) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return c.stopErr
	}
	c.stopped = true
	c.stopErr = c.stopLocked()
	return c.stopErr
}

func (c *Child) stopLocked() error {
	var errs []error
	if c.proc != nil && !c.reapLocked(false) {
		_ = c.proc.Signal(syscall.SIGINT)
		deadline := time.Now().Add(c.StopTimeout)
		for !c.reapLocked(false) && time.Now().Before(deadline) {
			time.Sleep(PollInterval)
		}
		if !c.reapLocked(false) {
			errs = append(errs, fmt.Errorf("%w: %s pid %d ignored SIGINT for %s, killed", c.Killed, c.Name, c.pid, c.StopTimeout))
			if err := syscall.Kill(c.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("testnet: kill %s pid %d: %w", c.Name, c.pid, err))
			}
			c.reapLocked(true)
		}
	}
	if c.CloseClients != nil {
		c.CloseClients()
	}
	if c.out != nil {
		_ = c.out.Close()
		if c.Log != nil && !c.liveLog {
			if f, err := os.Open(c.outPath); err == nil {
				_, err = io.Copy(c.Log, f)
				_ = f.Close()
				if err != nil {
					errs = append(errs, fmt.Errorf("testnet: copy %s log: %w", c.Name, err))
				}
			}
		}
	}
	if c.Scratch != "" {
		if err := os.RemoveAll(c.Scratch); err != nil {
			errs = append(errs, fmt.Errorf("testnet: remove %s: %w", c.Scratch, err))
		}
	}
	return errors.Join(errs...)
}

// exitString describes a wait status.
func exitString(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}

// StartWithRetries calls once up to StartAttempts times while it fails
// with retry set, and returns its last error.
func StartWithRetries(once func() (retry bool, err error)) error {
	var err error
	for range StartAttempts {
		var retry bool
		if retry, err = once(); err == nil || !retry {
			return err
		}
	}
	return err
}

// Ports returns a node's P2P and RPC ports: the ones asked for, free
// 127.0.0.1 ports for those left 0.
func Ports(p2p, rpc int) ([]int, error) {
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	if p2p != 0 {
		ports[0] = p2p
	}
	if rpc != 0 {
		ports[1] = rpc
	}
	return ports, nil
}

// FreePorts returns k distinct free TCP ports on 127.0.0.1.
func FreePorts(k int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, k)
	for range k {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("testnet: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// RandomHex returns n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TailOf returns the last couple of kilobytes of a file, from a line
// start.
func TailOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-tailBytes, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	return strings.TrimSpace(string(buf))
}

// Poll calls cond every PollInterval until it returns true or an error,
// or ctx (bounded by WaitTimeout when it has no deadline) ends: then the
// error wraps ErrTimeout and names what.
func Poll(ctx context.Context, what string, cond func() (bool, error)) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, WaitTimeout)
		defer cancel()
	}
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testnet: waiting for %s: %w: %w", what, ErrTimeout, ctx.Err())
		case <-time.After(PollInterval):
		}
	}
}

// TailBuffer keeps the last 16 KiB written to it: a node's output for a
// failed test's log.
type TailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBufferSize = 16 << 10

// Write implements io.Writer.
func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailBufferSize {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-tailBufferSize:]...)
	}
	return len(p), nil
}

// String returns the kept bytes.
func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
