package nodeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// Method names, as a request's "method" names them (docs/API.md).
const (
	MethodStatus    = "status"
	MethodBalance   = "wallet.balance"
	MethodTxs       = "wallet.txs"
	MethodUTXOs     = "wallet.utxos"
	MethodAddresses = "wallet.addresses"
	MethodStats     = "wallet.stats"
	MethodTruth     = "wallet.truth"
	MethodReceive   = "wallet.receive"
	MethodPSBT      = "wallet.psbt"
	MethodBroadcast = "broadcast"
)

// Wallet is what the command line reads from and asks of a wallet: Local
// opens its files, Client asks the node that runs on them.
type Wallet interface {
	Balance(ctx context.Context) (*BalanceInfo, error)
	Txs(ctx context.Context) (*TxsInfo, error)
	UTXOs(ctx context.Context) (*UTXOsInfo, error)
	Addresses(ctx context.Context) (*AddressesInfo, error)
	Stats(ctx context.Context, falsePositives int) (*StatsInfo, error)
	Truth(ctx context.Context) (*TruthInfo, error)
	Receive(ctx context.Context, opts wallet.ReceiveOptions) (*wallet.ReceiveInfo, error)
	CreatePSBT(ctx context.Context, req wallet.PSBTRequest) (*wallet.PSBT, error)
}

// Compile-time checks that both readers are Wallets.
var (
	_ Wallet = (*Local)(nil)
	_ Wallet = (*Client)(nil)
)

// State is what every wallet read carries: the wallet's network and the
// block its history reflects (Wallet.HistoryPoint), whether a rescan is
// pending and where it starts.
type State struct {
	Network string `json:"network"`
	// SyncedHeight is -1 before the first block; SyncedHash is then empty.
	SyncedHeight  int32  `json:"synced_height"`
	SyncedHash    string `json:"synced_hash,omitempty"`
	RescanPending bool   `json:"rescan_pending"`
	Birthday      int32  `json:"birthday"`
}

// BalanceInfo is wallet.balance's result.
type BalanceInfo struct {
	State
	Balance wallet.Balance `json:"balance"`
}

// TxsInfo is wallet.txs's result: every transaction, confirmed by height,
// then unconfirmed (wallet.Wallet.Txs).
type TxsInfo struct {
	State
	Txs []wallet.TxSummary `json:"txs"`
}

// UTXOsInfo is wallet.utxos's result.
type UTXOsInfo struct {
	State
	UTXOs []wallet.UTXO `json:"utxos"`
}

// AddressesInfo is wallet.addresses's result.
type AddressesInfo struct {
	State
	Addresses []wallet.AddressInfo `json:"addresses"`
}

// StatsParams are wallet.stats's parameters.
type StatsParams struct {
	// FalsePositives is how many of the newest false positives to list.
	FalsePositives int `json:"false_positives"`
}

// StatsInfo is wallet.stats's result.
type StatsInfo struct {
	State
	Stats          wallet.Stats            `json:"stats"`
	Counts         wallet.AddressCounts    `json:"address_counts"`
	Descriptors    []wallet.DescriptorInfo `json:"descriptors"`
	FalsePositives []wallet.FalsePositive  `json:"false_positives"`
}

// TruthInfo is wallet.truth's result: what `wallet export-truth` writes.
type TruthInfo struct {
	State
	Elements []wallet.TruthElement `json:"elements"`
	Counts   wallet.AddressCounts  `json:"address_counts"`
	// SyncedToHeight is wallet.Wallet.SyncedTo's height (-1 while a
	// rescan is pending).
	SyncedToHeight int32 `json:"synced_to_height"`
}

// ReceiveParams are wallet.receive's parameters (wallet.ReceiveOptions).
type ReceiveParams struct {
	// From names the account ("m/84'/1'/0") or descriptor checksum.
	From      string `json:"from,omitempty"`
	BeyondGap bool   `json:"beyond_gap,omitempty"`
}

// receiveParams converts options.
func receiveParams(opts wallet.ReceiveOptions) ReceiveParams {
	return ReceiveParams{From: opts.From, BeyondGap: opts.BeyondGap}
}

// options converts p.
func (p ReceiveParams) options() wallet.ReceiveOptions {
	return wallet.ReceiveOptions{From: p.From, BeyondGap: p.BeyondGap}
}

// PSBTPayment is one payment of PSBTParams.
type PSBTPayment struct {
	Address   string `json:"address"`
	AmountSat int64  `json:"amount_sat"`
}

// PSBTParams are wallet.psbt's parameters (wallet.PSBTRequest).
type PSBTParams struct {
	Outputs             []PSBTPayment `json:"outputs,omitempty"`
	SweepTo             string        `json:"sweep_to,omitempty"`
	FeeRateSatVB        float64       `json:"fee_rate_sat_vb"`
	From                string        `json:"from,omitempty"`
	IncludeUnconfirmed  bool          `json:"include_unconfirmed,omitempty"`
	IncludePendingSpent bool          `json:"include_pending_spent,omitempty"`
	// Selection is "private" (the default) or "largest-first".
	Selection string `json:"selection,omitempty"`
	// DryRun prices the transaction without reserving a change address
	// (wallet.PSBTRequest.DryRun).
	DryRun bool `json:"dry_run,omitempty"`
}

