package btcdrpc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		want error
	}{
		{"127.0.0.1:18334", nil},
		{"127.0.0.2:18334", nil},
		{"[::1]:18334", nil},
		{"localhost:18334", nil},
		{"10.0.0.1:18334", ErrNotLoopback},
		{"[::ffff:10.0.0.1]:18334", ErrNotLoopback},
		{"example.com:18334", ErrNotLoopback},
		{"localhost.example.com:18334", ErrNotLoopback},
		{"127.0.0.1", ErrBadAddress},
		{"127.0.0.1:", ErrBadAddress},
		{"", ErrBadAddress},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			err := CheckLoopback(tc.addr)
			require.ErrorIs(t, err, tc.want, "err = %v, want %v", err, tc.want)
			require.Equal(t, (tc.want == nil), (err == nil), "err = %v, want %v", err, tc.want)
			var ae *AddressError
			require.False(t, err != nil && (!errors.As(err, &ae) || ae.Addr != tc.addr), "err %v is not an *AddressError for %q", err, tc.addr)
		})
	}
}

// TestDialRefusesBeforeConnecting checks that a refused address fails
// with an *AddressError before any connection attempt (192.0.2.1 is
// TEST-NET-1, which no network routes), and that a closed loopback port
// fails fast with a connection error instead.
func TestDialRefusesBeforeConnecting(t *testing.T) {
	var ae *AddressError
	_, err := Dial("192.0.2.1:18334", "u", "p", -1)
	require.ErrorAs(t, err, &ae, "non-loopback: err = %v", err)
	require.ErrorIs(t, err, ErrNotLoopback, "non-loopback: err = %v", err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	require.NoError(t, l.Close())
	_, err = Dial(closed, "u", "p", -1)
	require.Error(t, err, "closed port: err = %v", err)
	require.False(t, errors.As(err, &ae), "closed port: err = %v", err)
	require.Contains(t, err.Error(), "connection refused", "closed port: err = %v", err)
}

// fakeNode serves getblockcount, getblockhash and getblock over HTTP
// POST JSON-RPC, as btcd does, for a chain held in memory.
type fakeNode struct {
	blocks []*wire.MsgBlock
	// swap makes getblock answer with the next block (a lying node).
	swap bool

	mu    sync.Mutex
	calls map[string]int
	// errs holds what went wrong on the server's goroutines, which the
	// test requires empty at cleanup.
	errs []error
}

// fail records err for the test to require at cleanup.
func (n *fakeNode) fail(err error) {
	n.mu.Lock()
	n.errs = append(n.errs, err)
	n.mu.Unlock()
}

// ServeHTTP answers one JSON-RPC request.
func (n *fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if user, pass, ok := r.BasicAuth(); !ok || user != "user" || pass != "pass" {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	n.calls[req.Method]++
	n.mu.Unlock()
	var result any
	switch req.Method {
	case "getblockcount":
		result = len(n.blocks) - 1
	case "getblockhash":
		var h int
		if err := json.Unmarshal(req.Params[0], &h); err != nil {
			n.fail(err)
		}
		result = n.blocks[h].BlockHash().String()
	case "getblock":
		var hash string
		if err := json.Unmarshal(req.Params[0], &hash); err != nil {
			n.fail(err)
		}
		for i, b := range n.blocks {
			if b.BlockHash().String() != hash {
				continue
			}
			if n.swap {
				b = n.blocks[(i+1)%len(n.blocks)]
			}
			var buf bytes.Buffer
			if err := b.Serialize(&buf); err != nil {
				n.fail(err)
			}
			result = hex.EncodeToString(buf.Bytes())
		}
	default:
		n.fail(fmt.Errorf("unexpected method %q", req.Method))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"result": result, "error": nil, "id": req.ID})
}

// testBlocks returns n chained blocks of one coinbase each.
func testBlocks(n int) []*wire.MsgBlock {
	var out []*wire.MsgBlock
	prev := chainhash.Hash{}
	for h := range n {
		cb := wire.NewMsgTx(wire.TxVersion)
		script, _ := txscript.NewScriptBuilder().AddInt64(int64(h)).AddInt64(int64(h) + 1).Script()
		cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: script})
		cb.AddTxOut(wire.NewTxOut(1, []byte{txscript.OP_TRUE}))
		b := wire.NewMsgBlock(wire.NewBlockHeader(1, &prev, &chainhash.Hash{}, 0, uint32(h)))
		b.AddTransaction(cb)
		prev = b.BlockHash()
		out = append(out, b)
	}
	return out
}

// serve starts a fake node on the loopback interface.
func serve(t *testing.T, node *fakeNode) string {
	t.Helper()
	node.calls = map[string]int{}
	// Cleanups run last first: the server is closed before its errors
	// are required.
	t.Cleanup(func() {
		node.mu.Lock()
		defer node.mu.Unlock()
		require.NoError(t, errors.Join(node.errs...), "the fake node")
	})
	srv := httptest.NewServer(node) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestChainReadsAndCachesBlocks(t *testing.T) {
	node := &fakeNode{blocks: testBlocks(5)}
	addr := serve(t, node)
	c, err := Dial(addr, "user", "pass", -1)
	require.NoError(t, err)
	defer c.Close()
	tip, _ := c.BestHeight()
	require.Equal(t, int32(4), tip, "tip %d, want 4", tip)
	for range 2 {
		for h, want := range node.blocks {
			b, err := c.BlockAt(int32(h))
			require.NoError(t, err)
			require.Equal(t, want.BlockHash(), b.BlockHash(), "height %d: block %s, want %s", h, b.BlockHash(), want.BlockHash())
		}
	}
	got := node.calls["getblock"]
	require.Equal(t, len(node.blocks), got, "%d getblock calls for %d blocks read twice: the cache is not used", got, len(node.blocks))
	for _, h := range []int32{-1, 5} {
		_, err := c.BlockAt(h)
		require.Error(t, err, "height %d: no error", h)
	}
}

func TestChainCapAndLyingNode(t *testing.T) {
	node := &fakeNode{blocks: testBlocks(5)}
	addr := serve(t, node)
	c, err := Dial(addr, "user", "pass", 2)
	require.NoError(t, err)
	defer c.Close()
	tip, _ := c.BestHeight()
	require.Equal(t, int32(2), tip, "capped tip %d, want 2", tip)
	_, err = c.BlockAt(3)
	require.Error(t, err, "a block above the cap was read")
	high, err := Dial(addr, "user", "pass", 99)
	require.NoError(t, err)
	defer high.Close()
	tip, _ = high.BestHeight()
	require.Equal(t, int32(4), tip, "cap above the tip: tip %d, want 4", tip)
	node.swap = true
	_, err = c.BlockAt(1)
	require.Error(t, err, "a block that does not hash to the requested hash: err = %v", err)
	require.Contains(t, err.Error(), "server returned block", "a block that does not hash to the requested hash: err = %v", err)
}
