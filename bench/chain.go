package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/btcsuite/btcd/btcutil"
)

// chainFormat versions the cache layout and the chain recipe: bump it when
// either changes so stale chains are not reused.
const chainFormat = "bench-chain-v1"

// benchPurpose is the BIP purpose of the watched addresses: BIP84 P2WPKH.
const benchPurpose = 84

// chainParams is the recipe of one benchmark chain.
type chainParams struct {
	Blocks int     `json:"blocks"`
	Txs    int     `json:"txs_per_block"`
	Addrs  int     `json:"watch_addrs"`
	Spend  float64 `json:"spend_fraction"`
	Seed   int64   `json:"seed"`
	// Empty selects a chain of coinbase-only blocks mined in-process
	// (buildEmptyChain) for header-only syncs; Txs, Addrs and Spend are
	// then unused.
	Empty bool `json:"empty,omitempty"`
}

func (p chainParams) String() string {
	if p.Empty {
		return fmt.Sprintf("%d empty blocks (header-only)", p.Blocks)
	}
	return fmt.Sprintf("%d blocks x %d txs, %d addrs, spend %.2f, seed %d", p.Blocks, p.Txs, p.Addrs, p.Spend, p.Seed)
}

func (p chainParams) key() string {
	b, _ := json.Marshal(struct {
		Format string
		P      chainParams
	}{chainFormat, p})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// chainFixture is a built chain in the cache: a simnet btcd data dir and
// what the wallet must find in it.
type chainFixture struct {
	params    chainParams
	dir       string    // cache directory
	truth     []FoundTx // every wallet transaction, with its height
	addresses []string  // watched addresses, BIP84 P2WPKH, simnet encoding
	xpub      string    // the BIP84 account xpub (vpub) of the same keyring
	build     string    // "built in 1m23s" or "cached"
}

// fixtureMeta is stored beside the btcd data dir.
type fixtureMeta struct {
	Params       chainParams `json:"params"`
	Format       string      `json:"format"`
	Truth        []FoundTx   `json:"truth"`
	Addresses    []string    `json:"addresses"`
	Xpub         string      `json:"xpub"`
	BuiltAt      time.Time   `json:"built_at"`
	BuildSeconds float64     `json:"build_seconds"`
}

func benchSeed(seed int64) []byte {
	s := sha256.Sum256([]byte(fmt.Sprintf("bloomwatch-bench-%d", seed)))
	return s[:]
}

// cacheRoot is os.UserCacheDir()/bloomwatch/bench-chains.
func cacheRoot() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("user cache dir: %w", err)
	}
	return filepath.Join(d, "bloomwatch", "bench-chains"), nil
}

// prepareChain returns the cached chain for p, building it with
// testnet.BuildChain the first time.
func prepareChain(ctx context.Context, env *benchEnv, p chainParams) (*chainFixture, error) {
	root, err := cacheRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, p.key())
	if fx, err := loadFixture(dir); err == nil {
		fx.build = "cached in " + dir
		return fx, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(env.log, "cached chain %s unusable, rebuilding: %v\n", dir, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("chain cache: %w", err)
	}
	tmp, err := os.MkdirTemp(root, p.key()+".building-")
	if err != nil {
		return nil, fmt.Errorf("chain cache: %w", err)
	}
	defer os.RemoveAll(tmp) // after the rename it no longer exists
	fmt.Printf("building chain %s (once; cached in %s)\n", p, dir)
	start := time.Now()
	build := buildChain
	if p.Empty {
		build = buildEmptyChain
	}
	meta, err := build(ctx, env, p, filepath.Join(tmp, "btcd"))
	if err != nil {
		return nil, err
	}
	meta.BuildSeconds = time.Since(start).Seconds()
	b, err := json.MarshalIndent(meta, "", " ")
	if err != nil {
		return nil, fmt.Errorf("encode fixture: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "fixture.json"), b, 0o644); err != nil {
		return nil, fmt.Errorf("write fixture: %w", err)
	}
	_ = os.RemoveAll(dir) // an unusable earlier copy
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("store chain: %w", err)
	}
	fx, err := loadFixture(dir)
	if err != nil {
		return nil, err
	}
	fx.build = fmt.Sprintf("built in %s", time.Since(start).Round(time.Second))
	return fx, nil
}

func loadFixture(dir string) (*chainFixture, error) {
	b, err := os.ReadFile(filepath.Join(dir, "fixture.json"))
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	var m fixtureMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", dir, err)
	}
	if m.Format != chainFormat || len(m.Addresses) == 0 {
		return nil, fmt.Errorf("fixture %s: format %q", dir, m.Format)
	}
	if _, err := os.Stat(filepath.Join(dir, "btcd")); err != nil {
		return nil, fmt.Errorf("fixture %s: %w", dir, err)
	}
	return &chainFixture{params: m.Params, dir: dir, truth: m.Truth, addresses: m.Addresses, xpub: m.Xpub}, nil
}

