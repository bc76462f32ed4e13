package spv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
)

// readTranscript reads the privacy transcript of a data dir.
func readTranscript(t testing.TB, dir string) []privacy.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, spv.TranscriptFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := privacy.ReadTranscript(f)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
