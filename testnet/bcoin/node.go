package bcoin

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// RPCTimeout bounds one JSON-RPC call to bcoin when the context has no
// earlier deadline.
const RPCTimeout = 60 * time.Second

// Config configures one bcoin node.
type Config struct {
	// Peers are the P2P addresses ("127.0.0.1:port") bcoin connects out
	// to; it connects nowhere else (other addresses are refused).
	Peers []string
	// Log receives bcoin's output as testnet.Config.Log does btcd's: an
	// *os.File live, any other writer when the node stops; nil discards
	// it.
	Log io.Writer
	// LogLevel is bcoin's log level: "info" (the default), "debug" (every
	// RPC call and peer event), "spam" (every P2P message).
	LogLevel string
	// StopTimeout is how long Stop waits for bcoin to exit after SIGINT
	// before it sends SIGKILL (0 = testnet.StopTimeout).
	StopTimeout time.Duration
	// P2PPort and RPCPort fix the loopback ports (0 = a free port).
	P2PPort int
	RPCPort int
	// MiningScript receives the coinbases of GenerateBlocks; nil means
	// the funding wallet's P2WPKH script (testnet.FunderAddress).
	MiningScript []byte
}

// Node is a running bcoin full node (regtest, in-memory chain, BIP37
// served) on 127.0.0.1. Its chain is regtest's: the SPV client and the
// wallet use chaincfg.RegressionNetParams with it; only addresses given
// to its RPCs differ (Address).
type Node struct {
	// ch is the process; its scratch directory is the process's cwd and
	// holds its output.
	ch      *proc.Child
	p2p     string
	rpcAddr string
	apiKey  string
	client  *http.Client
	cfg     Config
}

var _ testnet.FullNode = (*Node)(nil)

// launcherConfig is the JSON the launcher takes in argv[2].
type launcherConfig struct {
	P2PPort  int      `json:"p2pPort"`
	HTTPPort int      `json:"httpPort"`
	APIKey   string   `json:"apiKey"`
	Peers    []string `json:"peers"`
	LogLevel string   `json:"logLevel"`
}

