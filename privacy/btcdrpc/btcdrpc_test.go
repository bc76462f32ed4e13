package btcdrpc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
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
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var ae *AddressError
			if err != nil && (!errors.As(err, &ae) || ae.Addr != tc.addr) {
				t.Errorf("err %v is not an *AddressError for %q", err, tc.addr)
			}
		})
	}
}

// TestDialRefusesBeforeConnecting checks that a refused address fails
// with an *AddressError before any connection attempt (192.0.2.1 is
// TEST-NET-1, which no network routes), and that a closed loopback port
// fails fast with a connection error instead.
func TestDialRefusesBeforeConnecting(t *testing.T) {
	var ae *AddressError
	if _, err := Dial("192.0.2.1:18334", "u", "p", -1); !errors.As(err, &ae) || !errors.Is(err, ErrNotLoopback) {
		t.Errorf("non-loopback: err = %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Dial(closed, "u", "p", -1)
	if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("closed port: err = %v", err)
	}
}

// fakeNode serves getblockcount, getblockhash and getblock over HTTP
// POST JSON-RPC, as btcd does, for a chain held in memory.
type fakeNode struct {
	t      *testing.T
	blocks []*wire.MsgBlock
	// swap makes getblock answer with the next block (a lying node).
	swap bool

	mu    sync.Mutex
	calls map[string]int
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
			n.t.Error(err)
		}
		result = n.blocks[h].BlockHash().String()
	case "getblock":
		var hash string
		if err := json.Unmarshal(req.Params[0], &hash); err != nil {
			n.t.Error(err)
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
				n.t.Error(err)
			}
			result = hex.EncodeToString(buf.Bytes())
		}
	default:
		n.t.Errorf("unexpected method %q", req.Method)
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
	node.t, node.calls = t, map[string]int{}
	srv := httptest.NewServer(node) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestChainReadsAndCachesBlocks(t *testing.T) {
	node := &fakeNode{blocks: testBlocks(5)}
	addr := serve(t, node)
	c, err := Dial(addr, "user", "pass", -1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tip, _ := c.BestHeight(); tip != 4 {
		t.Fatalf("tip %d, want 4", tip)
	}
	for range 2 {
		for h, want := range node.blocks {
			b, err := c.BlockAt(int32(h))
			if err != nil {
				t.Fatal(err)
			}
			if b.BlockHash() != want.BlockHash() {
				t.Errorf("height %d: block %s, want %s", h, b.BlockHash(), want.BlockHash())
			}
		}
	}
	if got := node.calls["getblock"]; got != len(node.blocks) {
		t.Errorf("%d getblock calls for %d blocks read twice: the cache is not used", got, len(node.blocks))
	}
	for _, h := range []int32{-1, 5} {
		if _, err := c.BlockAt(h); err == nil {
			t.Errorf("height %d: no error", h)
		}
	}
}

func TestChainCapAndLyingNode(t *testing.T) {
	node := &fakeNode{blocks: testBlocks(5)}
	addr := serve(t, node)
	c, err := Dial(addr, "user", "pass", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tip, _ := c.BestHeight(); tip != 2 {
		t.Errorf("capped tip %d, want 2", tip)
	}
	if _, err := c.BlockAt(3); err == nil {
		t.Error("a block above the cap was read")
	}
	high, err := Dial(addr, "user", "pass", 99)
	if err != nil {
		t.Fatal(err)
	}
	defer high.Close()
	if tip, _ := high.BestHeight(); tip != 4 {
		t.Errorf("cap above the tip: tip %d, want 4", tip)
	}
	node.swap = true
	if _, err := c.BlockAt(1); err == nil || !strings.Contains(err.Error(), "server returned block") {
		t.Errorf("a block that does not hash to the requested hash: err = %v", err)
	}
}
