package nodeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// newWallet creates a regtest wallet of the demo keyring's BIP84 account
// in a fresh directory.
func newWallet(t *testing.T) *wallet.Wallet {
	t.Helper()
	key, err := testnet.NewKeyring(testnet.DemoSeed, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	vpub, err := key.Xpub(testnet.PurposeBIP84)
	require.NoError(t, err)
	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{Network: "regtest", Xpubs: []string{vpub}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// TestClientReadsWhatLocalReads checks that every wallet method gives
// through the server what Local gives on the same wallet (the JSON round
// trip loses nothing), that receive and psbt act on the node's wallet,
// and that an input the wallet refuses comes back as an input error.
func TestClientReadsWhatLocalReads(t *testing.T) {
	ctx := context.Background()
	w := newWallet(t)
	srv, err := Start(Config{Wallet: w})
	require.NoError(t, err)
	defer srv.Close()
	c, err := Dial(ctx, w.Dir())
	require.NoError(t, err)
	defer c.Close()
	l := &Local{W: w}

	lb, err := l.Balance(ctx)
	require.NoError(t, err)
	cb, err := c.Balance(ctx)
	require.NoError(t, err)
	require.Equal(t, lb, cb)
	require.Equal(t, "regtest", cb.Network)
	require.Equal(t, int32(-1), cb.SyncedHeight)

	lt, err := l.Txs(ctx)
	require.NoError(t, err)
	ct, err := c.Txs(ctx)
	require.NoError(t, err)
	require.Equal(t, lt.State, ct.State)
	require.Len(t, ct.Txs, len(lt.Txs))

	la, err := l.Addresses(ctx)
	require.NoError(t, err)
	ca, err := c.Addresses(ctx)
	require.NoError(t, err)
	require.Equal(t, la, ca)

	ls, err := l.Stats(ctx, 5)
	require.NoError(t, err)
	cs, err := c.Stats(ctx, 5)
	require.NoError(t, err)
	require.Equal(t, ls.Stats, cs.Stats)
	require.Equal(t, ls.Counts, cs.Counts)
	require.Equal(t, ls.Descriptors, cs.Descriptors)

	lr, err := l.Truth(ctx)
	require.NoError(t, err)
	cr, err := c.Truth(ctx)
	require.NoError(t, err)
	require.Equal(t, lr.State, cr.State)
	require.Equal(t, lr.Counts, cr.Counts)
	require.Equal(t, lr.SyncedToHeight, cr.SyncedToHeight)

	// receive hands out through the node: the next one, in the node's wallet.
	first, err := c.Receive(ctx, wallet.ReceiveOptions{})
	require.NoError(t, err)
	second, err := l.Receive(ctx, wallet.ReceiveOptions{})
	require.NoError(t, err)
	require.Equal(t, first.Index+1, second.Index)

	// An empty wallet cannot pay: the wallet's refusal is an input error.
	_, err = c.CreatePSBT(ctx, wallet.PSBTRequest{SweepTo: first.Address, FeeRate: 2})
	require.Error(t, err)
	require.True(t, IsInputError(err), "%v", err)

	// No broadcast without a node.
	err = c.Call(ctx, MethodBroadcast, BroadcastParams{Tx: "00"}, nil)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, CodeNoMethod, e.Code)
	require.NotContains(t, c.Status().Methods, MethodBroadcast)
}

// TestCookie checks the cookie: mode 0600, new at every start, required
// (a wrong one is refused with 401), and gone with the address file after
// Close, when Dial finds no node and Open falls back to the files.
func TestCookie(t *testing.T) {
	ctx := context.Background()
	w := newWallet(t)
	cookie := filepath.Join(w.Dir(), CookieFile)
	var seen []string
	for range 2 {
		srv, err := Start(Config{Wallet: w})
		require.NoError(t, err)
		st, err := os.Stat(cookie)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		pw, addr, err := readFiles(w.Dir())
		require.NoError(t, err)
		seen = append(seen, pw)

		wrong, err := newClient(addr, strings.Repeat("0", 64))
		require.NoError(t, err)
		err = wrong.Call(ctx, MethodBalance, nil, nil)
		require.ErrorContains(t, err, "401")
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(`{}`))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

		require.NoError(t, srv.Close())
		require.NoError(t, srv.Close())
		_, err = os.Stat(cookie)
		require.ErrorIs(t, err, os.ErrNotExist)
		_, err = Dial(ctx, w.Dir())
		require.ErrorIs(t, err, ErrNoNode)
	}
	require.NotEqual(t, seen[0], seen[1])
}

// TestStaleAddress checks that an address file a killed node left, naming
// a port nothing listens on, means no node.
func TestStaleAddress(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, writeFiles(dir, "ab", "127.0.0.1:1"))
	_, err := Dial(context.Background(), dir)
	require.ErrorIs(t, err, ErrNoNode)
}

