package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// errNoRusage is returned when the platform gives no rusage for a child.
var errNoRusage = errors.New("bench: child rusage unavailable")

// Measure is one client run as a child process.
type Measure struct {
	// Wall is the time from process start to exit.
	Wall time.Duration
	// CPU is user+sys time of the child from its rusage.
	CPU time.Duration
	// MaxRSS is the child's peak resident set size in bytes (rusage).
	MaxRSS int64
	// ServerCPU is the btcd process's user+sys CPU spent during the run
	// (from /proc), i.e. what the client cost the full node.
	ServerCPU time.Duration
}

// spawnResult is what the spawn helper (spawn/main.go) writes about its
// child.
type spawnResult struct {
	WallNS   int64 `json:"wall_ns"`
	UserNS   int64 `json:"user_ns"`
	SysNS    int64 `json:"sys_ns"`
	MaxRSSKB int64 `json:"maxrss_kb"`
	Exit     int   `json:"exit"`
}

// runMeasured runs name+args through the small spawn helper (spawn/main.go
// explains why) and returns the child's wall time, rusage CPU and peak RSS
// with its stdout; stderr goes to the given writer, or the bench log when
// nil. serverPIDs are the btcd processes whose CPU is sampled before and
// after (summed).
func runMeasured(ctx context.Context, env *benchEnv, serverPIDs []int, stderr io.Writer, name string, args ...string) (Measure, []byte, error) {
	resPath := filepath.Join(env.tmp, fmt.Sprintf("spawn-%d.json", time.Now().UnixNano()))
	defer os.Remove(resPath)
	cmd := exec.CommandContext(ctx, env.spawn, append([]string{resPath, name}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = env.log
	if stderr != nil {
		cmd.Stderr = stderr
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	srv0 := procsCPU(serverPIDs)
	err := cmd.Run()
	srv1 := procsCPU(serverPIDs)
	if err != nil {
		return Measure{}, out.Bytes(), fmt.Errorf("%s %v: %w", filepath.Base(name), shortArgs(args), err)
	}
	b, err := os.ReadFile(resPath)
	if err != nil {
		return Measure{}, out.Bytes(), fmt.Errorf("spawn result: %w", err)
	}
	var r spawnResult
	if err := json.Unmarshal(b, &r); err != nil {
		return Measure{}, out.Bytes(), fmt.Errorf("spawn result: %w", err)
	}
	return Measure{
		Wall:      time.Duration(r.WallNS),
		CPU:       time.Duration(r.UserNS + r.SysNS),
		MaxRSS:    r.MaxRSSKB * 1024, // Linux reports KiB
		ServerCPU: srv1 - srv0,
	}, out.Bytes(), nil
}

func shortArgs(args []string) []string {
	if len(args) > 8 {
		return append(args[:8:8], "...")
	}
	return args
}

// procsCPU sums procCPU over pids (a process that cannot be read counts
// 0).
func procsCPU(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		d, _ := procCPU(pid)
		sum += d
	}
	return sum
}

// procCPU reads user+sys CPU time of pid from /proc/pid/stat.
func procCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("proc stat: %w", err)
	}
	// Fields after the ")" that closes comm: state is field 3; utime and
	// stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("proc stat: malformed")
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 13 {
		return 0, errors.New("proc stat: short")
	}
	ut, err := strconv.ParseInt(string(fields[11]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat utime: %w", err)
	}
	st, err := strconv.ParseInt(string(fields[12]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("proc stat stime: %w", err)
	}
	const clkTck = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clkTck, nil
}
