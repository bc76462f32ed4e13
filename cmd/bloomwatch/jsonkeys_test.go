package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// The JSON convention (docs/JSON.md): an amount carries its unit in its
// key, `_sat` for an integer number of satoshis, `_sat_vb` for a fee rate
// in sat/vB; no key holds BTC. The checks below enforce it on what the
// commands print, and hold every key to the schema file.

// amountWords are the key words that name an amount of bitcoin: a numeric
// key holding one of them must say its unit.
var amountWords = map[string]bool{
	"amount": true, "balance": true, "value": true, "fee": true, "delta": true, "confirmed": true,
	"unconfirmed": true, "immature": true, "spent": true, "total": true, "change": true, "net": true,
	"sat": true, "sats": true, "satoshi": true, "satoshis": true, "btc": true,
}

// notAmounts are keys that hold an amount word and no amount.
var notAmounts = map[string]bool{"p_value": true}

// jsonDocPath is the schema file, relative to this package.
const jsonDocPath = "../../docs/JSON.md"

var (
	schemaOnce sync.Once
	schema     map[string]map[string]string // command -> key path -> unit
	schemaErr  error
)

// loadSchema reads docs/JSON.md: a "## bloomwatch CMD" heading per command
// (a heading may name several, joined by " and "), then table rows
// "| `path` | type | unit | meaning |".
func loadSchema() (map[string]map[string]string, error) {
	schemaOnce.Do(func() {
		f, err := os.Open(jsonDocPath)
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		schema = map[string]map[string]string{}
		row := regexp.MustCompile("^\\| `([^`]+)` \\| [^|]+ \\| ([^|]*) \\|")
		var cur []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "## ") {
				cur = nil
				for _, c := range strings.Split(strings.TrimPrefix(line, "## "), " and ") {
					c = strings.Trim(strings.TrimSpace(c), "`")
					if strings.HasPrefix(c, "bloomwatch ") {
						cur = append(cur, c)
						if schema[c] == nil {
							schema[c] = map[string]string{}
						}
					}
				}
				continue
			}
			if m := row.FindStringSubmatch(line); m != nil {
				for _, c := range cur {
					schema[c][m[1]] = strings.TrimSpace(m[2])
				}
			}
		}
		schemaErr = sc.Err()
	})
	return schema, schemaErr
}

// jsonKey is one key of a printed document: its path (array elements as
// "[]", nested keys joined by ".") and the values seen under it.
type jsonKey struct {
	path   string
	name   string
	values []any
}

// collectKeys walks a decoded document (numbers as json.Number).
func collectKeys(v any, prefix string, into map[string]*jsonKey) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			key := into[p]
			if key == nil {
				key = &jsonKey{path: p, name: k}
				into[p] = key
			}
			key.values = append(key.values, sub)
			collectKeys(sub, p, into)
		}
	case []any:
		for _, sub := range x {
			collectKeys(sub, prefix+"[]", into)
		}
	}
}

// jsonType names the JSON type of values (the first that is not null).
func jsonType(values []any) string {
	for _, v := range values {
		switch x := v.(type) {
		case json.Number:
			if strings.ContainsAny(x.String(), ".eE") {
				return "number"
			}
			return "integer"
		case string:
			return "string"
		case bool:
			return "bool"
		case map[string]any:
			return "object"
		case []any:
			return "array"
		}
	}
	return "null"
}

// amountViolation returns why key breaks the convention, or "".
func amountViolation(key *jsonKey) string {
	name := key.name
	for _, v := range key.values {
		n, isNum := v.(json.Number)
		switch {
		case strings.HasSuffix(name, "_sat_vb"):
			if v != nil && !isNum {
				return "a fee rate in sat/vB must be a number"
			}
		case strings.HasSuffix(name, "_sat"):
			if v == nil {
				continue
			}
			if !isNum || strings.ContainsAny(n.String(), ".eE") {
				return "a _sat key must hold an integer number of satoshis"
			}
		case isNum && !notAmounts[name]:
			for _, w := range strings.Split(name, "_") {
				if amountWords[w] {
					return "a numeric key naming an amount (" + w + ") must end in _sat (or _sat_vb for a fee rate)"
				}
			}
		}
	}
	if strings.Contains(name, "btc") {
		return "no key holds BTC: amounts are in satoshis"
	}
	return ""
}

