package testnet

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// DriverConfig describes the live chain a Driver keeps moving: the world
// around a wallet that the demo shows (other users' payments, payments to
// and from the wallet, blocks, now and then a reorg).
type DriverConfig struct {
	// Interval is the time between blocks (default 4 s).
	Interval time.Duration
	// Keyring and Purpose are the user's wallet: the driver pays its
	// receive addresses from NextIndex on, and spends what it paid.
	Keyring   *Keyring
	Purpose   uint32
	NextIndex uint32
	// NoisePerBlock is the number of other users' transactions per block
	// (default 6).
	NoisePerBlock int
	// PayEvery pays the wallet every n-th block (default 2; the payment
	// waits one interval in the mempool first, so it shows unconfirmed).
	PayEvery int
	// SpendEvery spends one earlier payment every n-th block (default 5;
	// 0 never).
	SpendEvery int
	// ReorgEvery makes a reorg of depth 1 or 2 every n-th block (default
	// 12; negative never).
	ReorgEvery int
	// Seed seeds the amounts and choices.
	Seed int64
	// OnBlock, when set, is called from the driver's goroutine after each
	// block with the new height and a line describing what happened.
	OnBlock func(height int32, what string)
}

// Driver keeps a harness's chain alive in its own goroutine: the demo's
// world. It is test infrastructure, not part of the light client.
type Driver struct {
	h    *Harness
	cfg  DriverConfig
	rng  *rand.Rand
	stop chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	err     error
	blocks  int
	pending []paidOutput // wallet outputs the driver paid, not spent yet
}

// paidOutput is a wallet output the driver created.
type paidOutput struct {
	op     wire.OutPoint
	value  int64
	script []byte
}

// StartDriver starts driving h's chain until ctx ends or Stop.
func StartDriver(ctx context.Context, h *Harness, cfg DriverConfig) (*Driver, error) {
	if cfg.Keyring == nil {
		return nil, fmt.Errorf("%w: the driver needs the wallet's keyring", ErrBadSpec)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 4 * time.Second
	}
	if cfg.NoisePerBlock <= 0 {
		cfg.NoisePerBlock = 6
	}
	if cfg.PayEvery <= 0 {
		cfg.PayEvery = 2
	}
	if cfg.SpendEvery == 0 {
		cfg.SpendEvery = 5
	}
	if cfg.ReorgEvery == 0 {
		cfg.ReorgEvery = 12
	}
	if cfg.Purpose == 0 {
		cfg.Purpose = 84
	}
	d := &Driver{h: h, cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), stop: make(chan struct{})}
	d.wg.Add(1)
	go d.run(ctx)
	return d, nil
}

// Stop ends the driver and waits for it; it returns the error that
// stopped it early, if any. Stop is idempotent.
func (d *Driver) Stop() error {
	d.mu.Lock()
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	d.mu.Unlock()
	d.wg.Wait()
	return d.Err()
}

// Err returns the error that stopped the driver, if any.
func (d *Driver) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Blocks returns the number of blocks the driver mined so far.
func (d *Driver) Blocks() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.blocks
}

// run is the driver's loop: one step per interval.
func (d *Driver) run(ctx context.Context) {
	defer d.wg.Done()
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.stop:
			return
		case <-t.C:
		}
		height, what, err := d.step(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			d.mu.Lock()
			d.err = fmt.Errorf("testnet: driver: %w", err)
			d.mu.Unlock()
			return
		}
		if d.cfg.OnBlock != nil {
			d.cfg.OnBlock(height, what)
		}
	}
}

