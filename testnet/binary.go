package testnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// BtcdEnv names the environment variable that overrides BtcdBinary with
// the path of an existing btcd executable.
const BtcdEnv = "BLOOMWATCH_BTCD"

// btcdModule is the module (and main package) BtcdBinary builds.
const btcdModule = "github.com/btcsuite/btcd"

var (
	binaryMu   sync.Mutex
	binaryPath string
)

// BtcdBinary returns the path of a btcd executable of the version the
// bloomwatch module requires. BLOOMWATCH_BTCD overrides it with an existing
// file. Otherwise btcd is built once with `go build github.com/btcsuite/btcd`
// in the bloomwatch module root into
// os.UserCacheDir()/bloomwatch/btcd-<version>/btcd; concurrent builds (from
// several test binaries) are safe because each builds to a temporary file
// and renames it into place.
func BtcdBinary(ctx context.Context) (string, error) {
	if p := os.Getenv(BtcdEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("testnet: %s: %w", BtcdEnv, err)
		}
		return p, nil
	}
	binaryMu.Lock()
	defer binaryMu.Unlock()
	if binaryPath != "" {
		return binaryPath, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testnet: cache dir: %w", err)
	}
	// The version comes from this binary's build information when it has
	// it, so an installed bloomwatch finds a cached btcd without the
	// source tree; building needs the module root.
	version := buildInfoVersion()
	if version != "" {
		if target := cachedBinary(cache, version); target != "" {
			binaryPath = target
			return target, nil
		}
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	if version == "" {
		if version, err = btcdVersion(ctx, root); err != nil {
			return "", err
		}
		if target := cachedBinary(cache, version); target != "" {
			binaryPath = target
			return target, nil
		}
	}
	dir := filepath.Join(cache, "bloomwatch", "btcd-"+version)
	target := filepath.Join(dir, "btcd")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testnet: cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "btcd-build-*")
	if err != nil {
		return "", fmt.Errorf("testnet: temp binary: %w", err)
	}
	tmpName := tmp.Name()
	_ = tmp.Close()
	defer os.Remove(tmpName) // no-op after the rename
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmpName, btcdModule)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("testnet: go build %s in %s: %w: %s", btcdModule, root, err, strings.TrimSpace(out.String()))
	}
	if err := os.Rename(tmpName, target); err != nil {
		return "", fmt.Errorf("testnet: install btcd: %w", err)
	}
	binaryPath = target
	return target, nil
}

// moduleRoot finds the bloomwatch module root: from this source file's
// directory (tests and `go run`), then from the working directory.
func moduleRoot() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && bytes.Contains(data, []byte("module github.com/bloomwatch/bloomwatch")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", ErrNoModuleRoot
}

// cachedBinary returns the cached btcd of version, or "" if there is none.
func cachedBinary(cache, version string) string {
	target := filepath.Join(cache, "bloomwatch", "btcd-"+version, "btcd")
	if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return target
	}
	return ""
}

// buildInfoVersion returns the btcd module version in this binary's build
// information, or "".
func buildInfoVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, dep := range info.Deps {
		if dep.Path == btcdModule && dep.Version != "" && dep.Version != "(devel)" {
			if dep.Replace != nil && dep.Replace.Version != "" {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return ""
}

// btcdVersion returns the btcd module version as `go list -m` reports it
// in the module root.
func btcdVersion(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", btcdModule)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("testnet: go list -m %s: %w: %s", btcdModule, err, bytes.TrimSpace(ee.Stderr))
		}
		return "", fmt.Errorf("testnet: go list -m %s: %w", btcdModule, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" {
		return "", fmt.Errorf("testnet: go list -m %s: empty version", btcdModule)
	}
	return v, nil
}