// buildChain mines the chain with the testnet harness on simnet (regtest
// would be wiped by btcd's next start) into dataDir.
func buildChain(ctx context.Context, env *benchEnv, p chainParams, dataDir string) (*fixtureMeta, error) {
	h, err := testnet.New(ctx, testnet.Options{Network: "simnet", DataDir: dataDir, Log: env.log})
	if err != nil {
		return nil, fmt.Errorf("start harness: %w", err)
	}
	defer h.Close()
	kr, err := testnet.NewKeyring(benchSeed(p.Seed), h.Node().Params())
	if err != nil {
		return nil, fmt.Errorf("keyring: %w", err)
	}
	truth, err := h.BuildChain(ctx, testnet.ChainSpec{
		Blocks: p.Blocks, TxsPerBlock: p.Txs, Keyring: kr, Purpose: benchPurpose,
		WatchAddrs: p.Addrs, SpendFraction: p.Spend, Seed: p.Seed,
		Progress: func(done, total int) {
			if step := max(total/10, 1); done%step == 0 || done == total {
				fmt.Fprintf(os.Stderr, "  mined %d/%d blocks\n", done, total)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("build chain: %w", err)
	}
	meta := &fixtureMeta{Params: p, Format: chainFormat, BuiltAt: time.Now().UTC()}
	meta.Truth, meta.Addresses, err = truthOf(truth, kr, p)
	if err != nil {
		return nil, err
	}
	meta.Xpub = truth.Xpub
	if err := h.Close(); err != nil {
		return nil, fmt.Errorf("stop harness: %w", err)
	}
	return meta, nil
}

// servedChain is a copy of a cached chain served by a running btcd, and
// optionally by more btcds, each on its own copy, all at the same tip.
type servedChain struct {
	node *testnet.Node
	p2p  string
	pid  int
	tip  int32
	// more are the other servers (serve with peers > 1).
	more []*testnet.Node
}

// peers returns the P2P addresses of the first n servers.
func (s *servedChain) peers(n int) []string {
	out := []string{s.p2p}
	for _, m := range s.more[:min(n-1, len(s.more))] {
		out = append(out, m.P2PAddr())
	}
	return out
}

// pids returns the process ids of every server.
func (s *servedChain) pids() []int {
	out := []int{s.pid}
	for _, m := range s.more {
		out = append(out, m.PID())
	}
	return out
}

func (s *servedChain) stop() {
	for _, n := range append([]*testnet.Node{s.node}, s.more...) {
		if err := n.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stop btcd:", err)
		}
		_ = os.RemoveAll(n.DataDir())
	}
}

// serve copies the cached data dir (so the cache stays pristine), starts
// btcd on it and mines one fresh block: btcd ignores getheaders while its tip
// is more than 24 hours old. With peers > 1 it starts peers-1 more btcds,
// each on its own copy of the cache, and submits the fresh block to them:
// independent servers of the same chain (a client connecting twice to one
// btcd would have one server behind two connections). The servers are not
// connected to each other.
func (fx *chainFixture) serve(ctx context.Context, env *benchEnv, peers int) (*servedChain, error) {
	node, err := fx.startCopy(ctx, env)
	if err != nil {
		return nil, err
	}
	s := &servedChain{node: node, p2p: node.P2PAddr(), pid: node.PID()}
	hashes, err := node.Generate(1)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("serve: fresh block: %w", err)
	}
	_, tip, err := node.BestBlock()
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("serve: tip: %w", err)
	}
	s.tip = tip
	if peers <= 1 {
		return s, nil
	}
	fresh, err := node.RPC().GetBlock(hashes[0])
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("serve: fresh block: %w", err)
	}
	for range peers - 1 {
		m, err := fx.startCopy(ctx, env)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.more = append(s.more, m)
		if err := m.RPC().SubmitBlock(btcutil.NewBlock(fresh), nil); err != nil {
			s.stop()
			return nil, fmt.Errorf("serve: fresh block to the second btcd: %w", err)
		}
		hash, h, err := m.BestBlock()
		if err != nil || h != tip || *hash != *hashes[0] {
			s.stop()
			return nil, fmt.Errorf("serve: second btcd at %d %v, want %d %v: %w", h, hash, tip, hashes[0], errors.Join(err, errTipDiffers))
		}
	}
	return s, nil
}

// errTipDiffers is returned when a second server does not reach the first
// one's tip.
var errTipDiffers = errors.New("servers' tips differ")

// startCopy starts a btcd on a fresh copy of the cached data dir.
func (fx *chainFixture) startCopy(ctx context.Context, env *benchEnv) (*testnet.Node, error) {
	dst, err := os.MkdirTemp(env.tmp, "btcd-")
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if err := copyTree(filepath.Join(fx.dir, "btcd"), dst); err != nil {
		return nil, err
	}
	node, err := testnet.StartNode(ctx, testnet.Config{Network: "simnet", DataDir: dst, Log: env.log})
	if err != nil {
		return nil, fmt.Errorf("serve: start btcd: %w", err)
	}
	return node, nil
}

// copyTree copies the regular files and directories under src into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("copy chain: %w", err)
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return fmt.Errorf("copy chain: %w", err)
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return fmt.Errorf("copy chain: %w", err)
		}
		return out.Close()
	})
}
