package testnet

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// child is the lifecycle a node process shares with the others (btcd's
// Node, bcoin's BcoinNode): reaping by PID, the SIGINT-then-SIGKILL stop,
// handing the process's output to the configured log, and removing the
// scratch directory.
type child struct {
	name    string // "btcd", "bcoin": in errors
	killed  error  // what a SIGKILL stop wraps (ErrKilled, ErrBcoinKilled)
	proc    *os.Process
	pid     int
	scratch string // temporary directory, removed at stop
	outPath string // the process's captured output
	out     *os.File
	log     io.Writer
	// liveLog is set when the output goes straight to the log (an
	// *os.File) instead of being copied there at stop.
	liveLog     bool
	stopTimeout time.Duration
	// closeClients, when set, closes the node's clients once the process
	// is gone (before its output is copied).
	closeClients func()

	mu      sync.Mutex
	exited  bool
	status  syscall.WaitStatus
	stopped bool
	stopErr error
}

// start runs cmd in the scratch directory, its output captured in
// outName there (stdout straight to the log instead when the log is an
// *os.File: liveLog), in its own process group (a terminal's ^C goes to
// the test, which stops the node in order) and killed if the test binary
// dies.
func (c *child) start(cmd *exec.Cmd, outName string) error {
	if c.stopTimeout <= 0 {
		c.stopTimeout = StopTimeout
	}
	c.outPath = filepath.Join(c.scratch, outName)
	out, err := os.Create(c.outPath)
	if err != nil {
		return fmt.Errorf("testnet: %s output file: %w", c.name, err)
	}
	c.out = out
	cmd.Dir = c.scratch
	cmd.Stdout, cmd.Stderr = out, out
	if f, ok := c.log.(*os.File); ok {
		cmd.Stdout, c.liveLog = f, true
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testnet: start %s: %w", c.name, err)
	}
	c.proc, c.pid = cmd.Process, cmd.Process.Pid
	return nil
}

// reap collects the process if it has exited, blocking until it does
// when block is set. It reports whether the process is gone.
func (c *child) reap(block bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reapLocked(block)
}

func (c *child) reapLocked(block bool) bool {
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

// Exited reports whether the node's process has exited (and reaps it).
func (c *child) Exited() bool { return c.reap(false) }

// Stop stops the node: SIGINT (its graceful shutdown; for btcd not the
// stop RPC, since rpcclient has no request timeout and a wedged btcd
// would hang it), then SIGKILL by PID after the stop timeout (the error
// then wraps ErrKilled or ErrBcoinKilled); it reaps the process, hands
// the node's output to the configured log and removes the temporary
// directory. It is idempotent and returns the first call's result.
func (c *child) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return c.stopErr
	}
	c.stopped = true
	c.stopErr = c.stopLocked()
	return c.stopErr
}

// stopNow is Stop for a node that failed to start.
func (c *child) stopNow() { _ = c.Stop() }

func (c *child) stopLocked() error {
	var errs []error
	if c.proc != nil && !c.reapLocked(false) {
		_ = c.proc.Signal(syscall.SIGINT)
		deadline := time.Now().Add(c.stopTimeout)
		for !c.reapLocked(false) && time.Now().Before(deadline) {
			time.Sleep(pollInterval)
		}
		if !c.reapLocked(false) {
			errs = append(errs, fmt.Errorf("%w: %s pid %d ignored SIGINT for %s, killed", c.killed, c.name, c.pid, c.stopTimeout))
			if err := syscall.Kill(c.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("testnet: kill %s pid %d: %w", c.name, c.pid, err))
			}
			c.reapLocked(true)
		}
	}
	if c.closeClients != nil {
		c.closeClients()
	}
	if c.out != nil {
		_ = c.out.Close()
		if c.log != nil && !c.liveLog {
			if f, err := os.Open(c.outPath); err == nil {
				_, err = io.Copy(c.log, f)
				_ = f.Close()
				if err != nil {
					errs = append(errs, fmt.Errorf("testnet: copy %s log: %w", c.name, err))
				}
			}
		}
	}
	if c.scratch != "" {
		if err := os.RemoveAll(c.scratch); err != nil {
			errs = append(errs, fmt.Errorf("testnet: remove %s: %w", c.scratch, err))
		}
	}
	return errors.Join(errs...)
}