// checkJSONKeys decodes out, a command's --json output (one document, or
// one per line), and fails on an amount key that does not follow the
// convention and on a key docs/JSON.md does not list for command (its
// cobra command path, e.g. "bloomwatch wallet balance").
func checkJSONKeys(t *testing.T, command string, out []byte) {
	t.Helper()
	sch, err := loadSchema()
	require.NoError(t, err, "read %s", jsonDocPath)
	documented, ok := sch[command]
	require.True(t, ok, "%s has no section in docs/JSON.md", command)
	keys := map[string]*jsonKey{}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	docs := 0
	for dec.More() {
		var v any
		require.NoError(t, dec.Decode(&v), "%s: output is not JSON: %.300s", command, out)
		collectKeys(v, "", keys)
		docs++
	}
	require.Positive(t, docs, "%s printed no JSON", command)
	paths := make([]string, 0, len(keys))
	for p := range keys {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		why := amountViolation(keys[p])
		require.Equal(t, "", why, "%s --json: key %q: %s", command, p, why)
		unit, ok := documented[p]
		require.True(t, ok, "%s --json: key %q (%s) is not in docs/JSON.md", command, p, jsonType(keys[p].values))
		require.Equal(t, (unit == "sat"), strings.HasSuffix(keys[p].name, "_sat"), "%s --json: key %q is documented with unit %q", command, p, unit)
	}
}

// jsonCheckedElsewhere names the --json outputs that need running nodes,
// and the test that holds them to checkJSONKeys.
var jsonCheckedElsewhere = map[string]string{
	"bloomwatch sync":      "TestSyncEndToEnd (runSyncJSON)",
	"bloomwatch demo":      "TestPrivacyModelOnDemoTranscript",
	"bloomwatch broadcast": "TestWalletPSBTAndBroadcastEndToEnd",
	"bloomwatch demo pay":  "TestDeveloperLoop",
	"bloomwatch demo mine": "TestDeveloperLoop",
}