// TestUnixSocket serves on the data dir's socket, mode 0600.
func TestUnixSocket(t *testing.T) {
	w := newWallet(t)
	srv, err := Start(Config{Wallet: w, Listen: ListenUnix})
	if err != nil && strings.Contains(err.Error(), "longer than") {
		t.Skipf("the test's temporary directory is too long for a socket: %v", err)
	}
	require.NoError(t, err)
	defer srv.Close()
	st, err := os.Stat(filepath.Join(w.Dir(), SocketFile))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	c, err := Dial(context.Background(), w.Dir())
	require.NoError(t, err)
	b, err := c.Balance(context.Background())
	require.NoError(t, err)
	require.Equal(t, "regtest", b.Network)
}

// TestCheckListen refuses every address but 127.0.0.1 and the socket.
func TestCheckListen(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:0", "127.0.0.1:8332", "unix"} {
		require.NoError(t, CheckListen(ok), ok)
	}
	for _, bad := range []string{"0.0.0.0:1", ":8332", "localhost:1", "[::1]:1", "10.0.0.1:1", "127.0.0.1", "127.0.0.1:x", "unix:/tmp/s", ""} {
		require.ErrorIs(t, CheckListen(bad), ErrBadListen, bad)
	}
	for remote, want := range map[string]bool{"127.0.0.1:5": true, "10.1.1.1:5": false, "[::1]:5": false, "@": true, "": true} {
		require.Equal(t, want, fromLoopback(remote), remote)
	}
}

// TestBadRequests checks the JSON-RPC errors: not JSON, no version, an
// unknown method, unknown parameters, a browser's Origin.
func TestBadRequests(t *testing.T) {
	w := newWallet(t)
	srv, err := Start(Config{Wallet: w})
	require.NoError(t, err)
	defer srv.Close()
	pw, addr, err := readFiles(w.Dir())
	require.NoError(t, err)
	post := func(body string, origin bool) (int, *Error) {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
		require.NoError(t, err)
		req.SetBasicAuth(CookieUser, pw)
		if origin {
			req.Header.Set("Origin", "http://example.org")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var r struct{ Error *Error }
		_ = json.NewDecoder(resp.Body).Decode(&r)
		return resp.StatusCode, r.Error
	}
	code, e := post(`not json`, false)
	require.Equal(t, 200, code)
	require.Equal(t, CodeParse, e.Code)
	_, e = post(`{"method":"status","id":1}`, false)
	require.Equal(t, CodeInvalidRequest, e.Code)
	_, e = post(`{"jsonrpc":"2.0","method":"nope","id":1}`, false)
	require.Equal(t, CodeNoMethod, e.Code)
	_, e = post(`{"jsonrpc":"2.0","method":"wallet.stats","params":{"bogus":1},"id":1}`, false)
	require.Equal(t, CodeInput, e.Code)
	code, _ = post(`{"jsonrpc":"2.0","method":"status","id":1}`, true)
	require.Equal(t, http.StatusForbidden, code)
	_, e = post(`{"jsonrpc":"2.0","method":"status","id":1}`, false)
	require.Nil(t, e)
}

// TestPSBTParams checks that a request crosses the API whole.
func TestPSBTParams(t *testing.T) {
	req := wallet.PSBTRequest{
		Outputs: []wallet.PSBTOutput{{Address: "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", Amount: 12_345}},
		FeeRate: 2.5, From: "m/84'/1'/0", IncludeUnconfirmed: true, IncludePendingSpent: true,
		Selection: wallet.SelectLargestFirst,
	}
	got, err := psbtParams(req).request()
	require.NoError(t, err)
	require.Equal(t, req, got)
	sweep := wallet.PSBTRequest{SweepTo: "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", FeeRate: 1}
	got, err = psbtParams(sweep).request()
	require.NoError(t, err)
	require.Equal(t, sweep, got)
	_, err = PSBTParams{Selection: "smallest"}.request()
	require.True(t, IsInputError(err))
}

// TestPSBTParamsCarryEveryField fills every field of a wallet.PSBTRequest
// and requires it back from the API's parameters: a field added to the
// request and not to PSBTParams fails here, instead of being dropped on
// the way to a running node.
func TestPSBTParamsCarryEveryField(t *testing.T) {
	var req wallet.PSBTRequest
	v := reflect.ValueOf(&req).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString("bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080")
		case reflect.Float64:
			f.SetFloat(3.5)
		case reflect.Int, reflect.Int64:
			f.SetInt(1) // wallet.SelectLargestFirst
		case reflect.Slice:
			f.Set(reflect.ValueOf([]wallet.PSBTOutput{{Address: "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", Amount: 7}}))
		default:
			require.FailNow(t, fmt.Sprintf("PSBTRequest.%s: a %s field this test does not fill", v.Type().Field(i).Name, f.Kind()))
		}
	}
	require.Equal(t, wallet.SelectLargestFirst, req.Selection)
	got, err := psbtParams(req).request()
	require.NoError(t, err)
	require.Equal(t, req, got)
}

// TestReceiveParamsCarryEveryField does the same for wallet.ReceiveOptions.
func TestReceiveParamsCarryEveryField(t *testing.T) {
	var opts wallet.ReceiveOptions
	v := reflect.ValueOf(&opts).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString("m/84'/1'/0")
		default:
			require.FailNow(t, fmt.Sprintf("ReceiveOptions.%s: a %s field this test does not fill", v.Type().Field(i).Name, f.Kind()))
		}
	}
	require.Equal(t, opts, receiveParams(opts).options())
}
