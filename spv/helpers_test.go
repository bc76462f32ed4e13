package spv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// readTranscript reads the privacy transcript of a data dir.
func readTranscript(t testing.TB, dir string) []transcript.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, transcript.FileName))
	require.NoError(t, err)
	defer f.Close()
	recs, err := transcript.Read(f)
	require.NoError(t, err)
	return recs
}
