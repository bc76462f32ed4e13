package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/progress/ptytest"
)

// jsonDoc is a document with a nested value, so indentation shows.
var jsonDoc = map[string]any{"balance_sat": 5000, "txs": []map[string]any{{"txid": "ab", "height": 7}}}

// TestWriteJSONCompactForPrograms holds --json output to one compact line
// ending in a newline when stdout is a pipe or any other writer that is no
// terminal: a script reads it, and it decodes to the same document.
func TestWriteJSONCompactForPrograms(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := &cobra.Command{}
	cmd.SetOut(w)
	require.NoError(t, writeJSON(cmd, jsonDoc))
	require.NoError(t, w.Close())
	piped, err := io.ReadAll(r)
	require.NoError(t, err)

	var buf bytes.Buffer
	cmd.SetOut(&buf)
	require.NoError(t, writeJSON(cmd, jsonDoc))
	for _, out := range [][]byte{piped, buf.Bytes()} {
		s := string(out)
		require.Equal(t, 1, strings.Count(s, "\n"), "%q: want one line", s)
		require.True(t, strings.HasSuffix(s, "}\n"), "%q", s)
		require.NotContains(t, s, "  ", "%q: want no indentation", s)
		var got map[string]any
		require.NoError(t, json.Unmarshal(out, &got), "%q", s)
		require.Equal(t, float64(5000), got["balance_sat"], "%q", s)
	}
}

// TestWriteJSONIndentedOnTerminal holds --json output to an indented
// document when stdout is a terminal: the slave side of a new
// pseudo-terminal, read back from its master.
func TestWriteJSONIndentedOnTerminal(t *testing.T) {
	master, slave := ptytest.Open(t)

	cmd := &cobra.Command{}
	cmd.SetOut(slave)
	require.NoError(t, writeJSON(cmd, jsonDoc))
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(jsonDoc))

	// The terminal turns each newline into CR LF on its way out; a
	// document ends in "}" and a newline either way.
	got := make([]byte, 0, want.Len()*2)
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte("}\r\n")) {
		k, err := master.Read(buf)
		require.NoError(t, err, "read the terminal after %q", got)
		got = append(got, buf[:k]...)
	}
	require.Equal(t, want.String(), string(bytes.ReplaceAll(got, []byte("\r\n"), []byte("\n"))))
	require.Contains(t, want.String(), "\n  \"balance_sat\": 5000,\n")
}
