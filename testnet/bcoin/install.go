package bcoin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Version is the bcoin release Package installs (npm's bcoin,
// pinned with every dependency by bcoinjs/package-lock.json).
const Version = "1.0.2"

// Env names the environment variable that overrides Package with an
// existing installation directory (one Package made: it holds
// launcher.js and node_modules/bcoin).
const Env = "BLOOMWATCH_BCOIN"

// files are what an installation directory is made from: npm's
// package.json and lock file, the launcher and the leveldown stub.
//
//go:embed bcoinjs/package.json bcoinjs/package-lock.json bcoinjs/launcher.js bcoinjs/leveldown-stub.js
var files embed.FS

// launcherName is the launcher script's name in an installation.
const launcherName = "launcher.js"

var (
	installMu  sync.Mutex
	installDir string
)

// Package returns the directory of a bcoin installation: the launcher
// script and node_modules/bcoin at Version. BLOOMWATCH_BCOIN overrides it with an existing directory. Otherwise it is
// os.UserCacheDir()/bloomwatch/bcoin-<version>-<digest> ($XDG_CACHE_HOME or
// ~/.cache), where <digest> covers the embedded files, so a changed
// launcher or lock file gets a fresh directory. When that directory is
// missing, Package makes it with `npm ci --ignore-scripts` (the
// only network use of the package: the npm registry) in a temporary
// directory renamed into place, so concurrent test binaries are safe and
// a directory that exists is complete.
//
// Without node or npm on PATH the error wraps ErrNoNodeJS; a failed npm
// run wraps ErrInstall. An installed directory needs no network, so
// CI installs it first (.ci/run) and runs the tests offline.
func Package(ctx context.Context) (string, error) {
	if dir := os.Getenv(Env); dir != "" {
		if err := checkDir(dir); err != nil {
			return "", fmt.Errorf("bcoin: %s: %w", Env, err)
		}
		return dir, nil
	}
	installMu.Lock()
	defer installMu.Unlock()
	if installDir != "" {
		return installDir, nil
	}
	if _, err := nodeBinary(); err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("bcoin: cache dir: %w", err)
	}
	root := filepath.Join(cache, "bloomwatch")
	name, err := dirName()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, name)
	if checkDir(dir) == nil {
		installDir = dir
		return dir, nil
	}
	if err := install(ctx, root, dir); err != nil {
		return "", err
	}
	installDir = dir
	return dir, nil
}

// nodeBinary returns the path of the node executable (ErrNoNodeJS when
// it is not on PATH).
func nodeBinary() (string, error) {
	path, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoNodeJS, err)
	}
	return path, nil
}

// dirName returns "bcoin-<version>-<digest of the embedded files>".
func dirName() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(files, "bcoinjs", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("bcoin: embedded bcoin files: %w", err)
	}
	return "bcoin-" + Version + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// checkDir checks that dir holds the launcher and bcoin at
// Version.
func checkDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, launcherName)); err != nil {
		return fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", "bcoin", "package.json"))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return fmt.Errorf("%w: bcoin package.json: %w", ErrNotInstalled, err)
	}
	if pkg.Version != Version {
		return fmt.Errorf("%w: %s has bcoin %s, want %s", ErrNotInstalled, dir, pkg.Version, Version)
	}
	return nil
}

// install runs npm ci in a temporary directory under root and
// renames it to dir.
func install(ctx context.Context, root, dir string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoNodeJS, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("bcoin: cache dir: %w", err)
	}
	tmp, err := os.MkdirTemp(root, ".bcoin-install-")
	if err != nil {
		return fmt.Errorf("bcoin: install dir: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left after the rename
	entries, err := files.ReadDir("bcoinjs")
	if err != nil {
		return fmt.Errorf("bcoin: embedded bcoin files: %w", err)
	}
	for _, e := range entries {
		data, err := files.ReadFile("bcoinjs/" + e.Name())
		if err != nil {
			return fmt.Errorf("bcoin: embedded bcoin files: %w", err)
		}
		if err := os.WriteFile(filepath.Join(tmp, e.Name()), data, 0o644); err != nil {
			return fmt.Errorf("bcoin: install: %w", err)
		}
	}
	// npm ci installs exactly the lock file's versions (integrity
	// checked); --ignore-scripts builds nothing native (leveldown's
	// install script would), which the launcher's NODE_BACKEND=js and
	// leveldown stub make unnecessary; --prefer-offline takes packages
	// from npm's own cache without asking the registry again (offline,
	// npm otherwise spends minutes retrying before it falls back to it).
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--omit=dev", "--prefer-offline",
		"--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: npm ci in %s: %w: %s", ErrInstall, tmp, err, lastLines(out.String(), 20))
	}
	if err := checkDir(tmp); err != nil {
		return fmt.Errorf("%w: %w", ErrInstall, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have installed it in the meantime.
		if checkDir(dir) == nil {
			return nil
		}
		return fmt.Errorf("%w: %w", ErrInstall, err)
	}
	return nil
}

// lastLines returns the last n lines of s, trimmed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Sentinel errors of the bcoin launcher.
var (
	// ErrNoNodeJS is returned when node or npm is not on PATH.
	ErrNoNodeJS = errors.New("bcoin: Node.js (node and npm) not found")

	// ErrNotInstalled is returned for a directory that does not hold
	// a complete bcoin installation.
	ErrNotInstalled = errors.New("bcoin: not installed")

	// ErrInstall is returned when npm fails to install bcoin (e.g.
	// no route to the npm registry).
	ErrInstall = errors.New("bcoin: install failed")

	// ErrExited is returned when the bcoin process exits before it
	// is ready or while it should be serving.
	ErrExited = errors.New("bcoin: node exited")

	// ErrKilled is returned by Node.Stop when bcoin ignored
	// SIGINT and had to be killed.
	ErrKilled = errors.New("bcoin: node killed")

	// ErrTxRejected is returned by Node.SendTx when bcoin does
	// not take a transaction into its mempool.
	ErrTxRejected = errors.New("bcoin: transaction rejected")

	// ErrAddress is returned for an output script bcoin 1.0.2 has no
	// address for (only P2PKH, P2SH, P2WPKH and P2WSH have one).
	ErrAddress = errors.New("bcoin: no bcoin 1.0.2 address for script")
)