// psbtParams converts a request.
func psbtParams(req wallet.PSBTRequest) PSBTParams {
	p := PSBTParams{SweepTo: req.SweepTo, FeeRateSatVB: req.FeeRate, From: req.From,
		IncludeUnconfirmed: req.IncludeUnconfirmed, IncludePendingSpent: req.IncludePendingSpent, DryRun: req.DryRun}
	if req.Selection == wallet.SelectLargestFirst {
		p.Selection = selectionLargestFirst
	}
	for _, o := range req.Outputs {
		p.Outputs = append(p.Outputs, PSBTPayment{Address: o.Address, AmountSat: int64(o.Amount)})
	}
	return p
}

// selectionLargestFirst names wallet.SelectLargestFirst.
const selectionLargestFirst = "largest-first"

// request converts p.
func (p PSBTParams) request() (wallet.PSBTRequest, error) {
	req := wallet.PSBTRequest{SweepTo: p.SweepTo, FeeRate: p.FeeRateSatVB, From: p.From,
		IncludeUnconfirmed: p.IncludeUnconfirmed, IncludePendingSpent: p.IncludePendingSpent, DryRun: p.DryRun}
	switch p.Selection {
	case "", "private":
	case selectionLargestFirst:
		req.Selection = wallet.SelectLargestFirst
	default:
		return req, InputErrorf("selection %q: private or largest-first", p.Selection)
	}
	for _, o := range p.Outputs {
		req.Outputs = append(req.Outputs, wallet.PSBTOutput{Address: o.Address, Amount: btcutil.Amount(o.AmountSat)})
	}
	return req, nil
}

// PSBTResult is wallet.psbt's result: the wallet's PSBT, whose Base64
// field carries the packet.
type PSBTResult = wallet.PSBT

// BroadcastParams are broadcast's parameters.
type BroadcastParams struct {
	// Tx is the signed transaction in hex.
	Tx string `json:"tx"`
	// To names the peer to send to (spv.BroadcastOptions.To); empty:
	// the node chooses.
	To string `json:"to,omitempty"`
	// TimeoutNS bounds the wait for the relay (0: the node's default).
	TimeoutNS int64 `json:"timeout_ns,omitempty"`
}

// BroadcastInfo is broadcast's result.
type BroadcastInfo struct {
	Result *spv.BroadcastResult `json:"result"`
	// Wallet is the transaction as the wallet holds it once relayed
	// back (nil if it does not yet).
	Wallet *wallet.TxSummary `json:"wallet,omitempty"`
}

// StatusInfo is status's result: which node answers.
type StatusInfo struct {
	// DataDir is the node's wallet data dir (absolute), which Dial
	// checks against the one it was given.
	DataDir string `json:"datadir"`
	Network string `json:"network"`
	PID     int    `json:"pid"`
	// Methods lists every method the node serves.
	Methods []string `json:"methods"`
	// Node is the light node's sync state, when the server has a node.
	Node *NodeState `json:"node,omitempty"`
}

// NodeState is the light node's sync state (spv.Status, abridged).
type NodeState struct {
	HeaderHeight  int32  `json:"header_height"`
	WatcherHeight int32  `json:"watcher_height"`
	PeerHeight    int32  `json:"peer_height"`
	Synced        bool   `json:"synced"`
	Peers         int    `json:"peers"`
	Blocks        int    `json:"blocks"`
	BytesReceived uint64 `json:"bytes_received"`
	// Err is the error that stopped syncing, "" when none.
	Err string `json:"err,omitempty"`
	// Rebroadcasts lists the transactions the node sends again on each
	// block until their first confirmation (spv.Status.Rebroadcasts).
	Rebroadcasts []spv.PendingRebroadcast `json:"rebroadcasts,omitempty"`
}

// NodeStateOf abridges a node's status.
func NodeStateOf(st spv.Status) *NodeState {
	ns := &NodeState{HeaderHeight: st.HeaderHeight, WatcherHeight: st.WatcherHeight, PeerHeight: st.PeerHeight,
		Synced: st.Synced, Peers: len(st.Peers), Blocks: st.Blocks, BytesReceived: st.BytesReceived, Rebroadcasts: st.Rebroadcasts}
	if st.Err != nil {
		ns.Err = st.Err.Error()
	}
	return ns
}

// JSON-RPC error codes: JSON-RPC 2.0's own, and bloomwatch's for an input
// the wallet refuses (the command line exits 2 for it) and for a failure.
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeNoMethod       = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	// CodeInput is a refusal of the input (wallet.IsInputError, a bad
	// parameter): the request can be fixed.
	CodeInput = 1
	// CodeFailure is any other failure of the method.
	CodeFailure = 2
)

// Error is a JSON-RPC error as a client receives it.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Error returns the node's message.
func (e *Error) Error() string { return e.Message }

// IsInputError reports whether err is the node's refusal of the request's
// input (CodeInput or CodeInvalidParams), or a local wallet.InputError.
func IsInputError(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Code == CodeInput || e.Code == CodeInvalidParams
	}
	var ie inputError
	return errors.As(err, &ie) || wallet.IsInputError(err)
}

// inputError marks a bad parameter a handler refuses.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

// InputErrorf returns an error that the server reports with CodeInput: a
// Handler's refusal of its parameters.
func InputErrorf(format string, args ...any) error {
	return inputError{fmt.Errorf(format, args...)}
}

// Handler serves one method: it decodes params (null when absent) and
// returns the result, which the server encodes as JSON.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// hashString returns h's string, "" for the zero hash.
func hashString(h chainhash.Hash) string {
	if h == (chainhash.Hash{}) {
		return ""
	}
	return h.String()
}