// Start installs bcoin if needed (Package), starts it on free 127.0.0.1
// ports and waits until its RPC server answers. ctx bounds the start
// only. On failure nothing is left running and the error quotes bcoin's
// last output.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	for _, p := range cfg.Peers {
		host, _, err := net.SplitHostPort(p)
		if err != nil || host != "127.0.0.1" {
			return nil, fmt.Errorf("%w: bcoin peer %q is not 127.0.0.1:port", testnet.ErrBadSpec, p)
		}
	}
	if cfg.MiningScript == nil {
		addr, err := testnet.FunderAddress(&chaincfg.RegressionNetParams)
		if err != nil {
			return nil, err
		}
		if cfg.MiningScript, err = txscript.PayToAddrScript(addr); err != nil {
			return nil, fmt.Errorf("bcoin: funder script: %w", err)
		}
	}
	nodeBin, err := nodeBinary()
	if err != nil {
		return nil, err
	}
	dir, err := Package(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, testnet.StartTimeout)
		defer cancel()
	}
	var n *Node
	err = proc.StartWithRetries(func() (retry bool, err error) {
		n, retry, err = startOnce(ctx, nodeBin, dir, cfg)
		return retry, err
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// startOnce launches bcoin once on a fresh pair of ports. retry reports a
// bind failure worth another attempt.
func startOnce(ctx context.Context, nodeBin, dir string, cfg Config) (n *Node, retry bool, err error) {
	scratch, err := os.MkdirTemp("", "bloomwatch-bcoin-")
	if err != nil {
		return nil, false, fmt.Errorf("bcoin: temp dir: %w", err)
	}
	n = &Node{apiKey: proc.RandomHex(16),
		ch: &proc.Child{Name: "bcoin", Killed: ErrKilled, Exited: ErrExited, Scratch: scratch, Log: cfg.Log, StopTimeout: cfg.StopTimeout}}
	n.ch.CloseClients = func() {
		if n.client != nil {
			n.client.CloseIdleConnections()
		}
	}
	defer func() {
		if err != nil {
			_ = n.ch.Stop()
			n = nil
		}
	}()
	ports, err := proc.Ports(cfg.P2PPort, cfg.RPCPort)
	if err != nil {
		return n, false, err
	}
	n.cfg = cfg
	n.cfg.P2PPort, n.cfg.RPCPort = ports[0], ports[1]
	n.p2p = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	n.rpcAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	n.client = &http.Client{Transport: &http.Transport{
		Proxy:           nil, // loopback only, whatever HTTP_PROXY says
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}}
	lc := launcherConfig{P2PPort: ports[0], HTTPPort: ports[1], APIKey: n.apiKey, Peers: cfg.Peers, LogLevel: cfg.LogLevel}
	if lc.Peers == nil {
		lc.Peers = []string{}
	}
	arg, err := json.Marshal(lc)
	if err != nil {
		return n, false, fmt.Errorf("bcoin: config: %w", err)
	}
	cmd := exec.Command(nodeBin, filepath.Join(dir, launcherName), string(arg))
	cmd.Env = append(os.Environ(), "NODE_BACKEND=js")
	if err := n.ch.Start(cmd, "bcoin.out"); err != nil {
		return n, false, err
	}
	retry, err = n.ch.WaitReady(ctx, n.probe, n.Tail, "EADDRINUSE")
	return n, retry, err
}

// probeTimeout bounds one readiness probe.
const probeTimeout = time.Second

// probe sends getblockcount and reports whether bcoin answered within
// probeTimeout.
func (n *Node) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var height int32
	return n.call(ctx, "getblockcount", &height)
}

// P2PAddr returns the node's peer-to-peer address, "127.0.0.1:port".
func (n *Node) P2PAddr() string { return n.p2p }

// RPCAddr returns the node's HTTP JSON-RPC address (no TLS; the API key
// is the basic-auth password).
func (n *Node) RPCAddr() string { return n.rpcAddr }

// Config returns the node's effective configuration (with its ports).
func (n *Node) Config() Config { return n.cfg }

// PID returns the node process's id.
func (n *Node) PID() int { return n.ch.PID() }

// Exited reports whether the bcoin process has exited (and reaps it).
func (n *Node) Exited() bool { return n.ch.HasExited() }

// Stop stops bcoin: SIGINT (its graceful shutdown), then SIGKILL by PID
// after the stop timeout (the error then wraps ErrKilled); it reaps the
// process, hands bcoin's output to Config.Log and removes the temporary
// directory. It is idempotent and returns the first call's result.
func (n *Node) Stop() error { return n.ch.Stop() }

// Params returns the chain parameters the node's chain follows: regtest.
func (n *Node) Params() *chaincfg.Params { return &chaincfg.RegressionNetParams }

// LogPath returns the file that receives bcoin's output while it runs
// (only its stderr when Config.Log is an *os.File).
func (n *Node) LogPath() string { return n.ch.OutPath() }

// Tail returns the last couple of kilobytes of bcoin's output.
func (n *Node) Tail() string { return n.ch.Tail() }

// alive returns testnet.ErrStopped or ErrExited when the node cannot
// serve.
func (n *Node) alive() error { return n.ch.Alive(n.Tail) }

// RPCError is an error bcoin's JSON-RPC server returned.
type RPCError struct {
	// Method is the RPC called.
	Method string
	// Code and Message are bcoin's error object.
	Code    int
	Message string
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("bcoin: %s: %s (code %d)", e.Method, e.Message, e.Code)
}

// Call makes one JSON-RPC call and decodes its result into result (which
// may be nil). A call without a deadline in ctx is bounded by
// RPCTimeout. An error bcoin returns is a *RPCError.
func (n *Node) Call(ctx context.Context, method string, result any, params ...any) error {
	if err := n.alive(); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, RPCTimeout)
		defer cancel()
	}
	return n.call(ctx, method, result, params...)
}

