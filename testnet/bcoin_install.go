package testnet

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

// BcoinVersion is the bcoin release BcoinPackage installs (npm's bcoin,
// pinned with every dependency by bcoinjs/package-lock.json).
const BcoinVersion = "1.0.2"

// BcoinEnv names the environment variable that overrides BcoinPackage
// with an existing installation directory (one BcoinPackage made: it
// holds launcher.js and node_modules/bcoin).
const BcoinEnv = "BLOOMWATCH_BCOIN"

// bcoinFiles are what an installation directory is made from: npm's
// package.json and lock file, the launcher and the leveldown stub.
//
//go:embed bcoinjs/package.json bcoinjs/package-lock.json bcoinjs/launcher.js bcoinjs/leveldown-stub.js
var bcoinFiles embed.FS

// bcoinLauncher is the launcher script's name in an installation.
const bcoinLauncher = "launcher.js"

var (
	bcoinMu  sync.Mutex
	bcoinDir string
)

// BcoinPackage returns the directory of a bcoin installation: the
// launcher script and node_modules/bcoin at BcoinVersion. BLOOMWATCH_BCOIN
// overrides it with an existing directory. Otherwise it is
// os.UserCacheDir()/bloomwatch/bcoin-<version>-<digest> ($XDG_CACHE_HOME or
// ~/.cache), where <digest> covers the embedded files, so a changed
// launcher or lock file gets a fresh directory. When that directory is
// missing, BcoinPackage makes it with `npm ci --ignore-scripts` (the
// only network use of the package: the npm registry) in a temporary
// directory renamed into place, so concurrent test binaries are safe and
// a directory that exists is complete.
//
// Without node or npm on PATH the error wraps ErrNoNodeJS; a failed npm
// run wraps ErrBcoinInstall. An installed directory needs no network, so
// CI installs it first (.ci/run) and runs the tests offline.
func BcoinPackage(ctx context.Context) (string, error) {
	if dir := os.Getenv(BcoinEnv); dir != "" {
		if err := checkBcoinDir(dir); err != nil {
			return "", fmt.Errorf("testnet: %s: %w", BcoinEnv, err)
		}
		return dir, nil
	}
	bcoinMu.Lock()
	defer bcoinMu.Unlock()
	if bcoinDir != "" {
		return bcoinDir, nil
	}
	if _, err := nodeBinary(); err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testnet: cache dir: %w", err)
	}
	root := filepath.Join(cache, "bloomwatch")
	name, err := bcoinDirName()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, name)
	if checkBcoinDir(dir) == nil {
		bcoinDir = dir
		return dir, nil
	}
	if err := installBcoin(ctx, root, dir); err != nil {
		return "", err
	}
	bcoinDir = dir
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

// bcoinDirName returns "bcoin-<version>-<digest of the embedded files>".
func bcoinDirName() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(bcoinFiles, "bcoinjs", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := bcoinFiles.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("testnet: embedded bcoin files: %w", err)
	}
	return "bcoin-" + BcoinVersion + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// checkBcoinDir checks that dir holds the launcher and bcoin at
// BcoinVersion.
func checkBcoinDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, bcoinLauncher)); err != nil {
		return fmt.Errorf("%w: %w", ErrBcoinNotInstalled, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", "bcoin", "package.json"))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBcoinNotInstalled, err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return fmt.Errorf("%w: bcoin package.json: %w", ErrBcoinNotInstalled, err)
	}
	if pkg.Version != BcoinVersion {
		return fmt.Errorf("%w: %s has bcoin %s, want %s", ErrBcoinNotInstalled, dir, pkg.Version, BcoinVersion)
	}
	return nil
}

// installBcoin runs npm ci in a temporary directory under root and
// renames it to dir.
func installBcoin(ctx context.Context, root, dir string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoNodeJS, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("testnet: cache dir: %w", err)
	}
	tmp, err := os.MkdirTemp(root, ".bcoin-install-")
	if err != nil {
		return fmt.Errorf("testnet: bcoin install dir: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left after the rename
	entries, err := bcoinFiles.ReadDir("bcoinjs")
	if err != nil {
		return fmt.Errorf("testnet: embedded bcoin files: %w", err)
	}
	for _, e := range entries {
		data, err := bcoinFiles.ReadFile("bcoinjs/" + e.Name())
		if err != nil {
			return fmt.Errorf("testnet: embedded bcoin files: %w", err)
		}
		if err := os.WriteFile(filepath.Join(tmp, e.Name()), data, 0o644); err != nil {
			return fmt.Errorf("testnet: bcoin install: %w", err)
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
		return fmt.Errorf("%w: npm ci in %s: %w: %s", ErrBcoinInstall, tmp, err, lastLines(out.String(), 20))
	}
	if err := checkBcoinDir(tmp); err != nil {
		return fmt.Errorf("%w: %w", ErrBcoinInstall, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have installed it in the meantime.
		if checkBcoinDir(dir) == nil {
			return nil
		}
		return fmt.Errorf("%w: %w", ErrBcoinInstall, err)
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
	ErrNoNodeJS = errors.New("testnet: Node.js (node and npm) not found")

	// ErrBcoinNotInstalled is returned for a directory that does not hold
	// a complete bcoin installation.
	ErrBcoinNotInstalled = errors.New("testnet: bcoin not installed")

	// ErrBcoinInstall is returned when npm fails to install bcoin (e.g.
	// no route to the npm registry).
	ErrBcoinInstall = errors.New("testnet: bcoin install failed")

	// ErrBcoinExited is returned when the bcoin process exits before it
	// is ready or while it should be serving.
	ErrBcoinExited = errors.New("testnet: bcoin exited")

	// ErrBcoinKilled is returned by BcoinNode.Stop when bcoin ignored
	// SIGINT and had to be killed.
	ErrBcoinKilled = errors.New("testnet: bcoin killed")

	// ErrBcoinTxRejected is returned by BcoinNode.SendTx when bcoin does
	// not take a transaction into its mempool.
	ErrBcoinTxRejected = errors.New("testnet: bcoin rejected transaction")

	// ErrBcoinAddress is returned for an output script bcoin 1.0.2 has no
	// address for (only P2PKH, P2SH, P2WPKH and P2WSH have one).
	ErrBcoinAddress = errors.New("testnet: no bcoin address for script")
)
