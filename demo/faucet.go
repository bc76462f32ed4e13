package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"

	"github.com/bloomwatch/bloomwatch/internal/boundedread"
	"github.com/bloomwatch/bloomwatch/nodeapi"
)

// The faucet's node API methods, served beside the wallet's while the
// demo runs (docs/API.md).
const (
	MethodPay  = "demo.pay"
	MethodMine = "demo.mine"
)

// MaxMine bounds the blocks one demo.mine call mines.
const MaxMine = 1_000

// minPayment is the smallest payment the faucet makes: btcd's dust
// threshold for a P2PKH output at its default relay fee.
const minPayment = 546

// PayParams are demo.pay's parameters.
type PayParams struct {
	// Address is any regtest address (the demo's chain is regtest).
	Address string `json:"address"`
	// AmountSat is the payment in satoshis.
	AmountSat int64 `json:"amount_sat"`
}

// Payment is demo.pay's result: the payment and the block that confirms
// it.
type Payment struct {
	Txid      string `json:"txid"`
	Vout      uint32 `json:"vout"`
	AmountSat int64  `json:"amount_sat"`
	Address   string `json:"address"`
	Height    int32  `json:"height"`
	Block     string `json:"block"`
}

// MineParams are demo.mine's parameters.
type MineParams struct {
	// Blocks to mine (1 when 0).
	Blocks int `json:"blocks"`
}

// Mined is demo.mine's result: the new tip.
type Mined struct {
	Blocks int    `json:"blocks"`
	Height int32  `json:"height"`
	Block  string `json:"block"`
}

// Pay pays amount to address from the demo's coins and mines a block
// that confirms it: the demo's faucet.
func (d *Demo) Pay(address string, amount btcutil.Amount) (*Payment, error) {
	addr, err := btcutil.DecodeAddress(address, d.h.Params())
	if err != nil || !addr.IsForNet(d.h.Params()) {
		return nil, nodeapi.InputErrorf("address %q: not a regtest address", address)
	}
	if amount < minPayment {
		return nil, nodeapi.InputErrorf("amount %d sat: below the dust limit of %d sat", int64(amount), minPayment)
	}
	if have := d.h.FunderBalance(); amount > have {
		return nil, nodeapi.InputErrorf("amount %d sat: the demo's coins hold %d sat", int64(amount), int64(have))
	}
	tx, err := d.h.PayAddress(addr, amount)
	if err != nil {
		return nil, fmt.Errorf("pay: %w", err)
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("pay: %w", err)
	}
	p := &Payment{Txid: tx.TxHash().String(), AmountSat: int64(amount), Address: addr.EncodeAddress()}
	for i, out := range tx.TxOut {
		if string(out.PkScript) == string(script) && out.Value == int64(amount) {
			p.Vout = uint32(i)
		}
	}
	m, err := d.Mine(1)
	if err != nil {
		return nil, fmt.Errorf("paid in %s, then mine: %w", p.Txid, err)
	}
	p.Height, p.Block = m.Height, m.Block
	return p, nil
}

// Mine mines n blocks on the demo's chain, with what its mempool holds.
func (d *Demo) Mine(n int) (*Mined, error) {
	if n < 1 || n > MaxMine {
		return nil, nodeapi.InputErrorf("blocks %d: mine 1 to %d", n, MaxMine)
	}
	if _, err := d.h.Mine(n); err != nil {
		return nil, fmt.Errorf("mine: %w", err)
	}
	hash, height, err := d.h.Node().BestBlock()
	if err != nil {
		return nil, fmt.Errorf("best block: %w", err)
	}
	return &Mined{Blocks: n, Height: height, Block: hash.String()}, nil
}

// Methods returns the faucet's node API methods.
func (d *Demo) Methods() map[string]nodeapi.Handler {
	return map[string]nodeapi.Handler{
		MethodPay: func(_ context.Context, params json.RawMessage) (any, error) {
			var p PayParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, nodeapi.InputErrorf("params: %v", err)
			}
			return d.Pay(p.Address, btcutil.Amount(p.AmountSat))
		},
		MethodMine: func(_ context.Context, params json.RawMessage) (any, error) {
			p := MineParams{Blocks: 1}
			if len(params) > 0 && string(params) != "null" {
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, nodeapi.InputErrorf("params: %v", err)
				}
			}
			return d.Mine(p.Blocks)
		},
	}
}

// RunningFile is where a running demo records its data dir, under the
// user's bloomwatch directory (~/.bloomwatch), so that `bloomwatch demo
// pay` finds it without being told.
const RunningFile = "demo.running"

// runningPath returns RunningFile's path.
func runningPath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".bloomwatch", RunningFile), nil
}

// MarkRunning records dir as the running demo's data dir; the returned
// func removes the record if it still names dir.
func MarkRunning(dir string) (func(), error) {
	path, err := runningPath()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(abs+"\n"), 0o600); err != nil {
		return nil, err
	}
	return func() {
		if b, err := boundedread.ReadFile(path, maxRunningFileBytes, "demo.maxRunningFileBytes"); err == nil && strings.TrimSpace(string(b)) == abs {
			_ = os.Remove(path)
		}
	}, nil
}

// ErrNotRunning is returned by RunningDir when no demo recorded its data
// dir.
var ErrNotRunning = errors.New("no demo runs (start one with bloomwatch demo, or give its --datadir)")

// maxRunningFileBytes bounds RunningFile, which holds one absolute path:
// a larger file is not a demo's record and is refused unread.
const maxRunningFileBytes = 4 << 10

// RunningDir returns the data dir of the demo that runs, as MarkRunning
// recorded it.
func RunningDir() (string, error) {
	path, err := runningPath()
	if err != nil {
		return "", err
	}
	b, err := boundedread.ReadFile(path, maxRunningFileBytes, "demo.maxRunningFileBytes")
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNotRunning
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