// call is Call without the liveness check and default deadline.
func (n *Node) call(ctx context.Context, method string, result any, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("bcoin: %s: encode: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+n.rpcAddr+"/", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("bcoin: %s: %w", method, err)
	}
	req.SetBasicAuth("bloomwatch", n.apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("bcoin: %s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("bcoin: %s: read: %w", method, err)
	}
	var reply struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return fmt.Errorf("bcoin: %s: %s: %w: %.200s", method, resp.Status, err, raw)
	}
	if reply.Error != nil {
		return &RPCError{Method: method, Code: reply.Error.Code, Message: reply.Error.Message}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bcoin: %s: %s: %.200s", method, resp.Status, raw)
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(reply.Result, result); err != nil {
		return fmt.Errorf("bcoin: %s: decode result: %w", method, err)
	}
	return nil
}

// generateBatch is how many blocks one generatetoaddress call mines, so
// every call stays well inside RPCTimeout.
const generateBatch = 50

// GenerateBlocks mines nblocks blocks (with the mempool's transactions)
// whose coinbases pay Config.MiningScript, and returns their hashes.
func (n *Node) GenerateBlocks(ctx context.Context, nblocks int) ([]*chainhash.Hash, error) {
	return n.GenerateTo(ctx, nblocks, n.cfg.MiningScript)
}

// GenerateTo mines nblocks blocks (with the mempool's transactions)
// whose coinbases pay pkScript (a script Address converts), and returns
// their hashes.
func (n *Node) GenerateTo(ctx context.Context, nblocks int, pkScript []byte) ([]*chainhash.Hash, error) {
	addr, err := Address(pkScript)
	if err != nil {
		return nil, err
	}
	hashes := make([]*chainhash.Hash, 0, nblocks)
	for len(hashes) < nblocks {
		k := min(nblocks-len(hashes), generateBatch)
		var got []string
		if err := n.Call(ctx, "generatetoaddress", &got, k, addr); err != nil {
			return hashes, err
		}
		for _, s := range got {
			h, err := chainhash.NewHashFromStr(s)
			if err != nil {
				return hashes, fmt.Errorf("bcoin: generatetoaddress: hash %q: %w", s, err)
			}
			hashes = append(hashes, h)
		}
		if len(got) != k {
			return hashes, fmt.Errorf("bcoin: generatetoaddress %d: got %d hashes", k, len(got))
		}
	}
	return hashes, nil
}

// BestBlock returns the hash and height of the node's tip.
func (n *Node) BestBlock() (*chainhash.Hash, int32, error) {
	var info struct {
		Blocks        int32  `json:"blocks"`
		BestBlockHash string `json:"bestblockhash"`
	}
	if err := n.Call(context.Background(), "getblockchaininfo", &info); err != nil {
		return nil, 0, err
	}
	h, err := chainhash.NewHashFromStr(info.BestBlockHash)
	if err != nil {
		return nil, 0, fmt.Errorf("bcoin: getblockchaininfo: %w", err)
	}
	return h, info.Blocks, nil
}

// BlockHash returns the hash of the main-chain block at height.
func (n *Node) BlockHash(height int32) (*chainhash.Hash, error) {
	var s string
	if err := n.Call(context.Background(), "getblockhash", &s, height); err != nil {
		return nil, err
	}
	h, err := chainhash.NewHashFromStr(s)
	if err != nil {
		return nil, fmt.Errorf("bcoin: getblockhash %d: %w", height, err)
	}
	return h, nil
}

// Block returns a block by hash, as bcoin serializes it (with witnesses).
func (n *Node) Block(hash *chainhash.Hash) (*wire.MsgBlock, error) {
	var s string
	if err := n.Call(context.Background(), "getblock", &s, hash.String(), false); err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("bcoin: getblock %s: %w", hash, err)
	}
	var b wire.MsgBlock
	if err := b.Deserialize(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("bcoin: getblock %s: %w", hash, err)
	}
	if got := b.BlockHash(); got != *hash {
		return nil, fmt.Errorf("bcoin: getblock %s returned block %s", hash, got)
	}
	return &b, nil
}

// BlockAt returns the main-chain block at height and its hash.
func (n *Node) BlockAt(height int32) (*chainhash.Hash, *wire.MsgBlock, error) {
	hash, err := n.BlockHash(height)
	if err != nil {
		return nil, nil, err
	}
	b, err := n.Block(hash)
	if err != nil {
		return nil, nil, err
	}
	return hash, b, nil
}

// SendTx submits tx to the node's mempool and returns once bcoin has
// accepted it (bcoin relays it to its peers). bcoin's sendrawtransaction
// RPC cannot tell: it hands the transaction to the mempool without
// waiting and only logs a rejection (rpc.js sendRawTransaction calls
// node.relay). SendTx posts to the REST /broadcast endpoint instead,
// which waits for the mempool, and then checks that the transaction is
// in it: bcoin answers success for a policy rejection (a VerifyError of
// score 0, "broadcast anyway") and for an orphan. A refused transaction
// is an error wrapping ErrTxRejected with bcoin's log lines about it.
func (n *Node) SendTx(tx *wire.MsgTx) error {
	if err := n.alive(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return fmt.Errorf("bcoin: serialize %s: %w", tx.TxHash(), err)
	}
	txid := tx.TxHash()
	ctx, cancel := context.WithTimeout(context.Background(), RPCTimeout)
	defer cancel()
	body, err := json.Marshal(map[string]string{"tx": hex.EncodeToString(buf.Bytes())})
	if err != nil {
		return fmt.Errorf("bcoin: broadcast %s: %w", txid, err)
	}
	if err := n.post(ctx, "/broadcast", body); err != nil {
		return fmt.Errorf("%w: %s: %w: %s", ErrTxRejected, txid, err, n.logLinesWith(txid.String()))
	}
	err = n.Call(ctx, "getmempoolentry", nil, txid.String())
	var rpcErr *RPCError
	if errors.As(err, &rpcErr) {
		return fmt.Errorf("%w: %s not in the mempool after broadcast: %s", ErrTxRejected, txid, n.logLinesWith(txid.String()))
	}
	return err
}

