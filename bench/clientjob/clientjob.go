// Package clientjob is the contract between the bench and the client
// processes it measures (the minimal loop and neutrino): the job a client
// reads, the result it prints, and the one wallet view every client uses to
// tell its transactions from false positives. It is a module of its own so
// that the neutrino client, which needs an older btcd than bloomwatch, can
// share it without the bloomwatch module.
package clientjob

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// ClientJob is what the bench hands to a client child process (minimal or
// neutrino) in a JSON file: where to connect and what to watch.
type ClientJob struct {
	// Network is "simnet" or "regtest".
	Network string `json:"network"`
	// Connect is the btcd P2P address, always on 127.0.0.1.
	Connect string `json:"connect"`
	// Addresses are the watched addresses, encoded for Network.
	Addresses []string `json:"addresses"`
	// DataDir is a fresh directory the client may use (neutrino's header
	// and filter stores).
	DataDir string `json:"datadir"`
	// FPRate is the minimal loop's bloom filter target false-positive rate.
	FPRate float64 `json:"fp_rate"`
	// Capacity is the minimal loop's filter capacity (elements); 0 picks
	// the default headroom.
	Capacity uint32 `json:"capacity"`
	// Birthday is the first height that can hold wallet transactions:
	// below it clients fetch headers only (0 = from block 1).
	Birthday int32 `json:"birthday,omitempty"`
	// CPUProfile, when set, is where the client writes a CPU profile of
	// its run (the bench's --cpu-profiles).
	CPUProfile string `json:"cpu_profile,omitempty"`
}

// FoundTx is one wallet transaction a client found.
type FoundTx struct {
	Txid   string `json:"txid"`
	Height int32  `json:"height"`
}

// ClientResult is what a client child prints as JSON on stdout.
type ClientResult struct {
	// Client names the implementation ("minimal", "neutrino", "bloomwatch").
	Client string `json:"client"`
	// TipHeight is the height the client synced to.
	TipHeight int32 `json:"tip_height"`
	// HeaderHeight is the client's header chain height (bloomwatch reports
	// it apart from the wallet's tip, which stays below a future birthday).
	HeaderHeight int32 `json:"header_height,omitempty"`
	// Txs are the wallet's transactions found, sorted by height then txid.
	Txs []FoundTx `json:"txs"`
	// FalsePositives counts downloaded items that turned out not to be the
	// wallet's: transactions for BIP37 clients, blocks for neutrino.
	FalsePositives int `json:"false_positives"`
	// FPUnit says what FalsePositives counts ("tx" or "block").
	FPUnit string `json:"fp_unit"`
	// BytesReceived counts every byte read from the peer connection(s).
	BytesReceived uint64 `json:"bytes_received"`
	// BlocksFetched counts merkle blocks (BIP37) or full blocks (neutrino)
	// downloaded.
	BlocksFetched int `json:"blocks_fetched"`
	// FilterBytes is the BIP37 filter size sent, or the total BIP158 filter
	// bytes received.
	FilterBytes int `json:"filter_bytes"`
	// Missing counts matched transactions announced by a merkle block that
	// never arrived.
	Missing int `json:"missing,omitempty"`
	// Phases are the client's own timings (milliseconds) of its sync
	// phases, e.g. headers and filter scan.
	Phases map[string]float64 `json:"phases,omitempty"`
	// Filter describes a BIP37 client's (last) filter.
	Filter *FilterReport `json:"filter,omitempty"`
	// SpotChecks counts blocks asked again from a second peer, Omissions
	// the omissions those checks found (bloomwatch only).
	SpotChecks int `json:"spot_checks,omitempty"`
	Omissions  int `json:"omissions,omitempty"`
}

// FilterReport is how a BIP37 client's filter ended up: its size, its
// hash functions, what it was sized for and the false-positive rates it
// reaches.
type FilterReport struct {
	// Bytes is the filter's size; Capped reports a filter built at
	// BIP37's 36,000-byte cap, too small to reach TargetFPRate at
	// Capacity.
	Bytes     int    `json:"bytes"`
	HashFuncs uint32 `json:"hash_funcs"`
	Capacity  uint32 `json:"capacity"`
	Capped    bool   `json:"capped"`
	// Elements is how many elements the (last) filter was loaded with.
	Elements int `json:"elements"`
	// TargetFPRate is the rate asked for at Capacity; LoadFPRate the
	// theoretical rate at Elements when loaded; EndFPRate the rate of the
	// server's copy at the end of the sync, after its BLOOM_UPDATE_ALL
	// insertions (from the client's mirror of them: bits set over bits,
	// to the power of the hash functions).
	TargetFPRate float64 `json:"target_fp_rate"`
	LoadFPRate   float64 `json:"load_fp_rate"`
	EndFPRate    float64 `json:"end_fp_rate"`
	// Loads counts filterload messages sent.
	Loads int `json:"loads"`
}