// TestJSONConventionEveryCommand runs every command that has --json and
// needs no node against test wallets and files, and checks each output
// with checkJSONKeys; it fails when a command with --json is neither run
// here nor named in jsonCheckedElsewhere.
func TestJSONConventionEveryCommand(t *testing.T) {
	root := t.TempDir()
	// A wallet with a confirmed coin and an unconfirmed payment (txs,
	// utxos, balance), and one of the keyring with a coin to spend (psbt).
	w := filepath.Join(root, "w")
	checkJSONKeys(t, "bloomwatch wallet create", []byte(mustRun(t, createArgs(w, "--json"))))
	fundWallet(t, w)
	spend := newSpendFixture(t, root)
	pfx := newPrivacyFixture(t)
	added, desc := filepath.Join(root, "added"), filepath.Join(root, "desc")
	tpub := testTpub(t)
	addrs := filepath.Join(root, "addrs.txt")
	var others []string
	for _, b := range []byte{1, 2} {
		a, err := btcutil.NewAddressWitnessPubKeyHash(bytes.Repeat([]byte{b}, 20), &chaincfg.RegressionNetParams)
		require.NoError(t, err)
		others = append(others, a.EncodeAddress())
	}
	require.NoError(t, os.WriteFile(addrs, []byte(strings.Join(others, "\n")+"\n"), 0o600))
	filterHex := strings.TrimSpace(mustRun(t, withElements("filter", "build", "--fp", "0.01", "--tweak", "0")))

	cases := [][]string{
		createArgsAt(added, "--address", testTestP2PKH, "--json"),
		{"wallet", "add", "--datadir", added, "--addresses-file", addrs, "--json"},
		{"wallet", "add", "--datadir", added, "--xpub", testVpub, "--json"},
		createArgsAt(desc, "--descriptor", "wpkh([73c5da0a/84h/1h/0h]"+tpub+"/0/*)", "--json"),
		{"wallet", "add", "--datadir", desc, "--descriptor", "wpkh([73c5da0a/84h/1h/0h]" + tpub + "/1/*)", "--json"},
		{"wallet", "stats", "--datadir", desc, "--json"},
		{"wallet", "balance", "--datadir", w, "--json"},
		{"wallet", "txs", "--datadir", w, "--json"},
		{"wallet", "utxos", "--datadir", w, "--json"},
		{"wallet", "addresses", "--datadir", w, "--json"},
		{"wallet", "stats", "--datadir", w, "--json"},
		{"wallet", "receive", "--datadir", w, "--json"},
		{"wallet", "psbt", "--datadir", spend.dir, "--to", testReceive0 + ":0.001", "--feerate", "2", "--json"},
		{"wallet", "psbt", "--datadir", spend.dir, "--sweep", testReceive0, "--feerate", "2", "--json"},
		{"wallet", "psbt", "--datadir", spend.dir, "--to", testReceive0 + ":0.001", "--feerate", "2", "--dry-run", "--json"},
		withElements("filter", "build", "--json", "--fp", "0.01", "--tweak", "0"),
		{"filter", "match", "--json", "--filter", filterHex, "--outpoint", strings.Repeat("ab", 32) + ":0", coreElements[0]},
		{"merkleblock", "verify", "--json", coreMerkleBlock3},
		{"privacy", "analyze", "--transcript", pfx.transcript, "--universe", pfx.universe, "--truth", pfx.truth, "--json"},
		{"privacy", "experiment", "bitcoinj-sizing", "--json"},
		{"privacy", "experiment", "saturation", "--json", "--universe", "100000", "--trials", "2", "--blocks", "200"},
		{"privacy", "scan", "--synthetic", "2000", "--filter", pfx.filterHex, "--json", "--workers", "1"},
		{"privacy", "export-universe", "--synthetic", "100", "--out", filepath.Join(root, "u.txt"), "--progress", "none", "--json"},
	}
	rootCmd := newRootCmd()
	covered := map[string]bool{}
	for _, args := range cases {
		cmd, _, err := rootCmd.Find(args)
		require.NoError(t, err, "%v", args)
		command := cmd.CommandPath()
		covered[command] = true
		t.Run(strings.Join(args[:2], " ")+" "+args[len(args)-1], func(t *testing.T) {
			code, out, errOut := runCLI(t, args)
			require.Zero(t, code, "%v: %s", args, errOut)
			checkJSONKeys(t, command, []byte(out))
		})
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		require.False(t, c.Runnable() && c.Flags().Lookup("json") != nil && !covered[c.CommandPath()] && jsonCheckedElsewhere[c.CommandPath()] == "", "%s has --json but no case in TestJSONConventionEveryCommand", c.CommandPath())
	}
	walk(rootCmd)
}

// mustRun runs args and returns stdout, failing on a non-zero exit.
func mustRun(t *testing.T, args []string) string {
	t.Helper()
	code, out, errOut := runCLI(t, args)
	require.Zero(t, code, "%v: %s", args, errOut)
	return out
}

// TestAmountViolation holds the checker to the cases it must tell apart.
func TestAmountViolation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		bad   bool
	}{
		{"confirmed", json.Number("5000"), true},
		{"amount", json.Number("1"), true},
		{"fee_rate", json.Number("2.5"), true},
		{"total", json.Number("0"), true},
		{"amount_btc", json.Number("0.1"), true},
		{"balance_sat", json.Number("0.5"), true},
		{"balance_sat", "5000", true},
		{"confirmed_sat", json.Number("5000"), false},
		{"fee_rate_sat_vb", json.Number("2.5"), false},
		{"confirmed_by", "127.0.0.1:18444", false},
		{"confirmations", json.Number("3"), false},
		{"bytes_received", json.Number("100"), false},
		{"p_value", json.Number("0.04"), false},
	} {
		got := amountViolation(&jsonKey{name: tc.name, values: []any{tc.value}})
		require.Equal(t, tc.bad, got != "", "%s = %v: %q", tc.name, tc.value, got)
	}
}