// post sends a JSON body to one of bcoin's REST endpoints and checks
// that it answered 200 OK.
func (n *Node) post(ctx context.Context, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+n.rpcAddr+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("bcoin: POST %s: %w", path, err)
	}
	req.SetBasicAuth("bloomwatch", n.apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("bcoin: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bcoin: POST %s: %s: %.300s", path, resp.Status, bytes.TrimSpace(raw))
	}
	return nil
}

// logLinesWith returns bcoin's output lines (at most a few) that contain
// s, e.g. the VerifyError naming a rejected transaction's hash.
func (n *Node) logLinesWith(s string) string {
	data, err := os.ReadFile(n.ch.OutPath())
	if err != nil {
		return ""
	}
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, s) {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	if len(lines) == 0 {
		return "(bcoin logged nothing about it)"
	}
	return strings.Join(lines, "; ")
}

// Tx returns a transaction from the mempool or the chain (the node
// indexes transactions).
func (n *Node) Tx(txid *chainhash.Hash) (*wire.MsgTx, error) {
	var s string
	if err := n.Call(context.Background(), "getrawtransaction", &s, txid.String(), false); err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("bcoin: getrawtransaction %s: %w", txid, err)
	}
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("bcoin: getrawtransaction %s: %w", txid, err)
	}
	return &tx, nil
}

// Unspent returns the unspent output op, or nil when bcoin has no such
// unspent output (spent in a block, never existed). With mempool, the
// mempool's outputs count too; bcoin 1.0.2 (like btcd) still reports a
// confirmed output that a mempool transaction spends.
func (n *Node) Unspent(op wire.OutPoint, mempool bool) (*testnet.Unspent, error) {
	var res *struct {
		Value         float64 `json:"value"`
		Confirmations int64   `json:"confirmations"`
		Coinbase      bool    `json:"coinbase"`
	}
	if err := n.Call(context.Background(), "gettxout", &res, op.Hash.String(), op.Index, mempool); err != nil {
		return nil, err
	}
	if res == nil {
		return nil, nil
	}
	// bcoin prints amounts with 8 decimals; round, never truncate.
	sat := int64(res.Value*1e8 + 0.5)
	return &testnet.Unspent{Value: sat, Confirmations: res.Confirmations, Coinbase: res.Coinbase}, nil
}

// Mempool returns the txids in the node's mempool.
func (n *Node) Mempool() ([]chainhash.Hash, error) {
	var ids []string
	if err := n.Call(context.Background(), "getrawmempool", &ids, false); err != nil {
		return nil, err
	}
	out := make([]chainhash.Hash, 0, len(ids))
	for _, s := range ids {
		h, err := chainhash.NewHashFromStr(s)
		if err != nil {
			return nil, fmt.Errorf("bcoin: getrawmempool: %w", err)
		}
		out = append(out, *h)
	}
	return out, nil
}

// InvalidateBlock marks a main-chain block invalid. bcoin 1.0.2 resets its
// chain to the block's parent: the block and its descendants are deleted
// (not kept as a side branch) and the whole mempool is cleared. Peers are
// told nothing until the next block is mined.
func (n *Node) InvalidateBlock(hash *chainhash.Hash) error {
	return n.Call(context.Background(), "invalidateblock", nil, hash.String())
}

// Peer is one entry of bcoin's getpeerinfo.
type Peer struct {
	ID        int    `json:"id"`
	Addr      string `json:"addr"`
	AddrLocal string `json:"addrlocal"`
	Services  string `json:"services"`
	Version   int32  `json:"version"`
	SubVer    string `json:"subver"`
	Inbound   bool   `json:"inbound"`
	// StartingHeight is the height the peer announced in its version.
	StartingHeight int32 `json:"startingheight"`
}

// Peers returns the node's connected peers.
func (n *Node) Peers() ([]Peer, error) {
	var peers []Peer
	if err := n.Call(context.Background(), "getpeerinfo", &peers); err != nil {
		return nil, err
	}
	return peers, nil
}

// WaitForHeight polls until the node's tip is at least h.
func (n *Node) WaitForHeight(ctx context.Context, h int32) error {
	return proc.Poll(ctx, fmt.Sprintf("bcoin height %d", h), func() (bool, error) {
		_, height, err := n.BestBlock()
		return height >= h, err
	})
}

// WaitForMempool polls until every txid is in the node's mempool.
func (n *Node) WaitForMempool(ctx context.Context, txids ...chainhash.Hash) error {
	return testnet.WaitForMempool(ctx, n, txids...)
}