// ReadJob reads and checks a job file.
func ReadJob(path string) (*ClientJob, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read job: %w", err)
	}
	var j ClientJob
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decode job %s: %w", path, err)
	}
	if len(j.Addresses) == 0 {
		return nil, fmt.Errorf("job %s: no addresses", path)
	}
	return &j, nil
}

// WriteJob writes j to path (mode 0600).
func WriteJob(path string, j *ClientJob) error {
	b, err := json.MarshalIndent(j, "", " ")
	if err != nil {
		return fmt.Errorf("encode job: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write job: %w", err)
	}
	return nil
}

// ParamsFor maps a network name to btcd's parameters.
func ParamsFor(network string) (*chaincfg.Params, error) {
	switch network {
	case "simnet":
		return &chaincfg.SimNetParams, nil
	case "regtest":
		return &chaincfg.RegressionNetParams, nil
	default:
		return nil, fmt.Errorf("network %q: want simnet or regtest", network)
	}
}

// WatchSet is the exact wallet view every client uses to tell its own
// transactions from false positives: the watched output scripts and the
// outpoints they have received.
type WatchSet struct {
	scripts map[string]struct{}
	// PkScripts are the watched output scripts, without duplicates.
	PkScripts [][]byte
	// Pushes are the scripts' data pushes, the elements a BIP37 filter needs.
	Pushes    [][]byte
	outpoints map[wire.OutPoint]struct{}
}

// NewWatchSet decodes addrs for params into a watch set.
func NewWatchSet(addrs []string, params *chaincfg.Params) (*WatchSet, error) {
	w := &WatchSet{
		scripts:   make(map[string]struct{}, len(addrs)),
		outpoints: make(map[wire.OutPoint]struct{}),
	}
	for _, s := range addrs {
		a, err := btcutil.DecodeAddress(s, params)
		if err != nil {
			return nil, fmt.Errorf("address %q: %w", s, err)
		}
		pk, err := txscript.PayToAddrScript(a)
		if err != nil {
			return nil, fmt.Errorf("address %q: %w", s, err)
		}
		if _, dup := w.scripts[string(pk)]; dup {
			continue
		}
		w.scripts[string(pk)] = struct{}{}
		w.PkScripts = append(w.PkScripts, pk)
		// The element a BIP37 filter needs is the script's data push:
		// the 20- or 32-byte hash (P2PKH, P2WPKH, P2SH, P2WSH, P2TR).
		w.Pushes = append(w.Pushes, a.ScriptAddress())
	}
	return w, nil
}

// Apply classifies tx (in chain order): it is the wallet's when it pays a
// watched script or spends a watched outpoint. Received outpoints are
// remembered so later spends are recognised.
func (w *WatchSet) Apply(tx *wire.MsgTx) bool {
	mine := false
	for _, in := range tx.TxIn {
		if _, ok := w.outpoints[in.PreviousOutPoint]; ok {
			mine = true
			break
		}
	}
	var txh *wire.OutPoint
	for i, out := range tx.TxOut {
		if _, ok := w.scripts[string(out.PkScript)]; ok {
			if txh == nil {
				txh = &wire.OutPoint{Hash: tx.TxHash()}
			}
			w.outpoints[wire.OutPoint{Hash: txh.Hash, Index: uint32(i)}] = struct{}{}
			mine = true
		}
	}
	return mine
}

// SortTxs sorts txs by height, then txid.
func SortTxs(txs []FoundTx) {
	sort.Slice(txs, func(i, j int) bool {
		if txs[i].Height != txs[j].Height {
			return txs[i].Height < txs[j].Height
		}
		return txs[i].Txid < txs[j].Txid
	})
}

// PrintResult writes r, its transactions sorted, as JSON on stdout.
func PrintResult(r *ClientResult) error {
	SortTxs(r.Txs)
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}