// step mines one block (or makes a reorg) with noise, and sends the
// wallet's next payment or spend to the mempool, where it waits for the
// next block.
func (d *Driver) step(ctx context.Context) (int32, string, error) {
	d.mu.Lock()
	d.blocks++
	n := d.blocks
	d.mu.Unlock()
	what := ""
	if _, err := d.h.Noise(d.cfg.NoisePerBlock); err != nil {
		return 0, "", fmt.Errorf("noise: %w", err)
	}
	if d.cfg.ReorgEvery > 0 && n%d.cfg.ReorgEvery == 0 {
		depth := 1 + d.rng.Intn(2)
		res, err := d.h.Reorg(ctx, depth, ReorgOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return 0, "", err
			}
			// A reorg needs two btcd nodes to part and meet again; if
			// that fails the chain still goes on: mine normally.
			if _, merr := d.h.Mine(1); merr != nil {
				return 0, "", fmt.Errorf("reorg: %w; then mine: %w", err, merr)
			}
			_, height, herr := d.h.Node().BestBlock()
			if herr != nil {
				return 0, "", fmt.Errorf("best block: %w", herr)
			}
			return height, fmt.Sprintf("reorg skipped (%v); block %d", err, height), nil
		}
		// The funder forgot what the reorg removed; the driver's own
		// wallet payments may be gone too: forget them.
		d.mu.Lock()
		d.pending = nil
		d.mu.Unlock()
		return res.TipHeight, fmt.Sprintf("reorg of depth %d at height %d", depth, res.ForkHeight+1), nil
	}
	if _, err := d.h.Mine(1); err != nil {
		return 0, "", fmt.Errorf("mine: %w", err)
	}
	switch {
	case d.cfg.SpendEvery > 0 && n%d.cfg.SpendEvery == 0 && d.hasPending():
		w, err := d.spend()
		if err != nil {
			return 0, "", err
		}
		what = w
	case n%d.cfg.PayEvery == 0:
		w, err := d.pay()
		if err != nil {
			return 0, "", err
		}
		what = w
	}
	_, height, err := d.h.Node().BestBlock()
	if err != nil {
		return 0, "", fmt.Errorf("best block: %w", err)
	}
	if what == "" {
		what = fmt.Sprintf("block %d", height)
	}
	return height, what, nil
}

// hasPending reports whether a paid output can be spent.
func (d *Driver) hasPending() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending) > 0
}

// pay sends the wallet's next receive address a payment.
func (d *Driver) pay() (string, error) {
	addr, err := d.cfg.Keyring.Address(d.cfg.Purpose, 0, d.cfg.NextIndex)
	if err != nil {
		return "", fmt.Errorf("wallet address: %w", err)
	}
	amt := btcutil.Amount(50_000 + d.rng.Int63n(2_000_000))
	tx, err := d.h.PayAddress(addr, amt)
	if err != nil {
		return "", fmt.Errorf("pay wallet: %w", err)
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return "", fmt.Errorf("wallet script: %w", err)
	}
	for i, out := range tx.TxOut {
		if string(out.PkScript) == string(script) {
			d.mu.Lock()
			d.pending = append(d.pending, paidOutput{op: wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}, value: out.Value, script: script})
			d.mu.Unlock()
		}
	}
	d.cfg.NextIndex++
	return fmt.Sprintf("paid %d sat to wallet address %s (mempool)", amt, addr), nil
}

// spend spends the oldest paid output to another user.
func (d *Driver) spend() (string, error) {
	d.mu.Lock()
	p := d.pending[0]
	d.pending = d.pending[1:]
	d.mu.Unlock()
	to := RandomScript(d.rng, KindP2WPKH)
	fee := SpendFee([][]byte{p.script}, []*wire.TxOut{wire.NewTxOut(p.value, to)})
	value := p.value - int64(fee)
	if value <= 0 {
		return "", nil
	}
	if _, err := d.h.Spend(d.cfg.Keyring, []wire.OutPoint{p.op}, []*wire.TxOut{wire.NewTxOut(value, to)}); err != nil {
		return "", fmt.Errorf("spend wallet output %s: %w", p.op, err)
	}
	return fmt.Sprintf("wallet spent %s (mempool)", p.op), nil
}
