package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// TestMain runs the package's tests with a home directory of their own, so
// that a command without --datadir (the default data dir ~/.bloomwatch/NETWORK)
// and the running demo's record never touch the user's, and without
// $BLOOMWATCH_DATADIR. The Go command's caches, found through the home
// directory by default, keep their places: the tests build binaries.
func TestMain(m *testing.M) {
	os.Exit(runWithHome(m))
}

// runWithHome sets the environment up and runs the tests.
func runWithHome(m *testing.M) int {
	out, err := exec.Command("go", "env", "-json", "GOMODCACHE", "GOCACHE", "GOPATH", "GOENV").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		return 1
	}
	var goEnv map[string]string
	if err := json.Unmarshal(out, &goEnv); err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		return 1
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cache dir:", err)
		return 1
	}
	home, err := os.MkdirTemp("", "bloomwatch-home-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, "home:", err)
		return 1
	}
	defer os.RemoveAll(home)
	for k, v := range goEnv {
		if v != "" {
			os.Setenv(k, v)
		}
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	os.Setenv("HOME", home)
	os.Unsetenv(DatadirEnv)
	return m.Run()
}
