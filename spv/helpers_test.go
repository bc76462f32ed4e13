package spv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/transcript"
)

// readTranscript reads the privacy transcript of a data dir.
func readTranscript(t testing.TB, dir string) []transcript.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := transcript.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
