package nodeapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/wallet"
)

// ErrNoNode is returned by Dial when no node serves the data dir: no
// address file, or one a stopped node left (nothing listens there, or
// something else does).
var ErrNoNode = errors.New("no bloomwatch node runs on this data dir")

// dialTimeout bounds Dial's connection and its status call: the node is
// on this machine.
const dialTimeout = 2 * time.Second

// maxResponseBytes bounds a response body.
const maxResponseBytes = 256 << 20

// Client asks a running node. Its methods are safe for concurrent use.
type Client struct {
	url    string
	pass   string
	http   *http.Client
	id     atomic.Uint64
	status *StatusInfo
}

// Dial finds the node serving data dir dir (the address file and the
// cookie it wrote) and checks that it answers for that data dir. It
// returns an error wrapping ErrNoNode when none runs there.
func Dial(ctx context.Context, dir string) (*Client, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("nodeapi: data dir: %w", err)
	}
	pass, address, err := readFiles(abs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w (%s has no %s)", ErrNoNode, abs, AddressFile)
	}
	if err != nil {
		return nil, fmt.Errorf("nodeapi: %w", err)
	}
	c, err := newClient(address, pass)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var st StatusInfo
	if err := c.Call(ctx, MethodStatus, nil, &st); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, fmt.Errorf("nodeapi: %s: status: %w", address, err)
		}
		// Nothing listens, or something that is not this data dir's
		// node (a stale address, a cookie that is not its own).
		return nil, fmt.Errorf("%w (%s: %v)", ErrNoNode, address, err)
	}
	if st.DataDir != abs {
		return nil, fmt.Errorf("%w (%s serves %s)", ErrNoNode, address, st.DataDir)
	}
	c.status = &st
	return c, nil
}

// newClient returns a client of the node at address (127.0.0.1:PORT or
// unix:PATH) with the cookie's password.
func newClient(address, pass string) (*Client, error) {
	tr := &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConns: 2}
	url := "http://" + address + "/"
	if path, ok := strings.CutPrefix(address, "unix:"); ok {
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		url = "http://bloomwatch/"
	} else if host, _, err := net.SplitHostPort(address); err != nil || host != "127.0.0.1" {
		return nil, fmt.Errorf("nodeapi: address %q: %w", address, ErrBadListen)
	}
	return &Client{url: url, pass: pass, http: &http.Client{Transport: tr}}, nil
}

// Status returns what the node answered to Dial's status call.
func (c *Client) Status() *StatusInfo { return c.status }

// Close releases the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Call calls method with params (nil: none) and decodes the result into
// result (nil: ignored). A JSON-RPC error is returned as *Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	req := request{JSONRPC: "2.0", ID: json.RawMessage(fmt.Sprint(c.id.Add(1))), Method: method}
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("nodeapi: %s: params: %w", method, err)
		}
		req.Params = p
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("nodeapi: %s: %w", method, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("nodeapi: %s: %w", method, err)
	}
	hreq.SetBasicAuth(CookieUser, c.pass)
	hreq.Header.Set("Content-Type", "application/json")
	hresp, err := c.http.Do(hreq)
	if err != nil {
		return fmt.Errorf("nodeapi: %s: %w", method, err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("nodeapi: %s: read the response: %w", method, err)
	}
	if hresp.StatusCode != http.StatusOK {
		return fmt.Errorf("nodeapi: %s: HTTP %s: %s", method, hresp.Status, strings.TrimSpace(string(data)))
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return fmt.Errorf("nodeapi: %s: not a JSON-RPC response: %w", method, err)
	}
	if resp.Error != nil {
		return resp.Error
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, result); err != nil {
		return fmt.Errorf("nodeapi: %s: result: %w", method, err)
	}
	return nil
}

// Balance asks wallet.balance.
func (c *Client) Balance(ctx context.Context) (*BalanceInfo, error) {
	var r BalanceInfo
	return &r, c.Call(ctx, MethodBalance, nil, &r)
}

// Txs asks wallet.txs.
func (c *Client) Txs(ctx context.Context) (*TxsInfo, error) {
	var r TxsInfo
	return &r, c.Call(ctx, MethodTxs, nil, &r)
}

// UTXOs asks wallet.utxos.
func (c *Client) UTXOs(ctx context.Context) (*UTXOsInfo, error) {
	var r UTXOsInfo
	return &r, c.Call(ctx, MethodUTXOs, nil, &r)
}

// Addresses asks wallet.addresses.
func (c *Client) Addresses(ctx context.Context) (*AddressesInfo, error) {
	var r AddressesInfo
	return &r, c.Call(ctx, MethodAddresses, nil, &r)
}

// Stats asks wallet.stats.
func (c *Client) Stats(ctx context.Context, falsePositives int) (*StatsInfo, error) {
	var r StatsInfo
	return &r, c.Call(ctx, MethodStats, StatsParams{FalsePositives: falsePositives}, &r)
}

// Truth asks wallet.truth.
func (c *Client) Truth(ctx context.Context) (*TruthInfo, error) {
	var r TruthInfo
	return &r, c.Call(ctx, MethodTruth, nil, &r)
}

// Receive asks wallet.receive.
func (c *Client) Receive(ctx context.Context, opts wallet.ReceiveOptions) (*wallet.ReceiveInfo, error) {
	var r wallet.ReceiveInfo
	if err := c.Call(ctx, MethodReceive, receiveParams(opts), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// CreatePSBT asks wallet.psbt; the result's Packet is decoded from its
// Base64.
func (c *Client) CreatePSBT(ctx context.Context, req wallet.PSBTRequest) (*wallet.PSBT, error) {
	var r wallet.PSBT
	if err := c.Call(ctx, MethodPSBT, psbtParams(req), &r); err != nil {
		return nil, err
	}
	if r.Base64 != "" {
		raw, err := base64.StdEncoding.DecodeString(r.Base64)
		if err != nil {
			return nil, fmt.Errorf("nodeapi: psbt: %w", err)
		}
		if r.Packet, err = psbt.NewFromRawBytes(bytes.NewReader(raw), false); err != nil {
			return nil, fmt.Errorf("nodeapi: psbt: %w", err)
		}
	}
	return &r, nil
}

// Broadcast asks the node to broadcast tx (the broadcast method).
func (c *Client) Broadcast(ctx context.Context, tx *wire.MsgTx, to string, timeout time.Duration) (*BroadcastInfo, error) {
	var b bytes.Buffer
	if err := tx.Serialize(&b); err != nil {
		return nil, fmt.Errorf("nodeapi: broadcast: %w", err)
	}
	var r BroadcastInfo
	p := BroadcastParams{Tx: hex.EncodeToString(b.Bytes()), To: to, TimeoutNS: int64(timeout)}
	if err := c.Call(ctx, MethodBroadcast, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
