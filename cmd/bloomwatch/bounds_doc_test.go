package main

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// TestLocalInputBoundsTable holds docs/RELIABILITY.md's table of the
// command line's bounds to bounds, and bounds to the source (every max*
// constant of the package, each once); -update rewrites the table.
func TestLocalInputBoundsTable(t *testing.T) {
	doctabletest.Check(t, "cmd/bloomwatch", bounds)
}

// TestTruthFileBound hands privacy analyze a --truth file above
// maxTruthFileBytes, as a sparse file and as a pipe: one line that names
// the flag, the file and the bound, exit 2, nothing on stdout.
func TestTruthFileBound(t *testing.T) {
	dir := t.TempDir()
	tr := writeFilterTranscript(t, dir)
	big := filepath.Join(dir, "truth.txt")
	sparseFile(t, big, maxTruthFileBytes+1)
	code, out, errOut := runCLI(t, []string{"privacy", "analyze", "--transcript", tr, "--synthetic", "10", "--truth", big})
	require.Equal(t, 2, code, errOut)
	require.Empty(t, out)
	require.Equal(t, "bloomwatch: privacy analyze: --truth: file above its size bound: "+big+
		" is 67108865 bytes, above maxTruthFileBytes (67108864 bytes)\n", errOut)

	// A file whose size is not known is refused once it passes the
	// bound: /dev/zero is one endless line, so a file of short lines
	// through a pipe stands for it.
	fifo := filepath.Join(dir, "truth.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		line := []byte("# " + strings.Repeat("x", 1021) + "\n")
		for written := 0; written <= maxTruthFileBytes; written += len(line) {
			if _, err := f.Write(line); err != nil {
				return
			}
		}
	}()
	code, out, errOut = runCLI(t, []string{"privacy", "analyze", "--transcript", tr, "--synthetic", "10", "--truth", fifo})
	require.Equal(t, 2, code, errOut)
	require.Empty(t, out)
	require.Equal(t, "bloomwatch: privacy analyze: --truth: file above its size bound: "+fifo+
		" holds more than maxTruthFileBytes (67108864 bytes)\n", errOut)
}

// writeFilterTranscript writes a transcript of one filterload into dir
// and returns its path.
func writeFilterTranscript(t *testing.T, dir string) string {
	t.Helper()
	code, out, errOut := runCLI(t, []string{"filter", "build", "00"})
	require.Zero(t, code, errOut)
	raw, err := hex.DecodeString(strings.TrimSpace(out))
	require.NoError(t, err)
	var tb bytes.Buffer
	require.NoError(t, transcript.Write(&tb, transcript.Record{V: 2, Seq: 1, Peer: "127.0.0.1:1", Kind: transcript.KindFilterLoad, Filter: raw}))
	path := filepath.Join(dir, "transcript.jsonl")
	require.NoError(t, os.WriteFile(path, tb.Bytes(), 0o600))
	return path
}

// bounds lists every max* constant of the package, each once;
// TestLocalInputBoundsTable checks against the source that none is
// missing.
var bounds = []doctable.Bound{
	{Name: "maxConfigFileBytes", Value: maxConfigFileBytes, Unit: "bytes", Protects: "the data dir's `bloomwatch.conf`, read whole"},
	{Name: "maxPSBTFileBytes", Value: maxPSBTFileBytes, Unit: "bytes", Protects: "`broadcast --psbt FILE`, read whole"},
	{Name: "maxTruthFileBytes", Value: maxTruthFileBytes, Unit: "bytes", Protects: "`privacy analyze --truth FILE`, held whole"},
}
