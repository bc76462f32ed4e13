package nodeapi

import (
	"context"

	"github.com/bloomwatch/bloomwatch/wallet"
)

// Local reads an open wallet directly: what the command line uses when no
// node runs on the data dir, and what the server serves from the running
// session's wallet.
type Local struct {
	W *wallet.Wallet
}

// state reads the wallet's State.
func (l *Local) state() State {
	hp := l.W.HistoryPoint()
	st := State{Network: l.W.Network(), SyncedHeight: hp.Height, RescanPending: l.W.RescanPending(), Birthday: l.W.Birthday()}
	if hp.Height >= 0 {
		st.SyncedHash = hashString(hp.Hash)
	}
	return st
}

// Balance reads the wallet's balance.
func (l *Local) Balance(context.Context) (*BalanceInfo, error) {
	bal, err := l.W.Balance()
	if err != nil {
		return nil, err
	}
	return &BalanceInfo{State: l.state(), Balance: bal}, nil
}

// Txs reads the wallet's transactions.
func (l *Local) Txs(context.Context) (*TxsInfo, error) {
	txs, err := l.W.Txs()
	if err != nil {
		return nil, err
	}
	return &TxsInfo{State: l.state(), Txs: txs}, nil
}

// UTXOs reads the wallet's unspent outputs.
func (l *Local) UTXOs(context.Context) (*UTXOsInfo, error) {
	utxos, err := l.W.UTXOs()
	if err != nil {
		return nil, err
	}
	return &UTXOsInfo{State: l.state(), UTXOs: utxos}, nil
}

// Addresses reads the wallet's watched addresses.
func (l *Local) Addresses(context.Context) (*AddressesInfo, error) {
	addrs, err := l.W.Addresses()
	if err != nil {
		return nil, err
	}
	return &AddressesInfo{State: l.state(), Addresses: addrs}, nil
}

// Stats reads the wallet's match statistics, with up to falsePositives
// of the newest false positives (none for 0).
func (l *Local) Stats(_ context.Context, falsePositives int) (*StatsInfo, error) {
	st, err := l.W.Stats()
	if err != nil {
		return nil, err
	}
	descs, err := l.W.Descriptors()
	if err != nil {
		return nil, err
	}
	counts, err := l.W.AddressCounts()
	if err != nil {
		return nil, err
	}
	info := &StatsInfo{State: l.state(), Stats: st, Counts: counts, Descriptors: descs}
	if falsePositives > 0 {
		if info.FalsePositives, err = l.W.FalsePositives(falsePositives); err != nil {
			return nil, err
		}
	}
	return info, nil
}

// Truth reads the elements of the wallet's used addresses.
func (l *Local) Truth(context.Context) (*TruthInfo, error) {
	truth, err := l.W.TruthElements()
	if err != nil {
		return nil, err
	}
	counts, err := l.W.AddressCounts()
	if err != nil {
		return nil, err
	}
	synced, err := l.W.SyncedTo()
	if err != nil {
		return nil, err
	}
	return &TruthInfo{State: l.state(), Elements: truth, Counts: counts, SyncedToHeight: synced.Height}, nil
}

// Receive hands out the next receive address (wallet.Wallet.Receive).
func (l *Local) Receive(_ context.Context, opts wallet.ReceiveOptions) (*wallet.ReceiveInfo, error) {
	return l.W.Receive(opts)
}

// CreatePSBT builds an unsigned transaction (wallet.Wallet.CreatePSBT).
func (l *Local) CreatePSBT(_ context.Context, req wallet.PSBTRequest) (*wallet.PSBT, error) {
	return l.W.CreatePSBT(req)
}
